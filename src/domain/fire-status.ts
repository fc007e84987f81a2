// The fire state machine: what became of one logical fire time of a schedule. A fire is recorded
// once per (scheduleId, logicalTime); every later change of its status is one of these transitions,
// never an overwrite.

export const FireStatus = {
  /**
   * Requested (trigger, backfill) and not decided yet: the scheduler decides it under the
   * schedule's claim.
   */
  pending: 'pending',
  /** Waiting for the schedule's active run to end (buffer_one, buffer_all). */
  buffered: 'buffered',
  /** The active runs were asked to cancel (cancel_other); this fire starts once they ended. */
  cancelling_other: 'cancelling_other',
  started: 'started',
  /** Started after cancelling the runs that were still active. */
  cancelled_other: 'cancelled_other',
  skipped: 'skipped',
  /** Older than the catch-up window when the scheduler got to it: never run. */
  missed: 'missed',
} as const;
export type FireStatus = (typeof FireStatus)[keyof typeof FireStatus];

export const FIRE_STATUSES = Object.values(FireStatus);

export type FireEvent =
  | 'start' // a run was created for the fire
  | 'skip' // the overlap policy drops it, its agent is not registered, or its tenant's queue is full when it would start
  | 'buffer' // it waits for the active run
  | 'cancel_other' // it cancels the active runs and waits for them to end
  | 'supersede' // a newer cancel_other fire takes its place (also of a fire buffered before the policy was changed)
  | 'miss' // outside the catch-up window
  | 'backfill'; // an operator asks again for a fire that did not run

/** from → event → to. A missing entry is an illegal transition. */
export const TRANSITIONS: { readonly [S in FireStatus]: Partial<Record<FireEvent, FireStatus>> } = {
  pending: {
    start: 'started',
    skip: 'skipped',
    buffer: 'buffered',
    cancel_other: 'cancelling_other',
    miss: 'missed',
  },
  buffered: { start: 'started', skip: 'skipped', supersede: 'skipped' },
  cancelling_other: { start: 'cancelled_other', skip: 'skipped', supersede: 'skipped' },
  started: {},
  cancelled_other: {},
  skipped: { backfill: 'pending' },
  missed: { backfill: 'pending' },
};

/** The next status, or an assertion error naming the illegal transition. */
export function transition(from: FireStatus, event: FireEvent): FireStatus {
  const to = TRANSITIONS[from][event];
  if (to === undefined) throw new Error(`illegal fire transition: ${from} --${event}-->`);
  return to;
}

/** A fire still waiting for its run to be created. */
export function isWaiting(status: FireStatus): boolean {
  switch (status) {
    case 'pending':
    case 'buffered':
    case 'cancelling_other':
      return true;
    case 'started':
    case 'cancelled_other':
    case 'skipped':
    case 'missed':
      return false;
    default: {
      const never: never = status;
      throw new Error(`unknown fire status ${String(never)}`);
    }
  }
}
