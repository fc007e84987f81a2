// The lifecycle of one live execution (RunExecution) in this process: where it is between its claim
// and the moment the orchestrator drops it. Every phase change goes through `transition` from the
// execution's actual phase, so an end committed twice, a park under a stop or a yield over a cancel
// fails loudly instead of racing. It is not the run's persisted status (src/domain/run-status.ts)
// and never touches the store.

export const RunPhase = {
  /** Agent code runs; effects dispatch and commit. */
  running: 'running',
  /**
   * The agent function returned (or threw): waiting for in-flight effects before committing its
   * result.
   */
  finishing: 'finishing',
  /** Only waits are left: the park commit (status `waiting`, lease released) is in flight. */
  parking: 'parking',
  /** The agent's result is being committed (status `succeeded` or `failed`). */
  committing: 'committing',
  /**
   * Stopped (cancel, budget, non-determinism, lost lease, shutdown): in-flight effects get their
   * grace period.
   */
  stopping: 'stopping',
  /** A stopped run's end is being committed (`failed`, `cancelled`), compensations first. */
  finalizing: 'finalizing',
  /**
   * Preempted at an effect boundary: effects already in flight finish and commit, nothing new
   * starts.
   */
  preempting: 'preempting',
  /** The commit that re-queues a preempted run with its journal is in flight. */
  yielding: 'yielding',
  /** Over (parked, ended, re-queued, released or lost): the orchestrator has dropped it. */
  done: 'done',
} as const;
export type RunPhase = (typeof RunPhase)[keyof typeof RunPhase];

export const RUN_PHASES = Object.values(RunPhase);

export type RunPhaseEvent =
  | 'finish' // the agent function settled
  | 'park' // nothing in flight and waits registered
  | 'commit' // start committing the end (the agent's result, or a stopped run's end)
  | 'refused' // the end or yield commit was fenced off (a stale write): the phase before it resumes
  | 'cancel' // a cancel (or the cancel that outranks a preemption)
  | 'fail' // budget exceeded, non-determinism, quarantine, agent unavailable
  | 'lost' // the lease went to another worker, or the store could not be written
  | 'shutdown' // this process stops: hand the run back after a grace period
  | 'preempt' // a preemption asked for earlier reached an effect boundary
  | 'yield' // a preempted run's in-flight effects settled: commit it back to the queue
  | 'end'; // the orchestrator drops the execution

/** The stop events: each names the kind of a StopReason. */
export type StopEvent = Extract<RunPhaseEvent, 'cancel' | 'fail' | 'lost' | 'shutdown' | 'preempt'>;

const STOPS = {
  cancel: 'stopping',
  fail: 'stopping',
  lost: 'stopping',
  shutdown: 'stopping',
} as const;

/** from → event → to. A missing entry is an illegal transition. */
export const TRANSITIONS: { readonly [P in RunPhase]: Partial<Record<RunPhaseEvent, RunPhase>> } = {
  running: { finish: 'finishing', park: 'parking', ...STOPS, preempt: 'preempting', end: 'done' },
  // `park`: the agent returned but children started with onParentEnd 'wait' still run.
  finishing: { commit: 'committing', park: 'parking', ...STOPS, end: 'done' },
  parking: { ...STOPS, end: 'done' },
  // A stop arriving while the result is being committed: the commit goes on; if it is refused, the
  // stop decides.
  committing: {
    refused: 'finishing',
    cancel: 'finalizing',
    fail: 'finalizing',
    lost: 'finalizing',
    shutdown: 'finalizing',
    end: 'done',
  },
  stopping: { commit: 'finalizing', end: 'done' },
  finalizing: { refused: 'stopping', end: 'done' },
  // A preempted run still hears a cancel (it outranks the preemption) and a shutdown (which does
  // not wait for its long effects); a lost lease is noticed by its yield commit being refused.
  preempting: { yield: 'yielding', cancel: 'stopping', shutdown: 'stopping', end: 'done' },
  yielding: { refused: 'preempting', cancel: 'stopping', end: 'done' },
  done: {},
};

/**
 * Whether `event` is legal in `from` (the callers whose event may arrive late check this, then
 * transition).
 */
export function allows(from: RunPhase, event: RunPhaseEvent): boolean {
  return TRANSITIONS[from][event] !== undefined;
}

/** The next phase, or an assertion error naming the illegal transition. */
export function transition(from: RunPhase, event: RunPhaseEvent): RunPhase {
  const to = TRANSITIONS[from][event];
  if (to === undefined) throw new Error(`illegal run phase transition: ${from} --${event}-->`);
  return to;
}

/** Agent code may take new positions (start effects) only while the run is running. */
export function acceptsWork(phase: RunPhase): boolean {
  switch (phase) {
    case 'running':
      return true;
    case 'finishing':
    case 'parking':
    case 'committing':
    case 'stopping':
    case 'finalizing':
    case 'preempting':
    case 'yielding':
    case 'done':
      return false;
    default: {
      const never: never = phase;
      throw new Error(`unknown run phase ${String(never)}`);
    }
  }
}

/**
 * The run is committing its own end (or is over): heartbeats must not declare it lost, nor
 * preemption pick it. A stopped run is not settling: a heartbeat may still tell it about a cancel,
 * which its end commit must honour.
 */
export function isSettling(phase: RunPhase): boolean {
  switch (phase) {
    case 'finishing':
    case 'parking':
    case 'committing':
    case 'done':
      return true;
    case 'running':
    case 'stopping':
    case 'finalizing':
    case 'preempting':
    case 'yielding':
      return false;
    default: {
      const never: never = phase;
      throw new Error(`unknown run phase ${String(never)}`);
    }
  }
}
