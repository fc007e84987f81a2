// Reading an archived run back: its journal and events merged from the recorded chunks and what
// is still live (positions past a watermark stay live until archived), and a restore that rebuilds
// a run from the artifact store alone, reporting `incomplete` when a chunk is missing. It never
// writes.
import type { JournalEntry, RunEventRecord, RunRecord } from '../domain/records.ts';
import type { ArchiveStore, ArchiveStream, RunArchiveRecord } from '../store/archive-store.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import {
  chunkRanges,
  chunkRef,
  decodeChunk,
  decodeSnapshot,
  snapshotRef,
} from './archive-chunks.ts';

/** How a run stands in the archive, for its views. */
export interface ArchiveMark {
  /** Some of its live rows were removed: reads come (partly) from the archive. */
  archived: boolean;
  /** Every position is in a recorded, verified chunk. */
  complete: boolean;
}

export function archiveMark(record: RunArchiveRecord | null): ArchiveMark | null {
  if (record === null || record.journalPruned + record.eventsPruned === 0) return null;
  return {
    archived: true,
    complete:
      record.journalWatermark >= record.journalLast && record.eventsWatermark >= record.eventsLast,
  };
}

export class ArchiveReader {
  readonly #archives: ArchiveStore;
  readonly #artifacts: ArtifactStore;

  constructor(archives: ArchiveStore, artifacts: ArtifactStore) {
    this.#archives = archives;
    this.#artifacts = artifacts;
  }

  mark(runId: string): Promise<ArchiveMark | null> {
    return this.#archives.getArchive(runId).then(archiveMark);
  }

  /**
   * The records of a stream read from the recorded chunks (only chunks at or below the watermark are
   * trusted to stand in for removed rows; live rows cover the rest).
   */
  async archived(
    runId: string,
    stream: ArchiveStream,
  ): Promise<Array<JournalEntry | RunEventRecord>> {
    const chunks = (await this.#archives.listChunks(runId)).filter((c) => c.stream === stream);
    const records = [];
    for (const chunk of chunks) {
      records.push(...decodeChunk(await this.#artifacts.get(chunk.sha256)).records);
    }
    return records;
  }

  /** The whole journal: archived entries and live ones, by position. */
  async journal(runId: string, live: JournalEntry[]): Promise<JournalEntry[]> {
    return merge((await this.archived(runId, 'journal')) as JournalEntry[], live);
  }

  /** Events after `after`, at most `limit`: archived and live, by position. */
  async events(
    runId: string,
    live: RunEventRecord[],
    after: number,
    limit: number,
  ): Promise<RunEventRecord[]> {
    const archived = (await this.archived(runId, 'events')) as RunEventRecord[];
    return merge(archived, live)
      .filter((e) => e.seq > after)
      .slice(0, limit);
  }
}

function merge<T extends { seq: number }>(archived: T[], live: T[]): T[] {
  const bySeq = new Map<number, T>();
  for (const record of archived) bySeq.set(record.seq, record);
  for (const record of live) bySeq.set(record.seq, record);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

export interface RestoredRun {
  status: 'complete' | 'incomplete';
  run: RunRecord;
  journal: JournalEntry[];
  events: RunEventRecord[];
  /** Chunks the snapshot expects that the artifact store does not hold (or holds corrupt). */
  missing: Array<{ stream: ArchiveStream; firstSeq: number; lastSeq: number }>;
}

/**
 * Rebuilds a run from the artifact store alone (its snapshot and chunk references, no database
 * row): `incomplete` with the missing ranges when a chunk is absent or corrupt. Null when the run
 * has no snapshot.
 */
export async function restoreFromArchive(
  artifacts: ArtifactStore,
  runId: string,
): Promise<RestoredRun | null> {
  const snapshotSha = await artifacts.getRef(snapshotRef(runId));
  if (snapshotSha === undefined) return null;
  const snapshot = decodeSnapshot(await artifacts.get(snapshotSha));
  const restored: RestoredRun = {
    status: 'complete',
    run: snapshot.run,
    journal: [],
    events: [],
    missing: [],
  };
  for (const stream of ['journal', 'events'] as const) {
    const last = stream === 'journal' ? snapshot.journalLast : snapshot.eventsLast;
    for (const range of chunkRanges(last, snapshot.chunkPositions)) {
      const records = await readChunk(artifacts, chunkRef(runId, stream, range.firstSeq));
      if (records === null) restored.missing.push({ stream, ...range });
      else if (stream === 'journal') restored.journal.push(...(records as JournalEntry[]));
      else restored.events.push(...(records as RunEventRecord[]));
    }
  }
  if (restored.missing.length > 0) restored.status = 'incomplete';
  return restored;
}

async function readChunk(
  artifacts: ArtifactStore,
  ref: string,
): Promise<Array<JournalEntry | RunEventRecord> | null> {
  const sha256 = await artifacts.getRef(ref);
  if (sha256 === undefined) return null;
  try {
    return decodeChunk(await artifacts.get(sha256)).records;
  } catch {
    return null; // absent or corrupt: the range is missing
  }
}
