// A live execution's view of its run's journal: the entries committed so far, by position, and the
// next position the agent code takes. On replay it checks that the code asks, at each position, for
// what the journal holds (a divergence is a typed `non_determinism` error). It learns of commits
// only after the store has made them durable, and never writes to the store itself.
import { keepJsonText } from '../domain/json-text.ts';
import { assertEffectMove } from '../domain/effect-status.ts';
import type { Json } from '../domain/json.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { EffectKind, JournalEntry } from '../domain/records.ts';
import { parkedReason, resumedEvent } from '../domain/waiting-reasons.ts';
import type { JournalWrite } from '../store/store.ts';

/**
 * A journal position taken by agent code, with what the journal holds there (undefined: nothing
 * yet).
 */
export type Position = { seq: number; entry: JournalEntry | undefined };

export class JournalCursor {
  readonly #runId: string;
  readonly #leaseToken: number;
  readonly #entries = new Map<number, JournalEntry>();
  #nextSeq = 1;
  #loadedUpTo = 0;
  /** The first position loaded: a resume from a snapshot starts at the snapshot's position. */
  #loadedFrom = 1;

  constructor(runId: string, leaseToken: number) {
    this.#runId = runId;
    this.#leaseToken = leaseToken;
  }

  /**
   * Takes the journal as loaded from the store (before the agent code runs): all of it, or, for a
   * resume from a snapshot, the positions from the snapshot's on (the agent code re-enters after
   * it, so its next position is the one after the snapshot).
   */
  load(entries: Iterable<JournalEntry>, from?: { seq: number }): void {
    if (from !== undefined) {
      this.#loadedFrom = from.seq;
      this.#nextSeq = from.seq + 1;
      this.#loadedUpTo = from.seq;
    }
    for (const entry of entries) {
      this.#entries.set(entry.seq, entry);
      this.#loadedUpTo = Math.max(this.#loadedUpTo, entry.seq);
    }
  }

  /** In-thread agent code is still replaying positions the journal held when it was loaded. */
  get replaying(): boolean {
    return this.#nextSeq <= this.#loadedUpTo;
  }

  /** The next position of in-thread agent code (an isolate counts its positions itself). */
  take(): number {
    return this.#nextSeq++;
  }

  /**
   * What the journal holds at `seq`, or the divergence error when it holds another kind or name
   * there.
   */
  at(seq: number, kind: EffectKind, name: string): Position | KeelError {
    const entry = this.#entries.get(seq);
    return divergence(seq, entry, kind, name, this.#runId) ?? { seq, entry };
  }

  /** The first position this cursor holds: below it, the latest snapshot covers the journal. */
  get loadedFrom(): number {
    return this.#loadedFrom;
  }

  /**
   * Positions below `seq` (and from the first loaded) whose effect has not settled: taken with
   * nothing committed yet (unless `riding` holds their write) or journaled as pending, running or
   * waiting. Positions that lost a fan-in are left out: nothing waits for them. A checkpoint is
   * refused while any is left (run-snapshot.ts).
   */
  unsettledBefore(
    seq: number,
    riding: ReadonlySet<number>,
    abandoned: ReadonlySet<number>,
  ): number[] {
    const open: number[] = [];
    for (let p = this.#loadedFrom; p < seq; p++) {
      if (abandoned.has(p) || riding.has(p)) continue;
      const status = this.#entries.get(p)?.status;
      if (status !== 'succeeded' && status !== 'failed') open.push(p);
    }
    return open;
  }

  /** The latest checkpoint this cursor holds (loaded, or committed by this execution). */
  latestCheckpoint(): JournalEntry | undefined {
    let latest: JournalEntry | undefined;
    for (const e of this.#entries.values())
      if (e.kind === 'checkpoint' && e.status === 'succeeded' && e.seq >= (latest?.seq ?? 0))
        latest = e;
    return latest;
  }

  /** Committed positions (what a preemption keeps, and what the next claim replays). */
  get size(): number {
    return this.#entries.size;
  }

  /** Positions whose effect has settled (succeeded or failed): what a replay returns unrun. */
  settledCount(): number {
    let n = 0;
    for (const e of this.#entries.values())
      if (e.status === 'succeeded' || e.status === 'failed') n++;
    return n;
  }

  entries(): JournalEntry[] {
    return [...this.#entries.values()];
  }

  /**
   * Asserts that each write moves its position's effect along the effect state machine (before
   * committing it).
   */
  assertMoves(writes: readonly JournalWrite[]): void {
    for (const w of writes)
      assertEffectMove(
        this.#entries.get(w.seq)?.status ?? 'pending',
        w.status,
        `${this.#runId} position ${w.seq}`,
      );
  }

  /** Records writes the store has committed. */
  record(writes: readonly JournalWrite[]): void {
    for (const w of writes) this.#entries.set(w.seq, this.#asEntry(w));
  }

  /**
   * The journal with writes not committed yet laid over it (late writes fenced off by a cancel).
   */
  overlaid(writes: readonly JournalWrite[]): JournalEntry[] {
    const view = new Map(this.#entries);
    for (const w of writes) view.set(w.seq, this.#asEntry(w));
    return [...view.values()];
  }

  /**
   * Retries the journal records: attempts beyond the first of settled steps and tools (crash
   * recoveries are not retries).
   */
  retriesRecorded(): number {
    let n = 0;
    for (const e of this.#entries.values()) {
      if (
        (e.kind === 'step' || e.kind === 'tool') &&
        (e.status === 'succeeded' || e.status === 'failed')
      )
        n += Math.max(0, e.attempts - 1);
    }
    return n;
  }

  /**
   * `run.resumed` for a run claimed again after a park: the first parked wait of its journal says
   * what it waited for.
   */
  resumedEvent(now: number): { type: string; data: Json } | undefined {
    for (const e of this.#entries.values()) {
      const reason = parkedReason(e);
      if (reason !== undefined) return resumedEvent(reason, e.queuedAt, now, { seq: e.seq });
    }
    return undefined;
  }

  /**
   * Children still running that end with the run: spawned, not settled, and not detached
   * (`onParentEnd: 'detach'`). A `wait` child is among them: the run's own end waited for it, so
   * only a cancel or a stop (which does not wait) still finds it running.
   */
  childrenEndingWithRun(): string[] {
    return this.#unsettledChildren((policy) => policy !== 'detach');
  }

  /** Children started with `onParentEnd: 'wait'` and not seen to end: the run's end waits for them. */
  childrenWaitedFor(): string[] {
    return this.#unsettledChildren((policy) => policy === 'wait');
  }

  #unsettledChildren(keep: (policy: string | undefined) => boolean): string[] {
    return [...this.#entries.values()]
      .filter((e) => e.kind === 'child' && e.status === 'waiting')
      .map((e) => e.args as { childRunId?: string; onParentEnd?: string } | null)
      .filter((args) => keep(args?.onParentEnd))
      .map((args) => args?.childRunId)
      .filter((id) => id !== undefined); // a child waiting for room in the queue was never spawned
  }

  /** What the journal holds at the next position in-thread code takes (undefined: nothing). */
  peek(): JournalEntry | undefined {
    return this.#entries.get(this.#nextSeq);
  }

  /** What the journal holds at `seq` (undefined: nothing yet). */
  entry(seq: number): JournalEntry | undefined {
    return this.#entries.get(seq);
  }

  /** Positions that lost a journaled fan-in decision: a replay must not wait for them. */
  abandonedPositions(): number[] {
    return [...this.#entries.values()]
      .filter((e) => e.kind === 'decision')
      .flatMap((e) => (e.args as { losers?: number[] } | null)?.losers ?? []);
  }

  #asEntry(write: JournalWrite): JournalEntry {
    return {
      runId: this.#runId,
      args: null,
      result: null,
      error: null,
      executionId: null,
      effectClass: null,
      attempts: 1,
      leaseToken: this.#leaseToken,
      worker: null,
      queuedAt: null,
      startedAt: null,
      endedAt: null,
      deadlineAt: null,
      ...write,
    } as JournalEntry;
  }
}

/**
 * Replay went another way than the journal at `seq` (another kind or name there): the typed error,
 * or undefined.
 */
export function divergence(
  seq: number,
  entry: { kind: string; name: string } | undefined,
  kind: EffectKind,
  name: string,
  runId?: string,
): KeelError | undefined {
  if (entry === undefined || (entry.kind === kind && entry.name === name)) return undefined;
  // Almost always the agent's code changed under the same version while the run was in flight: say
  // how to go forward rather than leave a failed run with no way out.
  const lastMatching = seq - 1;
  return new KeelError(
    'non_determinism',
    `replay diverged from the journal at position ${seq}: the journal has ${entry.kind} ${JSON.stringify(entry.name)}, the code asked for ${kind} ${JSON.stringify(name)}. ` +
      `The agent's code changed under the same version while this run was in flight. Way forward: reset the run to re-execute from the last matching position (keel runs reset ${runId ?? '<run>'} --position ${lastMatching}); and bump the agent's version when you change what it does, so runs in flight keep the code that started them`,
    {
      details: {
        position: seq,
        // The last position that matched: a reset from there reuses it and runs the new code on.
        resetFrom: lastMatching,
        journal: { kind: entry.kind, name: entry.name },
        code: { kind, name },
      },
    },
  );
}

/**
 * Makes a value JSON (what the journal stores), so a live result and a replayed one are the same
 * value.
 */
export function toJson(value: unknown): Json {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  const json = JSON.parse(text) as Json;
  keepJsonText(json, text); // a large value's text is what the payload store writes (issue 22)
  return json;
}
