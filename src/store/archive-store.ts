// The archive store area's interface: per-run archival records (the positions a run's archive must
// cover, its contiguous watermarks, the snapshot written before removal, the archiver's claim),
// the chunks stored for it, per-tenant retention overrides and storage figures. It never stores a
// chunk's bytes (those live in the artifact store) and never derives a watermark from anything but
// the recorded chunks.

export type ArchiveStream = 'journal' | 'events';
export const ARCHIVE_STREAMS: readonly ArchiveStream[] = ['journal', 'events'];

/** One run's archival state. Positions are inclusive; -1 means "none". */
export interface RunArchiveRecord {
  runId: string;
  tenantId: string;
  /** The highest position of each stream when archival began (the run had ended: it no longer grows). */
  journalLast: number;
  eventsLast: number;
  /** Highest position p such that every position up to p is in a recorded, verified chunk. */
  journalWatermark: number;
  eventsWatermark: number;
  /** The run's final state, stored before any live row was removed; null until written. */
  snapshotSha256: string | null;
  claimOwner: string | null;
  claimToken: number;
  claimExpiresAt: number | null;
  journalPruned: number;
  eventsPruned: number;
  createdAt: number;
  /** When every position was archived and removed from the live tables; null until then. */
  prunedAt: number | null;
}

export interface ArchiveChunkRecord {
  runId: string;
  stream: ArchiveStream;
  firstSeq: number;
  lastSeq: number;
  sha256: string;
  bytes: number;
  records: number;
}

/** Retention: completed runs older than `keepDays`, or beyond the newest `keepRuns`, are due. */
export interface RetentionPolicy {
  keepDays: number | null;
  keepRuns: number | null;
}

export interface DueRunsQuery {
  tenantId: string;
  /** Runs ended before this instant are due (day retention); null: no day limit. */
  endedBefore: number | null;
  /** Keep the newest this many ended runs (count retention); null: no count limit. */
  keepRuns: number | null;
  now: number;
  limit: number;
}

export interface TenantStorage {
  tenantId: string;
  journalBytes: number;
  eventsBytes: number;
  archiveBytes: number;
  /** Large payloads (0039) the tenant's runs reference, by reference. */
  payloadBytes: number;
  archivedRuns: number;
}

export interface PruneOutcome {
  journalPruned: number;
  eventsPruned: number;
  /** Every position was archived and removed: the run is archived. */
  complete: boolean;
}

export interface ArchiveStore {
  /** Ended runs due under the policy, not archived yet and not claimed by a live archiver. */
  dueRuns(query: DueRunsQuery): Promise<Array<{ runId: string; endedAt: number }>>;
  /**
   * Claims a run's archival (opening its record if needed) for `leaseMs`; null when another
   * archiver holds it, or it is archived already.
   */
  claimArchival(
    runId: string,
    tenantId: string,
    owner: string,
    leaseMs: number,
  ): Promise<RunArchiveRecord | null>;
  /** Records what the archive must cover and the snapshot written before removal (fenced). */
  setArchiveExtent(
    runId: string,
    token: number,
    extent: { journalLast: number; eventsLast: number; snapshotSha256: string },
  ): Promise<void>;
  /**
   * Records a chunk stored and verified in the artifact store, then recomputes the watermarks from
   * all recorded chunks (fenced). Returns the record with its new watermarks.
   */
  recordChunk(
    token: number,
    chunk: Omit<ArchiveChunkRecord, 'bytes'> & { bytes: number },
  ): Promise<RunArchiveRecord>;
  /**
   * Removes live journal entries and events up to the watermarks (never past them), once the
   * snapshot is written and the run is still ended; frees the claim (fenced).
   */
  pruneArchived(runId: string, token: number): Promise<PruneOutcome>;
  getArchive(runId: string): Promise<RunArchiveRecord | null>;
  listChunks(runId: string): Promise<ArchiveChunkRecord[]>;
  getRetention(tenantId: string): Promise<RetentionPolicy | null>;
  putRetention(tenantId: string, policy: RetentionPolicy): Promise<RetentionPolicy>;
  deleteRetention(tenantId: string): Promise<boolean>;
  storageByTenant(): Promise<TenantStorage[]>;
}

/**
 * The highest position p such that chunks cover every position from 0 to p without a gap (-1 when
 * the chunk at position 0 is missing). Chunks of one stream; order does not matter.
 * @example
 * contiguousWatermark([{ firstSeq: 0, lastSeq: 9 }, { firstSeq: 20, lastSeq: 29 }]) // 9
 */
export function contiguousWatermark(
  chunks: ReadonlyArray<{ firstSeq: number; lastSeq: number }>,
): number {
  const sorted = [...chunks].sort((a, b) => a.firstSeq - b.firstSeq);
  let watermark = -1;
  for (const chunk of sorted) {
    if (chunk.firstSeq > watermark + 1) break;
    watermark = Math.max(watermark, chunk.lastSeq);
  }
  return watermark;
}
