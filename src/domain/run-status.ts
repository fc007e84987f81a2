// The run state machine: every run status change Keel makes is one of these transitions. The store
// derives the `WHERE status IN (…)` guards of its writes from this table, so SQL and engine agree.

export const RunStatus = {
  queued: 'queued',
  running: 'running',
  waiting: 'waiting',
  cancelling: 'cancelling',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export const RUN_STATUSES = Object.values(RunStatus);

export type RunEvent =
  | 'claim' // a worker takes the lease (new work, expired lease, or a due timer)
  | 'park' // the agent is blocked on waits only: release the worker
  | 'wake' // an awaited input, child or timer is ready
  | 'yield' // the worker gives the run back without progress (e.g. shutdown)
  | 'preempt' // a batch run gives its slot back at an effect boundary, for interactive runs waiting too long
  | 'succeed'
  | 'fail'
  | 'cancel' // cancellation requested
  | 'cancelled' // cancellation finished
  | 'readmit'; // an operator re-admits a quarantined (poison) run after a fix

/** from → event → to. A missing entry is an illegal transition. */
export const TRANSITIONS: { readonly [S in RunStatus]: Partial<Record<RunEvent, RunStatus>> } = {
  queued: { claim: 'running', cancel: 'cancelling', fail: 'failed' },
  running: {
    claim: 'running',
    park: 'waiting',
    yield: 'queued',
    preempt: 'queued',
    succeed: 'succeeded',
    fail: 'failed',
    cancel: 'cancelling',
  },
  waiting: { claim: 'running', wake: 'queued', cancel: 'cancelling', fail: 'failed' },
  cancelling: {
    claim: 'cancelling',
    yield: 'cancelling',
    cancelled: 'cancelled',
    cancel: 'cancelling',
  },
  succeeded: {},
  failed: { readmit: 'queued' },
  cancelled: {},
};

export function isTerminal(status: RunStatus): boolean {
  switch (status) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return true;
    case 'queued':
    case 'running':
    case 'waiting':
    case 'cancelling':
      return false;
    default: {
      const never: never = status;
      throw new Error(`unknown run status ${String(never)}`);
    }
  }
}

/** The next status, or an assertion error naming the illegal transition. */
export function transition(from: RunStatus, event: RunEvent): RunStatus {
  const to = TRANSITIONS[from][event];
  if (to === undefined) throw new Error(`illegal run transition: ${from} --${event}-->`);
  return to;
}

/** Statuses from which `event` is legal: the guard of a persisted transition. */
export function statusesAllowing(event: RunEvent): RunStatus[] {
  return RUN_STATUSES.filter((s) => TRANSITIONS[s][event] !== undefined);
}
