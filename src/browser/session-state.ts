// The browser session state machine: starting → active ⇄ idle → reclaiming → closed, and crashed
// when Chromium dies under it. A session is `active` only while one browser action runs in it, so
// reclaiming an idle session never cuts an action short. Pure: no I/O, no clock; the pool asserts
// every move through transition(), so a move the table does not allow is a bug caught where it
// happens.

export const SessionState = {
  starting: 'starting',
  active: 'active',
  idle: 'idle',
  reclaiming: 'reclaiming',
  closed: 'closed',
  crashed: 'crashed',
} as const;
export type SessionState = (typeof SessionState)[keyof typeof SessionState];

export const SESSION_STATES = Object.values(SessionState);

export type SessionEvent =
  /** The context is open (restored from storage state if there was one): the action runs. */
  | 'ready'
  /** The action ended: the session waits for the run's next one under its lease. */
  | 'done'
  /** The run's next action. */
  | 'use'
  /** Idle past its lease, the run ended, parked or was preempted, or the node stops. */
  | 'reclaim'
  /** Storage state saved (when it could be) and the context closed. */
  | 'finish'
  /** Chromium disconnected (killed, out of memory) or the context could not be opened. */
  | 'crash';

/** from → event → to. A crashed session is closed by a reclaim; it is never used again. */
export const SESSION_TRANSITIONS: {
  readonly [S in SessionState]: Partial<Record<SessionEvent, SessionState>>;
} = {
  starting: { ready: 'active', crash: 'crashed' },
  active: { done: 'idle', crash: 'crashed', reclaim: 'reclaiming' },
  idle: { use: 'active', reclaim: 'reclaiming', crash: 'crashed' },
  reclaiming: { finish: 'closed', crash: 'closed' },
  crashed: { reclaim: 'closed' },
  closed: {},
};

/** The state after `event`; throws when the table does not allow the move. */
export function transition(from: SessionState, event: SessionEvent): SessionState {
  const to = SESSION_TRANSITIONS[from][event];
  if (to === undefined) throw new Error(`illegal browser session transition: ${from} --${event}→`);
  return to;
}

/** Why a session was reclaimed: the label of keel_browser_reclaims_total. */
export type ReclaimReason =
  | 'idle'
  | 'ended'
  | 'waiting'
  | 'preempted'
  | 'lost'
  | 'closed'
  | 'shutdown'
  | 'crashed';

/** The reclaim reason for a run leaving this process with `status` (the orchestrator's words). */
export function reclaimReasonOf(status: string): ReclaimReason {
  switch (status) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return 'ended';
    case 'waiting':
      return 'waiting';
    case 'queued':
      return 'preempted';
    default:
      return 'lost';
  }
}
