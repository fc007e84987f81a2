// One claimed run, live in memory: replays the agent function over its journal, dispatches the
// effects that are not journaled yet, commits each result under the lease's fencing token and the
// run's state version, and ends by parking (only waits left), finishing, or stopping (cancel,
// budget, lost lease). It never outlives its lease. Its lifecycle is the phase table of
// run-phase.ts, changed only from the actual phase; the journal it replays is a JournalCursor;
// effect code reaches it only through the RunPort it implements.
import { CANCEL_GRACE_MS_DEFAULT, POISON_LEASE_LOSSES_DEFAULT } from '../config/defaults.ts';
import { SYSTEM_CLOCK, type Clock, type ClockTimer } from '../domain/clock.ts';
import { KeelError, isKeelError, serializeError } from '../domain/keel-error.ts';
import { checkAgentOutput } from './agent-contract.ts';
import type {
  CompensationReport,
  EffectKind,
  JournalEntry,
  RunCounters,
  RunRecord,
} from '../domain/records.ts';
import type { RecoveredLease } from '../domain/attempts.ts';
import { crashPoint } from '../domain/crash-points.ts';
import { toSnapshot, type RunSnapshot } from '../domain/run-snapshot.ts';
import {
  isTerminal,
  transition as runTransition,
  type RunEvent,
  type RunStatus,
} from '../domain/run-status.ts';
import { WAITING_REASONS, waitingEvent, type WaitingReason } from '../domain/waiting-reasons.ts';
import type { CommitOutcome, JournalWrite, RunCommit, Store } from '../store/store.ts';
import type { AgentDefinition, Json } from '../sdk/types.ts';
import { requeueDelayMs } from '../scheduling/preemption.ts';
import { budgetError } from './budget-checks.ts';
import { cancelOutcome } from './cancel-outcome.ts';
import { compensate, type ToolLookup } from './compensation.ts';
import { SeededRandom } from './deterministic.ts';
import { CommitRiders } from './commit-riders.ts';
import { InFlight } from './in-flight.ts';
import { StallWatch } from './stall-watch.ts';
import { quarantineVerdict } from './quarantine.ts';
import { JournalCursor, toJson, type Position } from './journal-cursor.ts';
import { RUN_MAX_RETRIES_DEFAULT, type RetryBudget } from './retry-policy.ts';
import {
  acceptsWork,
  allows,
  isSettling,
  transition,
  type RunPhase,
  type RunPhaseEvent,
} from './run-phase.ts';
import {
  newEffectState,
  type EffectState,
  type RunPort,
  type StopReason,
  type Wait,
} from './run-port.ts';

/**
 * How long a stopping run waits for in-flight effects to settle before it commits its end anyway.
 */
export const STOP_GRACE_MS = 5_000;
/** Attempts at committing a stopped run's end when concurrent state changes keep fencing it off. */
const FINALIZE_MAX_ATTEMPTS = 3;

export interface ExecutionHooks {
  /** The execution is over (parked, finished, stopped): the orchestrator drops it. */
  onDone(execution: RunExecution, outcome: { status: string; wakeAt?: number | null }): void;
  onDispatch?(kind: EffectKind, latencySinceCommitMs: number): void;
  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void;
  /**
   * This execution committed for the first time: the run made progress (a run on probation is
   * cleared by it).
   */
  onFirstCommit?(execution: RunExecution): void;
  /**
   * Lost leases without a commit in between after which a run is quarantined instead of run again
   * (default 3).
   */
  poisonAfterLeaseLosses?: number;
  /**
   * Tool definitions by name, for compensating a failed or cancelled run's completed executions.
   */
  toolFor?: ToolLookup;
  /** The run started (true) or stopped (false) having an effect queued in a resource pool. */
  onPoolWait?(execution: RunExecution, waiting: boolean): void;
  /** The node's grace period for a cancel (KEEL_CANCEL_GRACE_MS); an agent's own replaces it. */
  cancelGraceMs?: number;
}

/** How a cancel ended the tool calls in flight: recorded on the `run.cancelled` event. */
interface Termination {
  graceMs: number;
  /** Tool calls in flight when the graceful signal went out. */
  signalled: Array<{ seq: number; tool: string }>;
  /** Those still in flight when the grace ran out: aborted (their sandboxes killed). */
  forced: Array<{ seq: number; tool: string }>;
}

export class RunExecution implements RunPort {
  readonly runId: string;
  readonly store: Store;
  readonly clock: Clock;
  readonly agent: AgentDefinition | undefined;
  readonly random: SeededRandom;
  readonly abort = new AbortController();
  readonly stopping = new AbortController();
  readonly effects: EffectState = newEffectState();
  run: RunRecord;
  counters: RunCounters;
  readonly #hooks: ExecutionHooks;
  readonly #journal: JournalCursor;
  /** Where this execution is in its lifecycle (run-phase.ts); changed only by #to. */
  #phase: RunPhase = 'running';
  /**
   * The run's persisted status as this execution knows it: what its end and yield commits move it
   * from.
   */
  #runStatus: RunStatus;
  /**
   * Why the run stopped (set with the phase change a stop makes; kept after the end for effects
   * still in flight).
   */
  #stop: StopReason | undefined;
  #expectedVersion: number;
  readonly #inflight = new InFlight(() => this.#scheduleQuiesceCheck());
  #waits = new Map<number, Wait>();
  /** Positions that lost a fan-in (decision-commit.ts): their waits do not hold the run. */
  readonly #abandoned = new Set<number>();
  /**
   * Journal writes whose commit was fenced off by a cancel: they go into the final cancel commit.
   */
  #lateWrites: JournalWrite[] = [];
  #finalizeAttempts = 0;
  /** Set by a cancel that gave tool calls in flight a grace period. */
  #termination: Termination | undefined;
  /** The grace its cancel's requester gave (POST /v1/runs/:id/cancel `graceMs`), when one did. */
  #requestedGraceMs: number | undefined;
  #staleChecks = 0;
  /**
   * A park check is queued for the next turn (coalesces the checks of effects settling in one
   * turn).
   */
  #quiesceScheduled = false;
  #deadlineTimer: ClockTimer | undefined;
  #lastCommitAt: number | undefined;
  readonly #startedAt = performance.now();
  /**
   * A preemption asked for and not reached yet: the run stops at its next effect boundary
   * (`positionAt`).
   */
  #preemptAsked: { waitedMs: number } | undefined;
  /** Events and journal writes that ride with the next commit (`run.started` with the first). */
  readonly #riders: CommitRiders;
  /** Retries this run has spent: those recorded in its journal, then this execution's. */
  #retriesSpent = 0;
  readonly retryBudget: RetryBudget = {
    take: () => {
      if (this.#retriesSpent >= this.retryBudget.limit) return false;
      this.#retriesSpent++;
      return true;
    },
    limit: 0,
  };
  /** Steps dispatched but not committed yet, for the maxSteps budget. */
  inflightSteps = 0;
  /** Effects of this run queued in a resource pool right now (see `enterPoolWait`). */
  #poolWaits = 0;
  /**
   * A side-effect tool was stopped mid-call (its outcome is unknown): it decides a cancelled run's
   * outcome.
   */
  sideEffectInterrupted = false;
  /** Progress reports and the stall watch (stall-watch.ts). */
  readonly #watch: StallWatch;
  /** The snapshot this execution re-entered the agent from (undefined: replayed from position 1). */
  resumedFrom: RunSnapshot | undefined;

  constructor(
    run: RunRecord,
    agent: AgentDefinition | undefined,
    store: Store,
    hooks: ExecutionHooks,
    clock: Clock = SYSTEM_CLOCK,
  ) {
    this.run = run;
    this.runId = run.id;
    this.agent = agent;
    this.store = store;
    this.clock = clock;
    this.counters = { ...run.counters };
    this.#hooks = hooks;
    this.#journal = new JournalCursor(run.id, run.leaseToken);
    this.#runStatus = run.status;
    this.#expectedVersion = run.stateVersion;
    this.retryBudget.limit = run.budget.maxRetries ?? RUN_MAX_RETRIES_DEFAULT;
    this.random = new SeededRandom(run.randomSeed ?? run.id); // a reset run replays its source's values
    this.#watch = new StallWatch(this, agent?.stallAfterMs, agent?.onStall);
    const requeueDelay = requeueDelayMs(run);
    this.#riders = new CommitRiders({
      type: 'run.started',
      data: {
        attempt: run.attempts,
        leaseToken: run.leaseToken,
        worker: run.leaseOwner,
        status: run.status,
        ...(requeueDelay !== null ? { requeueDelayMs: requeueDelay } : {}),
      },
    });
  }

  /** The phase of this execution's lifecycle (run-phase.ts). */
  get phase(): RunPhase {
    return this.#phase;
  }

  /**
   * Why the run is stopping (in-flight effects then neither retry nor commit a failure). Undefined
   * while it runs, and while a preempted run waits for its in-flight effects: those finish as they
   * would have, retries and all.
   */
  get stopped(): StopReason | undefined {
    return this.#stop?.kind === 'preempt' ? undefined : this.#stop;
  }

  /** The run is committing its end (or has ended): heartbeats must not declare it lost. */
  get settling(): boolean {
    return isSettling(this.#phase);
  }

  get done(): boolean {
    return this.#phase === 'done';
  }

  /** Committed journal positions (what a preemption keeps, and what the next claim replays). */
  get positions(): number {
    return this.#journal.size;
  }

  /** When this execution started (performance.now()). */
  get startedAt(): number {
    return this.#startedAt;
  }

  /** A preemption was asked for and the run has not given its slot back yet. */
  get preemptPending(): boolean {
    return this.#preemptAsked !== undefined && this.#phase !== 'done';
  }

  /**
   * Asks a batch run to give its slot back at its next effect boundary: the next position it takes
   * stops it instead (nothing in flight is aborted: effects already dispatched finish and commit),
   * then it is re-queued with its journal. False when it cannot be preempted (interactive, or
   * already stopping or ending).
   */
  preempt(trigger: { waitedMs: number }): boolean {
    if (
      this.run.priority !== 'batch' ||
      this.#phase !== 'running' ||
      this.#preemptAsked !== undefined
    )
      return false;
    this.#preemptAsked = trigger;
    return true;
  }

  /**
   * Whether an effect of this run waits in a resource pool's queue (the run waits for the pool, not
   * for a run slot).
   */
  get waitingInPool(): boolean {
    return this.#poolWaits > 0;
  }

  /**
   * Counts an effect of this run as queued in a pool until the returned function is called
   * (idempotent).
   */
  enterPoolWait(): () => void {
    if (this.#poolWaits++ === 0) this.#hooks.onPoolWait?.(this, true);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.#poolWaits === 0) this.#hooks.onPoolWait?.(this, false);
    };
  }

  /** This execution has committed something (progress: the run is off probation). */
  get hasCommitted(): boolean {
    return this.#lastCommitAt !== undefined;
  }

  /**
   * Runs the agent function of this run: in this thread (`createAgentContext`) or in an isolate (an
   * AgentHost).
   */
  async start(runAgent: (execution: RunExecution) => Promise<unknown>): Promise<void> {
    try {
      // Bounded replay: a run with a snapshot re-enters from it and reads only the journal after
      // it, so a resume costs the positions since the last checkpoint, not the whole history.
      const snapshot = (await this.store.latestSnapshot(this.runId)) ?? undefined;
      this.#journal.load(
        snapshot === undefined
          ? await this.store.loadJournal(this.runId)
          : await this.store.loadJournalFrom(this.runId, snapshot.seq),
        snapshot,
      );
      if (snapshot !== undefined) {
        this.resumedFrom = snapshot;
        this.random.restore(snapshot.replay.random);
      }
      for (const seq of this.#journal.abandonedPositions()) this.#abandoned.add(seq);
      this.#retriesSpent = (snapshot?.replay.retriesSpent ?? 0) + this.#journal.retriesRecorded();
      // A run claimed over a lost lease was running, not parked: it resumes nothing.
      const resumed =
        this.run.leaseLosses === 0 ? this.#journal.resumedEvent(this.clock.now()) : undefined;
      if (resumed !== undefined) this.emit(resumed);
      if (this.run.recovered !== undefined) await this.#announceRecovery(this.run.recovered);
    } catch (error) {
      this.#hooks.log('error', 'could not load journal', {
        runId: this.runId,
        error: String(error),
      });
      return this.#end({ status: 'lost' });
    }
    if (this.run.status === 'cancelling') return this.stop({ kind: 'cancel' });
    const poison = quarantineVerdict(
      this.run,
      this.#hooks.poisonAfterLeaseLosses ?? POISON_LEASE_LOSSES_DEFAULT,
    );
    if (poison !== null) {
      this.emit({ type: 'run.quarantined', data: poison.details as Json });
      return this.stop({ kind: 'fail', error: poison });
    }
    if (this.agent === undefined) {
      return this.stop({
        kind: 'fail',
        error: new KeelError(
          'agent_version_unavailable',
          `agent ${this.run.agent}@${this.run.agentVersion} is not served here`,
        ),
      });
    }
    if (this.run.deadlineAt !== null) {
      const remaining = this.run.deadlineAt - this.clock.now();
      if (remaining <= 0)
        return this.stop({
          kind: 'fail',
          error: budgetError('deadlineMs', 'the run passed its deadline'),
        });
      this.#deadlineTimer = this.clock.setTimeout(
        () =>
          this.stop({
            kind: 'fail',
            error: budgetError('deadlineMs', 'the run passed its deadline'),
          }),
        remaining,
      );
    }
    let result: unknown;
    try {
      result = await runAgent(this);
    } catch (error) {
      if (this.#phase !== 'running') return;
      return this.#finish({ ok: false, error: serializeError(error, 'agent_error') });
    }
    if (this.#phase !== 'running') return;
    const json = toJson(result);
    const broken = checkAgentOutput(this.agent, json);
    if (broken !== undefined) return this.#finish({ ok: false, error: broken.toJSON() });
    return this.#finish({ ok: true, result: json });
  }

  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
    this.#hooks.log(level, message, { runId: this.runId, ...fields });
  }

  /**
   * A claim over an expired lease: says so at once (`run.started` and `run.recovered`, durable, no
   * commit: the poison counter keeps the loss) and in the worker's log, instead of leaving the
   * recovery unseen until the first new effect commits, which may take as long as a model call.
   * `replayedPositions`: the settled journal positions this attempt replays instead of running.
   */
  async #announceRecovery(recovered: RecoveredLease): Promise<void> {
    const data = {
      previousWorker: recovered.previousWorker,
      leaseExpiredAt: recovered.leaseExpiredAt,
      attempt: recovered.attempt,
      replayedPositions: this.#journal.settledCount(),
    };
    this.#hooks.log('warn', 'recovering a run whose worker died or stalled (its lease expired)', {
      runId: this.runId,
      worker: this.run.leaseOwner,
      ...data,
    });
    const events = [...this.#riders.takeStart(), { type: 'run.recovered', data }];
    try {
      await this.store.announceAttempt(this.runId, this.run.leaseToken, events);
    } catch (error) {
      // The store refused the write: the events ride with the first commit instead.
      for (const event of events) this.emit(event);
      this.#hooks.log('warn', 'could not announce the recovery; it rides with the next commit', {
        runId: this.runId,
        error: String(error),
      });
    }
  }

  // Positions and effects

  /**
   * Allocates the next journal position; on replay, checks that the code asks for what the journal
   * holds.
   */
  position(kind: EffectKind, name: string): Position {
    return this.positionAt(this.#journal.take(), kind, name);
  }

  /**
   * A position taken by agent code running in an isolate (which counts positions itself): the same
   * checks as `position` — the run is live, and the journal holds the same kind and name there, or
   * nothing yet.
   */
  positionAt(seq: number, kind: EffectKind, name: string): Position {
    if (this.#preemptAsked !== undefined)
      this.stop({ kind: 'preempt', waitedMs: this.#preemptAsked.waitedMs }); // the effect boundary
    this.assertLive();
    const at = this.#journal.at(seq, kind, name);
    if (at instanceof KeelError) {
      this.stop({ kind: 'fail', error: at });
      throw at;
    }
    return at;
  }

  moved(): void {
    this.#watch.moved();
  }

  progress(state: Json): void {
    this.#watch.progress(state);
  }

  get replaying(): boolean {
    return this.#journal.replaying;
  }

  /** The kind the journal holds at the next in-thread position (an optional checkpoint's test). */
  nextJournaledKind(): EffectKind | undefined {
    return this.#journal.peek()?.kind;
  }

  /** Retries this run has spent (what a checkpoint carries over: run-snapshot.ts). */
  get retriesSpent(): number {
    return this.#retriesSpent;
  }

  /**
   * Earlier positions (since the snapshot this execution started from) still unsettled: a
   * checkpoint at `seq` is refused while any is left.
   */
  unsettledBefore(seq: number): number[] {
    return this.#journal.unsettledBefore(seq, this.#riders.journalSeqs(), this.#abandoned);
  }

  /** The latest checkpoint committed (loaded or taken by this execution): where an isolate re-enters. */
  latestCheckpoint(): RunSnapshot | undefined {
    const entry = this.#journal.latestCheckpoint();
    return entry === undefined ? undefined : (toSnapshot(entry) ?? undefined);
  }

  /**
   * The whole journal for a run's end (compensation, a cancel's outcome): the view this execution
   * holds, with the positions a snapshot covers read back from the store when it started from one.
   * Only an end pays for it, never a resume.
   */
  async #history(view: JournalEntry[]): Promise<JournalEntry[]> {
    const from = this.#journal.loadedFrom;
    if (from <= 1) return view;
    const before = (await this.store.loadJournal(this.runId)).filter((e) => e.seq < from);
    return [...before, ...view];
  }

  /** The journal as committed so far (an isolate replays settled entries without asking). */
  journalEntries(): JournalEntry[] {
    return this.#journal.entries();
  }

  /**
   * Throws if the run is stopping, so agent code cannot start new work after a cancel or a budget
   * stop.
   */
  assertLive(): void {
    if (acceptsWork(this.#phase)) return;
    if (this.#stop?.kind === 'fail') throw this.#stop.error;
    if (this.#stop?.kind === 'preempt')
      throw new KeelError(
        'run_preempted',
        `run ${this.runId} gives its slot to interactive work; it resumes from its journal`,
      );
    throw new KeelError('cancelled', `run ${this.runId} is stopping`);
  }

  /** Runs `work` as in-flight: the run neither parks nor ends while it runs. */
  async track<T>(kind: EffectKind, work: () => Promise<T>): Promise<T> {
    if (this.#lastCommitAt !== undefined)
      this.#hooks.onDispatch?.(kind, performance.now() - this.#lastCommitAt);
    const release = this.hold();
    try {
      return await work();
    } finally {
      release();
    }
  }

  /**
   * Keeps the run in flight until the returned function is called (once): agent code running
   * elsewhere (an isolate's turn) may still take positions, so the run must not park or end under
   * it.
   */
  hold(): () => void {
    return this.#inflight.hold();
  }

  /**
   * An event that rides with the next commit of this run (a retry notice: not worth a commit of its
   * own).
   */
  emit(event: { type: string; data: Json }): void {
    this.#riders.event(event);
  }

  /**
   * Records a value to commit with the next commit (ctx.now: nothing durable has seen it before
   * then).
   */
  piggyback(write: JournalWrite): void {
    this.#riders.journal(write);
  }

  /**
   * Registers a wait; the returned promise settles only in a later execution, after a park and a
   * replay.
   */
  addWait(wait: Wait): Promise<never> {
    if (this.#abandoned.has(wait.seq)) {
      // A losing child whose spawn committed after the decision: cancelled now, never waited for.
      const late = wait.kind === 'child' ? this.childRunsAt([wait.seq]) : [];
      if (late.length > 0)
        void this.track('decision', () => this.commit({ cancelRuns: late })).catch(() => {});
      return new Promise<never>(() => {});
    }
    this.#waits.set(wait.seq, wait);
    this.#scheduleQuiesceCheck();
    return new Promise<never>(() => {});
  }

  /**
   * Positions that lost a fan-in: their waits stop holding the run (dropped now, never registered
   * again).
   */
  abandon(seqs: readonly number[]): void {
    for (const seq of seqs) {
      this.#abandoned.add(seq);
      this.#waits.delete(seq);
      // A losing tool call in flight gets its graceful signal (a sandboxed program SIGTERM): it
      // may end early, and what it returns is journaled and ignored. It is never aborted: a side
      // effect cut off would leave its outcome unknown.
      this.effects.toolAttempts.get(seq)?.stopping.abort(lostFanIn(seq));
    }
  }

  fanInLoss(seq: number): KeelError | undefined {
    return this.#abandoned.has(seq) ? lostFanIn(seq) : undefined;
  }

  /** The child runs spawned at these positions and not seen to end (from waits or the journal). */
  childRunsAt(seqs: readonly number[]): string[] {
    const ids: string[] = [];
    for (const seq of seqs) {
      const wait = this.#waits.get(seq);
      const entry = this.#journal.entry(seq);
      const args =
        wait?.kind === 'child'
          ? wait.args
          : entry?.kind === 'child' && entry.status === 'waiting'
            ? entry.args
            : null;
      const id = (args as { childRunId?: unknown } | null)?.childRunId;
      if (typeof id === 'string') ids.push(id);
    }
    return ids;
  }

  /**
   * Commits under this execution's lease and expected state version (commits of one run are applied
   * in order).
   */
  async commit(
    commit: Omit<RunCommit, 'runId' | 'leaseToken' | 'expectedStateVersion'>,
  ): Promise<CommitOutcome> {
    const boarded = this.#riders.board(commit.journal, commit.events);
    const journal = boarded.journal?.map((j) => ({ ...j, worker: this.run.leaseOwner }));
    const events = boarded.events;
    if (journal !== undefined) this.#journal.assertMoves(journal);
    const full: RunCommit = {
      ...commit,
      journal,
      events,
      runId: this.runId,
      leaseToken: this.run.leaseToken,
      expectedStateVersion: this.#expectedVersion++,
    };
    try {
      const outcome = await this.store.commit(full);
      crashPoint('commit.before-notify');
      const first = this.#lastCommitAt === undefined;
      this.#lastCommitAt = performance.now();
      if (first) this.#hooks.onFirstCommit?.(this);
      if (commit.run?.counters !== undefined) addCounters(this.counters, commit.run.counters);
      if (journal !== undefined) this.#journal.record(journal);
      if (journal !== undefined || commit.run?.progress !== undefined) this.#watch.moved();
      return outcome;
    } catch (error) {
      if (isKeelError(error) && error.code === 'stale_write') {
        if (journal !== undefined && commit.run?.status === undefined)
          this.#lateWrites.push(...journal);
        void this.#onStale();
        throw error;
      }
      // The store could not be written (the database is down): the effect's outcome is not
      // committed, so the agent must not see it succeed or fail. Drop the run here; when its lease
      // expires it is replayed from its journal.
      this.#hooks.log(
        'warn',
        'commit failed; the run will resume from its journal when its lease expires',
        { runId: this.runId, error: String(error) },
      );
      this.#stop ??= { kind: 'lost' };
      this.#abortAll(new KeelError('store_busy', 'the store is unavailable'));
      this.#end({ status: 'lost' });
      return new Promise<never>(() => {});
    }
  }

  // Ends

  /**
   * Stops the run for good (cancel, budget, non-determinism) or hands it back (lost lease,
   * shutdown). A stop the phase does not take is dropped: the first stop decides, except that a
   * shutdown does not wait for a preempted run's long in-flight effects, and a cancel arriving
   * while a preempted run's yield commit is in flight is decided by that commit's stale write
   * (#onStale).
   */
  stop(reason: StopReason): void {
    if (this.#phase === 'yielding' || !allows(this.#phase, reason.kind)) return;
    this.#to(reason.kind);
    this.#stop = reason;
    // A preempted run refuses new effects only: those in flight finish and commit, so their work is
    // kept.
    if (reason.kind !== 'preempt') {
      const error =
        reason.kind === 'fail'
          ? reason.error
          : new KeelError('cancelled', `run ${this.runId} stopped: ${reason.kind}`);
      // A cancel with tool calls in flight signals them first and aborts them after the grace
      // (#afterStop); any other stop aborts at once.
      if (
        reason.kind === 'cancel' &&
        this.#cancelGraceMs() > 0 &&
        this.effects.toolAttempts.size > 0
      )
        this.#signalStopping(error);
      else this.#abortAll(error);
    }
    void this.#afterStop(reason);
  }

  /** The request's grace, else the agent's, else the node's (KEEL_CANCEL_GRACE_MS). */
  #cancelGraceMs(): number {
    return (
      this.#requestedGraceMs ??
      this.run.cancelGraceMs ??
      this.agent?.cancelGraceMs ??
      this.#hooks.cancelGraceMs ??
      CANCEL_GRACE_MS_DEFAULT
    );
  }

  /** The graceful signal alone: tool calls wrap up, model calls and backoffs give up. */
  #signalStopping(reason: unknown): void {
    if (this.stopping.signal.aborted) return;
    this.#termination = {
      graceMs: this.#cancelGraceMs(),
      signalled: [...this.effects.toolAttempts.values()].map((a) => ({ seq: a.seq, tool: a.name })),
      forced: [],
    };
    this.stopping.abort(reason);
  }

  /** Both signals: everything in flight gives up now. */
  #abortAll(reason: unknown): void {
    if (!this.stopping.signal.aborted) this.stopping.abort(reason);
    if (!this.abort.signal.aborted) this.abort.abort(reason);
  }

  /**
   * A cancel's grace period: tool calls that heard the graceful signal have until it ends to
   * settle; those still in flight then are aborted (the forced phase, recorded on the
   * `run.cancelled` event).
   */
  async #escalate(): Promise<void> {
    const termination = this.#termination;
    if (termination !== undefined && !this.abort.signal.aborted) {
      await this.#inflight.idle(termination.graceMs);
      termination.forced = [...this.effects.toolAttempts.values()].map((a) => ({
        seq: a.seq,
        tool: a.name,
      }));
      if (termination.forced.length > 0)
        this.#hooks.log('info', 'cancel grace ran out; aborting tool calls in flight', {
          runId: this.runId,
          graceMs: termination.graceMs,
          tools: termination.forced.map((f) => f.tool),
        });
    }
    this.#abortAll(new KeelError('cancelled', `run ${this.runId} stopped: cancel`));
  }

  async #afterStop(reason: StopReason): Promise<void> {
    if (reason.kind === 'lost') return this.#end({ status: 'lost' });
    if (reason.kind === 'preempt') return this.#yieldPreempted(reason.waitedMs);
    if (reason.kind === 'shutdown') {
      await this.#inflight.idle(STOP_GRACE_MS);
      await this.store.releaseLeases(this.run.leaseOwner ?? '', [this.runId]).catch(() => {});
      return this.#end({ status: 'released' });
    }
    if (reason.kind === 'cancel') await this.#escalate();
    await this.#inflight.idle(STOP_GRACE_MS);
    if (reason.kind === 'fail') return this.#commitEnd('failed', { error: reason.error.toJSON() });
    return this.#commitEnd('cancelled', {});
  }

  /**
   * Gives a preempted run back to the queue once its in-flight effects have committed. They are
   * waited for, never abandoned: an abandoned side-effect tool would leave its outcome unknown, and
   * a step would run twice. Its journal stays; fair claiming orders it again. The `run.preempted`
   * event records the cost: work since the last commit that a re-run repeats (agent code between
   * that commit and the boundary), and the positions kept (its replay).
   */
  async #yieldPreempted(waitedMs: number): Promise<void> {
    await this.#inflight.idle(Number.POSITIVE_INFINITY);
    if (this.#phase !== 'preempting') return; // a cancel or a shutdown took over meanwhile
    this.#to('yield');
    this.#clearTimers();
    this.#abortAll(new KeelError('run_preempted', `run ${this.runId} was preempted`));
    const discardedMs = Math.round(performance.now() - (this.#lastCommitAt ?? this.#startedAt));
    try {
      const status = runTransition(this.#runStatus, 'preempt');
      await this.commit({
        run: {
          status,
          releaseLease: true,
          waitingReason: 'preempted',
          wakeAt: null,
          preempted: true,
        },
        events: [
          {
            type: 'run.preempted',
            data: {
              reason: 'interactive_waiting',
              waitedMs,
              discardedMs,
              positionsKept: this.#journal.size,
            },
          },
        ],
      });
      this.#runStatus = status;
      this.#end({ status });
    } catch (error) {
      if (this.#current() === 'yielding') this.#to('refused');
      // A stale commit is handled by #onStale (a cancel that won the race turns this into a cancel;
      // a lost lease drops it).
      if (!(isKeelError(error) && error.code === 'stale_write')) {
        this.#hooks.log('error', 'preemption commit failed', {
          runId: this.runId,
          error: String(error),
        });
        this.#end({ status: 'lost' });
      }
    }
  }

  async #finish(
    result: { ok: true; result: Json } | { ok: false; error: ReturnType<typeof serializeError> },
  ): Promise<void> {
    this.#to('finish');
    await this.#inflight.idle(Number.POSITIVE_INFINITY);
    if (this.#phase !== 'finishing') return; // stopped (or preempted) while its last effects settled
    const waitedFor = await this.#childrenStillRunning();
    if (waitedFor.length > 0 && this.#phase === 'finishing')
      return this.#parkForChildren(waitedFor);
    if (this.#phase !== 'finishing') return;
    if (result.ok) return this.#commitEnd('succeeded', { result: result.result });
    return this.#commitEnd('failed', { error: result.error });
  }

  /** Children started with `onParentEnd: 'wait'` that have not ended yet (read from the store). */
  async #childrenStillRunning(): Promise<string[]> {
    const ids = this.#journal.childrenWaitedFor();
    const runs = await Promise.all(ids.map((id) => this.store.getRun(id)));
    return ids.filter((_, i) => runs[i] !== null && !isTerminal(runs[i]!.status));
  }

  /**
   * The agent returned but children it must outlive still run (`onParentEnd: 'wait'`): park
   * (`children`) until one ends; the replay that wakes recomputes the same result and looks again.
   * Its `cancel` children are cancelled now, in the park's commit: the agent is done with them.
   */
  async #parkForChildren(childRunIds: string[]): Promise<void> {
    this.#to('park');
    this.#clearTimers();
    const waited = new Set(this.#journal.childrenWaitedFor());
    try {
      const wakeAt = this.run.deadlineAt;
      const outcome = await this.commit({
        cancelRuns: this.#journal.childrenEndingWithRun().filter((id) => !waited.has(id)),
        run: { status: 'waiting', waitingReason: 'children', wakeAt, releaseLease: true },
        events: [
          waitingEvent('children', this.clock.now(), WAITING_REASONS.children, { childRunIds }),
        ],
        wakeIf: { childRunIds },
      });
      this.#end({ status: outcome.status, wakeAt });
    } catch (error) {
      if (!(isKeelError(error) && error.code === 'stale_write')) {
        this.#hooks.log('error', 'park commit failed', { runId: this.runId, error: String(error) });
        this.#end({ status: 'lost' });
      }
    }
  }

  async #commitEnd(
    status: 'succeeded' | 'failed' | 'cancelled',
    fields: { result?: Json; error?: ReturnType<typeof serializeError> },
  ): Promise<void> {
    if (!allows(this.#phase, 'commit')) return; // over, or an end commit is already in flight
    const stopped = this.#phase === 'stopping';
    this.#to('commit');
    this.#clearTimers();
    try {
      if (stopped) {
        // A stopped run's state may have moved under it (a cancel): commit against the current
        // version, and a run that is `cancelling` can only end `cancelled` (the transition table
        // allows nothing else).
        const current = await this.store.getRun(this.runId);
        if (
          current === null ||
          current.leaseToken !== this.run.leaseToken ||
          isTerminal(current.status)
        )
          return this.#end({ status: 'lost' });
        this.#expectedVersion = current.stateVersion;
        this.#runStatus = current.status;
        if (current.status === 'cancelling') {
          status = 'cancelled';
          fields = {};
        }
      }
      const endEvent: RunEvent =
        status === 'succeeded' ? 'succeed' : status === 'failed' ? 'fail' : 'cancelled';
      runTransition(this.#runStatus, endEvent); // from the status the run actually has: a refused end never reaches the store
      const compensation = status === 'succeeded' ? null : await this.#compensate();
      const journal = [...this.#lateWrites.splice(0)];
      const outcome =
        status === 'cancelled'
          ? cancelOutcome(
              await this.#history(this.#journal.entries()),
              journal,
              this.sideEffectInterrupted,
            )
          : null;
      const eventData: Record<string, Json> = { status };
      if (fields.result !== undefined) eventData.result = fields.result;
      if (fields.error !== undefined) eventData.error = fields.error as unknown as Json;
      if (outcome !== null) eventData.outcome = outcome;
      if (compensation !== null) eventData.compensation = compensation as unknown as Json;
      if (status === 'cancelled' && this.#termination !== undefined)
        eventData.termination = this.#termination as unknown as Json;
      await this.commit({
        journal,
        run: {
          status,
          releaseLease: true,
          waitingReason: null,
          wakeAt: null,
          ...(fields.result !== undefined ? { result: fields.result } : {}),
          ...(fields.error !== undefined ? { error: fields.error } : {}),
          ...(outcome !== null ? { outcome } : {}),
          ...(compensation !== null ? { compensation } : {}),
        },
        events: [{ type: `run.${status}`, data: eventData }],
        ...(this.run.parentRunId !== null ? { wakeRuns: [this.run.parentRunId] } : {}),
        // However the run ends, the children it did not wait for end with it (in this commit: no
        // crash can leave an orphan), but for detached ones.
        cancelRuns: this.#journal.childrenEndingWithRun(),
      });
      this.#runStatus = status;
      this.#end({ status });
    } catch (error) {
      if (this.#phase !== 'done') this.#to('refused');
      // A stale final commit is handled by #onStale (a cancel that won the race, or a lost lease).
      if (!(isKeelError(error) && error.code === 'stale_write')) {
        this.#hooks.log('error', 'final commit failed', {
          runId: this.runId,
          error: String(error),
        });
        this.#end({ status: 'lost' });
      }
    }
  }

  /**
   * The saga step of a failed or cancelled run: undoes completed executions (late writes fenced off
   * by a cancel included).
   */
  async #compensate(): Promise<CompensationReport | null> {
    const view = await this.#history(this.#journal.overlaid(this.#lateWrites));
    if (this.#lateWrites.length > 0) {
      await this.commit({ journal: this.#lateWrites.splice(0) });
    }
    return compensate(this, view, this.#hooks.toolFor ?? (() => undefined));
  }

  async #park(): Promise<void> {
    this.#to('park');
    const waits = [...this.#waits.values()];
    const deadlines = waits.map((w) => w.deadlineAt).filter((d): d is number => d !== null);
    if (this.run.deadlineAt !== null) deadlines.push(this.run.deadlineAt);
    const reason = waits[0]!.reason;
    this.#clearTimers();
    try {
      const wakeAt = deadlines.length > 0 ? Math.min(...deadlines) : null;
      const now = this.clock.now();
      const outcome = await this.commit({
        journal: waits
          .filter((w) => w.kind !== 'unknown')
          .map((w) => ({
            seq: w.seq,
            kind: w.kind as EffectKind,
            name: w.name,
            status: 'waiting' as const,
            args: w.args,
            deadlineAt: w.deadlineAt,
            queuedAt: now,
          })),
        run: { status: 'waiting', waitingReason: reason, wakeAt, releaseLease: true },
        events: [
          waitingEvent(
            reason,
            now,
            waits[0]!.detail ?? WAITING_REASONS[reason as WaitingReason] ?? reason,
            {
              waits: waits.map((w) => ({
                seq: w.seq,
                kind: w.kind,
                name: w.name,
                deadlineAt: w.deadlineAt,
              })),
            },
          ),
        ],
        wakeIf: {
          inputKeys: waits.filter((w) => w.kind === 'input').map((w) => w.name),
          childRunIds: waits
            .map((w) =>
              w.kind === 'child' ? (w.args as { childRunId?: string }).childRunId : undefined,
            )
            .filter((id) => id !== undefined),
        },
      });
      this.#end({ status: outcome.status, wakeAt });
    } catch (error) {
      if (!(isKeelError(error) && error.code === 'stale_write')) {
        this.#hooks.log('error', 'park commit failed', { runId: this.runId, error: String(error) });
        this.#end({ status: 'lost' });
      }
    }
  }

  /**
   * A commit was fenced off: either a cancel moved the state version (the run must end `cancelled`,
   * whatever it was doing) or another worker took the lease (drop the run; its late results were
   * audited by the store).
   */
  async #onStale(): Promise<void> {
    if (this.#staleChecks > 0 || this.#phase === 'done') return;
    this.#staleChecks++;
    try {
      const current = await this.store.getRun(this.runId).catch(() => null);
      if (this.#current() === 'done') return; // it ended meanwhile (its own commit, or a lost lease)
      if (
        current === null ||
        current.leaseToken !== this.run.leaseToken ||
        current.status !== 'cancelling'
      ) {
        this.#hooks.log('warn', 'lease lost; dropping the run from this worker', {
          runId: this.runId,
        });
        this.#stop ??= { kind: 'lost' };
        this.#abortAll(new KeelError('stale_write', 'lease lost'));
        return this.#end({ status: 'lost' });
      }
      this.#runStatus = current.status;
      this.#requestedGraceMs ??= current.cancelGraceMs ?? undefined;
      if (this.#stop === undefined) return this.stop({ kind: 'cancel' });
      if (this.#stop.kind === 'preempt') this.#cancelPreempted();
      if (this.#phase !== 'finalizing' && this.#finalizeAttempts < FINALIZE_MAX_ATTEMPTS) {
        this.#finalizeAttempts++;
        await this.#afterStop(this.#stop);
      }
    } finally {
      this.#staleChecks--;
    }
  }

  /**
   * The orchestrator heard that a cancel was requested for this run, with the requester's grace
   * for tool calls in flight (null: none given; the agent's or the node's applies).
   */
  cancelRequested(stateVersion: number, graceMs: number | null = null): void {
    if (this.#phase === 'done') return;
    // The first one heard decides (a cancel is requested once; the store keeps its grace).
    this.#requestedGraceMs ??= graceMs ?? undefined;
    this.#expectedVersion = Math.max(this.#expectedVersion, stateVersion);
    this.#runStatus = 'cancelling';
    // A cancel outranks a preemption not committed yet (committing `queued` over `cancelling` would
    // lose the cancel).
    if (this.#phase === 'preempting') this.#cancelPreempted(true);
    else this.stop({ kind: 'cancel' });
  }

  /** A preempted run's cancel arrived before its yield committed: it ends `cancelled` instead. */
  #cancelPreempted(andStop = false): void {
    this.#to('cancel');
    this.#stop = { kind: 'cancel' };
    this.#abortAll(new KeelError('cancelled', `run ${this.runId} stopped: cancel`));
    if (andStop) void this.#afterStop(this.#stop);
  }

  #scheduleQuiesceCheck(): void {
    if (this.#quiesceScheduled) return;
    this.#quiesceScheduled = true;
    setImmediate(() => {
      this.#quiesceScheduled = false;
      if (this.#inflight.count === 0 && this.#waits.size > 0 && this.#phase === 'running')
        void this.#park();
    });
  }

  #clearTimers(): void {
    if (this.#deadlineTimer !== undefined) this.clock.clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
  }

  /**
   * The phase now (read after an await: TypeScript would keep the narrowing of a check made before
   * it).
   */
  #current(): RunPhase {
    return this.#phase;
  }

  /**
   * The one place the phase changes: from the actual phase, or an assertion error naming the
   * illegal move.
   */
  #to(event: RunPhaseEvent): void {
    this.#phase = transition(this.#phase, event);
  }

  #end(outcome: { status: string; wakeAt?: number | null }): void {
    if (this.#phase === 'done') return;
    this.#to('end');
    this.#clearTimers();
    this.#watch.close();
    this.#abortAll(new KeelError('cancelled', 'execution ended'));
    this.#hooks.onDone(this, outcome);
  }
}

function addCounters(into: RunCounters, delta: Partial<RunCounters>): void {
  into.steps += delta.steps ?? 0;
  into.inputTokens += delta.inputTokens ?? 0;
  into.outputTokens += delta.outputTokens ?? 0;
  into.costUsd += delta.costUsd ?? 0;
}

const lostFanIn = (seq: number): KeelError =>
  new KeelError('cancelled', `position ${seq} lost a fan-in`);
