// A run's snapshot: the `checkpoint` journal entry ctx.checkpoint writes. It is the covering record
// of the positions before it: a resume re-enters the agent from the latest snapshot (its `state`
// and the replay state below) and loads the journal only from its position on, so nothing before
// it is ever replayed again — and history below it may be archived or deleted. Pure data: it must
// never read the store or the clock.
import type { Json } from './json.ts';
import type { JournalEntry } from './records.ts';

/** The journal entry name every checkpoint has (its kind is `checkpoint`). */
export const CHECKPOINT_NAME = 'checkpoint';

/** Checkpoint state larger than this (JSON bytes) is refused: it is loaded on every resume. */
export const CHECKPOINT_STATE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * What replay keeps outside the journal and a re-entry must restore: ctx.random's generator, the
 * receives taken per channel, and the retries the run has spent before the snapshot.
 */
export interface ReplayState {
  random: [number, number, number, number];
  channels: Record<string, number>;
  retriesSpent: number;
}

/** A run's latest snapshot, as the store reads it (Store.latestSnapshot). */
export interface RunSnapshot {
  runId: string;
  /** The checkpoint's journal position: positions below it are covered by it. */
  seq: number;
  /** What the agent passed to ctx.checkpoint: its entry receives it back as ctx.resumedFrom. */
  state: Json;
  replay: ReplayState;
  /** When it was committed (ms since epoch). */
  at: number | null;
}

/** The journal entry's result: what a checkpoint stores. */
export function snapshotResult(state: Json, replay: ReplayState): Json {
  return { state, replay: replay as unknown as Json };
}

/** The snapshot a `checkpoint` journal entry holds, or null for any other entry. */
export function toSnapshot(entry: JournalEntry): RunSnapshot | null {
  if (entry.kind !== 'checkpoint' || entry.status !== 'succeeded') return null;
  const result = entry.result as { state?: Json; replay?: ReplayState } | null;
  return {
    runId: entry.runId,
    seq: entry.seq,
    state: result?.state ?? null,
    replay: result?.replay ?? { random: [0, 0, 0, 0], channels: {}, retriesSpent: 0 },
    at: entry.endedAt,
  };
}
