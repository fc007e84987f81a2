// The archiver: a background loop (one per process) that applies each tenant's retention policy to
// its ended runs: writes the run's snapshot, stores its journal and events in verified gzip chunks
// in the artifact store, records each chunk, and removes live rows only up to the contiguous
// watermark derived from the recorded chunks. A chunk that fails leaves a gap that the next pass
// finds (missing from the recorded ranges) and sends again. Every step is idempotent: a process
// killed anywhere leaves a state the next pass (here or in another process) completes. It never
// removes a position no verified chunk covers. Each pass also collects the large payloads no run
// references any more, and the chunks of uploads that never sealed.
import { crashPoint } from '../domain/crash-points.ts';
import type { Clock } from '../domain/clock.ts';
import type { JournalEntry, RunEventRecord } from '../domain/records.ts';
import type {
  ArchiveStore,
  ArchiveStream,
  RetentionPolicy,
  RunArchiveRecord,
} from '../store/archive-store.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import type { Store } from '../store/store.ts';
import type { KeelMetrics } from '../telemetry/metrics.ts';
import {
  ARCHIVE_CHUNK_POSITIONS_DEFAULT,
  chunkRanges,
  chunkRef,
  decodeSnapshot,
  encode,
  snapshotRef,
} from './archive-chunks.ts';

export const DAY_MS = 24 * 60 * 60 * 1000;
/** Runs one pass archives per tenant at most (the next pass takes the rest). */
export const ARCHIVE_RUNS_PER_PASS_MAX = 50;
/** How long a claim on a run's archival lasts; a killed archiver's run is free again after it. */
export const ARCHIVE_CLAIM_LEASE_MS = 5 * 60 * 1000;
/**
 * How long a payload no run references, or a chunk of an upload that never sealed, is kept before a
 * pass collects it. A writer reusing or finishing one touches it (its seal, a chunk written again),
 * so only what nobody has touched for this long goes.
 */
export const PAYLOAD_COLLECT_GRACE_MS = 60 * 60 * 1000;
const EVENTS_PAGE = 1000;

export interface ArchiverOptions {
  store: Pick<
    Store,
    'getRun' | 'loadJournal' | 'listEvents' | 'listTenants' | 'collectUnreferencedPayloads'
  >;
  archives: ArchiveStore;
  artifacts: ArtifactStore;
  clock: Clock;
  /** This process's name on claims. */
  owner: string;
  /** The platform default policy; a tenant's override (ArchiveStore.getRetention) replaces it. */
  defaults: RetentionPolicy;
  chunkPositions?: number;
  intervalMs: number;
  metrics?: Pick<
    KeelMetrics,
    'storageBytes' | 'archiveRows' | 'archiveChunkFailures' | 'archiveLag' | 'payloadsCollected'
  >;
  log?: (level: 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export interface PassReport {
  runsArchived: number;
  runsIncomplete: number;
  chunksStored: number;
  chunkFailures: number;
  rowsPruned: number;
  /** Large payloads no run referenced any more, deleted by this pass. */
  payloadsCollected: number;
}

/** The policy in force for a tenant: its override where set, else the platform default. */
export async function retentionOf(
  archives: ArchiveStore,
  tenantId: string,
  defaults: RetentionPolicy,
): Promise<RetentionPolicy> {
  return (await archives.getRetention(tenantId)) ?? defaults;
}

export class Archiver {
  readonly #o: ArchiverOptions;
  readonly #chunkPositions: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(options: ArchiverOptions) {
    this.#o = options;
    this.#chunkPositions = options.chunkPositions ?? ARCHIVE_CHUNK_POSITIONS_DEFAULT;
  }

  /** Runs a pass every `intervalMs` (paced by Node's timers: the clock only decides what is due). */
  start(): void {
    const again = (): void => {
      if (this.#stopped) return;
      this.#running = this.pass()
        .catch((error) => this.#o.log?.('error', 'archiver pass failed', { err: error }))
        .finally(() => {
          if (this.#stopped) return;
          this.#timer = setTimeout(again, this.#o.intervalMs);
          this.#timer.unref();
        });
    };
    this.#timer = setTimeout(again, this.#o.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /**
   * One pass over every tenant: archives the runs due, collects the payloads nothing references,
   * then measures storage.
   */
  async pass(): Promise<PassReport> {
    const report: PassReport = {
      runsArchived: 0,
      runsIncomplete: 0,
      chunksStored: 0,
      chunkFailures: 0,
      rowsPruned: 0,
      payloadsCollected: 0,
    };
    const now = this.#o.clock.now();
    let oldestDue: number | null = null;
    for (const tenant of await this.#o.store.listTenants()) {
      const policy = await retentionOf(this.#o.archives, tenant.id, this.#o.defaults);
      if (policy.keepDays === null && policy.keepRuns === null) continue;
      const due = await this.#o.archives.dueRuns({
        tenantId: tenant.id,
        endedBefore: policy.keepDays === null ? null : now - policy.keepDays * DAY_MS,
        keepRuns: policy.keepRuns,
        now,
        limit: ARCHIVE_RUNS_PER_PASS_MAX,
      });
      if (due[0] !== undefined) oldestDue = Math.min(oldestDue ?? Infinity, due[0].endedAt);
      for (const { runId } of due) await this.archiveRun(runId, tenant.id, report);
    }
    this.#o.metrics?.archiveLag.set(oldestDue === null ? 0 : Math.max(0, now - oldestDue) / 1000);
    const collected = await this.#o.store.collectUnreferencedPayloads(
      now - PAYLOAD_COLLECT_GRACE_MS,
    );
    report.payloadsCollected = collected.length;
    this.#o.metrics?.payloadsCollected.inc(collected.length);
    await this.#measure();
    return report;
  }

  /**
   * Archives one run if its claim is free: snapshot, missing chunks, prune up to the watermarks.
   */
  async archiveRun(runId: string, tenantId: string, report: PassReport): Promise<void> {
    const { archives } = this.#o;
    const claim = await archives.claimArchival(
      runId,
      tenantId,
      this.#o.owner,
      ARCHIVE_CLAIM_LEASE_MS,
    );
    if (claim === null) return;
    const extent = await this.#extent(claim);
    if (extent === null) return;
    const recorded = await archives.listChunks(runId);
    const data = await this.#liveRows(runId);
    for (const stream of ['journal', 'events'] as const) {
      const last = stream === 'journal' ? extent.journalLast : extent.eventsLast;
      for (const range of chunkRanges(last, extent.chunkPositions)) {
        const done = recorded.some(
          (c) =>
            c.stream === stream && c.firstSeq === range.firstSeq && c.lastSeq === range.lastSeq,
        );
        if (done) continue;
        const stored = await this.#storeChunk(claim, stream, range, data[stream]);
        if (stored) report.chunksStored++;
        else report.chunkFailures++;
      }
    }
    crashPoint('archive.before-prune');
    const outcome = await archives.pruneArchived(runId, claim.claimToken);
    report.rowsPruned += outcome.journalPruned + outcome.eventsPruned;
    this.#o.metrics?.archiveRows.inc(
      { stream: 'journal', action: 'pruned' },
      outcome.journalPruned,
    );
    this.#o.metrics?.archiveRows.inc({ stream: 'events', action: 'pruned' }, outcome.eventsPruned);
    if (outcome.complete) report.runsArchived++;
    else report.runsIncomplete++;
  }

  /**
   * The positions the archive covers, from the snapshot already written, or by writing it now: the
   * snapshot is stored (and referenced) before any live row can be removed.
   */
  async #extent(
    claim: RunArchiveRecord,
  ): Promise<{ journalLast: number; eventsLast: number; chunkPositions: number } | null> {
    const { artifacts } = this.#o;
    if (claim.snapshotSha256 !== null) {
      const snapshot = decodeSnapshot(await artifacts.get(claim.snapshotSha256));
      return snapshot;
    }
    const run = await this.#o.store.getRun(claim.runId);
    if (run === null || run.endedAt === null) return null;
    const journal = await this.#o.store.loadJournal(claim.runId);
    const events = await this.#allEvents(claim.runId);
    const snapshot = {
      version: 1 as const,
      run,
      journalLast: journal.at(-1)?.seq ?? -1,
      eventsLast: events.at(-1)?.seq ?? -1,
      chunkPositions: this.#chunkPositions,
      writtenAt: this.#o.clock.now(),
    };
    const sha256 = await artifacts.put(encode(snapshot));
    await artifacts.setRef(snapshotRef(claim.runId), sha256);
    await this.#o.archives.setArchiveExtent(claim.runId, claim.claimToken, {
      journalLast: snapshot.journalLast,
      eventsLast: snapshot.eventsLast,
      snapshotSha256: sha256,
    });
    return snapshot;
  }

  async #liveRows(runId: string): Promise<{ journal: JournalEntry[]; events: RunEventRecord[] }> {
    return {
      journal: await this.#o.store.loadJournal(runId),
      events: await this.#allEvents(runId),
    };
  }

  async #allEvents(runId: string): Promise<RunEventRecord[]> {
    const events: RunEventRecord[] = [];
    for (;;) {
      const page = await this.#o.store.listEvents(runId, events.at(-1)?.seq ?? -1, EVENTS_PAGE);
      events.push(...page);
      if (page.length < EVENTS_PAGE) return events;
    }
  }

  /**
   * Stores one chunk, reads it back to verify it, references it, then records it. A failure leaves
   * the range unrecorded (a gap below which the watermark stays) for a later pass.
   */
  async #storeChunk(
    claim: RunArchiveRecord,
    stream: ArchiveStream,
    range: { firstSeq: number; lastSeq: number },
    rows: ReadonlyArray<JournalEntry | RunEventRecord>,
  ): Promise<boolean> {
    const { artifacts } = this.#o;
    const records = rows.filter((r) => r.seq >= range.firstSeq && r.seq <= range.lastSeq);
    try {
      const bytes = encode({ version: 1, runId: claim.runId, stream, ...range, records });
      const sha256 = await artifacts.put(bytes);
      await artifacts.get(sha256); // verified against its name: throws when absent or corrupt
      await artifacts.setRef(chunkRef(claim.runId, stream, range.firstSeq), sha256);
      crashPoint('archive.chunk-stored');
      await this.#o.archives.recordChunk(claim.claimToken, {
        runId: claim.runId,
        stream,
        ...range,
        sha256,
        bytes: bytes.length,
        records: records.length,
      });
      this.#o.metrics?.archiveRows.inc({ stream, action: 'archived' }, records.length);
      return true;
    } catch (error) {
      this.#o.metrics?.archiveChunkFailures.inc();
      this.#o.log?.('warn', 'archive chunk not stored; the next pass sends it again', {
        runId: claim.runId,
        stream,
        firstSeq: range.firstSeq,
        err: error,
      });
      return false;
    }
  }

  async #measure(): Promise<void> {
    const gauge = this.#o.metrics?.storageBytes;
    if (gauge === undefined) return;
    for (const row of await this.#o.archives.storageByTenant()) {
      gauge.set({ tenant: row.tenantId, kind: 'journal' }, row.journalBytes);
      gauge.set({ tenant: row.tenantId, kind: 'events' }, row.eventsBytes);
      gauge.set({ tenant: row.tenantId, kind: 'archive' }, row.archiveBytes);
      gauge.set({ tenant: row.tenantId, kind: 'payloads' }, row.payloadBytes);
    }
  }
}
