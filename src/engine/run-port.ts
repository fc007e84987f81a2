// The port effect code (agent-context.ts, tool-runner.ts, compensation.ts, pool-waits.ts, the
// isolate host) uses to act on the live run it serves: take journal positions, track work in
// flight, commit under the run's lease, register waits, stop the run. RunExecution implements it;
// effect code never sees the execution's lifecycle or its journal map, and keeps its per-run state
// in `effects` here, never in module-level maps.
import type { RunSnapshot } from '../domain/run-snapshot.ts';
import type { Clock } from '../domain/clock.ts';
import type { Json } from '../domain/json.ts';
import type { KeelError } from '../domain/keel-error.ts';
import type { EffectKind, RunCounters, RunRecord } from '../domain/records.ts';
import type { CommitOutcome, JournalWrite, RunCommit, Store } from '../store/store.ts';
import type { SeededRandom } from './deterministic.ts';
import type { Position } from './journal-cursor.ts';
import type { RetryBudget } from './retry-policy.ts';

export type { Position } from './journal-cursor.ts';

export interface Wait {
  seq: number;
  kind: 'input' | 'sleep' | 'child' | 'model' | 'tool' | 'unknown';
  name: string;
  deadlineAt: number | null;
  args: Json | null;
  /** A waiting reason code (waiting-reasons.ts). */
  reason: string;
  /** What the run waits for, in words (the `run.waiting` event's detail). */
  detail?: string;
}

export type StopReason =
  | { kind: 'cancel' }
  | { kind: 'fail'; error: KeelError }
  | { kind: 'lost' }
  | { kind: 'shutdown' }
  /**
   * Preempted for interactive work that waited `waitedMs`: in-flight effects finish, then the run
   * is re-queued.
   */
  | { kind: 'preempt'; waitedMs: number };

/**
 * A tool attempt in flight: what the stall watch aborts under `retry-effect` (`abort`), and what a
 * lost fan-in asks to wrap up (`stopping`, the attempt's own graceful signal).
 */
export interface ToolAttempt {
  seq: number;
  name: string;
  attempt: number;
  abort: AbortController;
  stopping: AbortController;
}

/**
 * What effect code remembers about one live run between its calls; it lives and dies with the
 * execution.
 */
export interface EffectState {
  /**
   * Model calls currently waiting (rate limit, open breakers): the run's waiting reason is theirs
   * until the last ends.
   */
  modelWaits: number;
  /** Model versions the run has used (rebuilt by replay): later calls are pinned to them. */
  modelPins: Map<string, string>;
  /** Child runs being committed now (their spawn not yet counted by the store's queue). */
  spawnsInFlight: number;
  /**
   * Pool waits reported with a `pool_saturated` waiting reason: the reason is cleared when the last
   * of them ends.
   */
  reportedPoolWaits: number;
  /** Tool attempts in flight by position: what a stalled run's `retry-effect` policy aborts. */
  toolAttempts: Map<number, ToolAttempt>;
}

export function newEffectState(): EffectState {
  return {
    modelWaits: 0,
    modelPins: new Map(),
    spawnsInFlight: 0,
    reportedPoolWaits: 0,
    toolAttempts: new Map(),
  };
}

export interface RunPort {
  readonly runId: string;
  /** The run as claimed. */
  readonly run: RunRecord;
  /** The run's counters as committed by this execution so far. */
  readonly counters: RunCounters;
  readonly store: Store;
  /**
   * The engine's clock: wall-clock times written to the journal and events, deadlines, backoff
   * sleeps.
   */
  readonly clock: Clock;
  /** The run's seeded randomness (ctx.random, ctx.uuid): the same sequence on every replay. */
  readonly random: SeededRandom;
  /**
   * Aborted when the run stops or ends: effects in flight give up. A cancel fires it only after the
   * grace period (`cancelGraceMs`), when tool calls are in flight; `stopping` fires first.
   */
  readonly abort: AbortController;
  /**
   * Aborted as soon as the run is stopping, before `abort` (and whenever `abort` is): the graceful
   * signal. Tool calls get it to wrap up (a sandboxed program gets SIGTERM); model calls and
   * backoff sleeps, with nothing to wrap up, give up on it at once.
   */
  readonly stopping: AbortController;
  readonly retryBudget: RetryBudget;
  readonly effects: EffectState;
  /** Steps dispatched but not committed yet, for the maxSteps budget. */
  inflightSteps: number;
  /**
   * A side-effect tool was stopped mid-call (its outcome is unknown): it decides a cancelled run's
   * outcome.
   */
  sideEffectInterrupted: boolean;
  /**
   * Why the run is stopping (in-flight effects then neither retry nor commit a failure); undefined
   * while it runs.
   */
  readonly stopped: StopReason | undefined;
  /**
   * Takes the next journal position; on replay, checks that the code asks for what the journal
   * holds.
   */
  position(kind: EffectKind, name: string): Position;
  /**
   * A position taken by agent code in an isolate (which counts positions itself): the same checks.
   */
  positionAt(seq: number, kind: EffectKind, name: string): Position;
  /**
   * Throws if the run is stopping, so agent code cannot start new work after a cancel or a budget
   * stop.
   */
  assertLive(): void;
  /** Runs `work` as in-flight: the run neither parks nor ends while it runs. */
  track<T>(kind: EffectKind, work: () => Promise<T>): Promise<T>;
  /** Keeps the run in flight until the returned function is called (once). */
  hold(): () => void;
  /** An event that rides with the next commit of this run. */
  emit(event: { type: string; data: Json }): void;
  /** A log line about this run (the process log, with the run's context). */
  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void;
  /**
   * Records a value to commit with the next commit (ctx.now: nothing durable has seen it before
   * then).
   */
  piggyback(write: JournalWrite): void;
  /**
   * Registers a wait; the returned promise settles only in a later execution, after a park and a
   * replay.
   */
  addWait(wait: Wait): Promise<never>;
  /**
   * Positions that lost a fan-in: their waits stop holding the run (dropped now, never registered
   * again; a child spawned there later is cancelled).
   */
  abandon(seqs: readonly number[]): void;
  /**
   * Why the position's calls should wrap up, if it lost a fan-in (an attempt starting after the
   * decision hears it at once).
   */
  fanInLoss(seq: number): KeelError | undefined;
  /** The child runs spawned at these positions and not seen to end (from waits or the journal). */
  childRunsAt(seqs: readonly number[]): string[];
  /**
   * Commits under the run's lease and expected state version (commits of one run are applied in
   * order).
   */
  commit(
    commit: Omit<RunCommit, 'runId' | 'leaseToken' | 'expectedStateVersion'>,
  ): Promise<CommitOutcome>;
  /**
   * Stops the run for good (cancel, budget, non-determinism) or hands it back (lost lease,
   * shutdown).
   */
  stop(reason: StopReason): void;
  /**
   * Counts an effect of this run as queued in a resource pool until the returned function is called
   * (idempotent).
   */
  enterPoolWait(): () => void;
  /** The run moved (a tool attempt started): a stall is over, and its clock starts again. */
  moved(): void;
  /** ctx.progress (checked already): a small commit of its own, coalesced; never journaled. */
  progress(state: Json): void;
  /** In-thread agent code is replaying journaled positions (its ctx.progress calls are dropped). */
  readonly replaying: boolean;
  /** The snapshot this execution re-entered the agent from (ctx.resumedFrom), if any. */
  readonly resumedFrom: RunSnapshot | undefined;
  /** The kind the journal holds at the next in-thread position (an optional checkpoint's test). */
  nextJournaledKind(): EffectKind | undefined;
  /** Retries the run has spent so far (a checkpoint carries them over). */
  readonly retriesSpent: number;
  /** Earlier positions still unsettled: a checkpoint at `seq` is refused while any is left. */
  unsettledBefore(seq: number): number[];
}
