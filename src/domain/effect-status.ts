// The effect (and tool execution) state machine: pending → dispatched → running → succeeded |
// failed | unknown, plus `waiting` for effects that park the run (input, timer, child, a call
// parked before it was made). Only committed states are persisted: read/idempotent effects are
// persisted once, when they end; side-effect tools persist `running` before they run.

export const EffectStatus = {
  pending: 'pending',
  dispatched: 'dispatched',
  running: 'running',
  waiting: 'waiting',
  succeeded: 'succeeded',
  failed: 'failed',
  unknown: 'unknown',
} as const;
export type EffectStatus = (typeof EffectStatus)[keyof typeof EffectStatus];

export type EffectEvent = 'dispatch' | 'start' | 'park' | 'succeed' | 'fail' | 'lose' | 'retry';

/** from → event → to. `dispatched` is in-memory only; every other state may be persisted. */
export const EFFECT_TRANSITIONS: {
  readonly [S in EffectStatus]: Partial<Record<EffectEvent, EffectStatus>>;
} = {
  pending: {
    dispatch: 'dispatched',
    start: 'running',
    park: 'waiting',
    succeed: 'succeeded',
    fail: 'failed',
  },
  dispatched: { start: 'running', succeed: 'succeeded', fail: 'failed' },
  running: { succeed: 'succeeded', fail: 'failed', lose: 'unknown', retry: 'running' },
  // A call parked before it was made (a full pool queue, a spent budget) starts from here when the
  // run wakes.
  waiting: { start: 'running', succeed: 'succeeded', fail: 'failed', park: 'waiting' },
  unknown: { succeed: 'succeeded', fail: 'failed', retry: 'running' },
  succeeded: {},
  failed: {},
};

/**
 * Asserts that a journal position may move from `from` to `to` (staying put is always allowed: a
 * park rewrites its waits). Called on every journal write, so a write the table does not allow is a
 * bug caught where it happens.
 */
export function assertEffectMove(from: EffectStatus, to: EffectStatus, where: string): void {
  if (from === to) return;
  if (!Object.values(EFFECT_TRANSITIONS[from]).includes(to))
    throw new Error(`illegal effect transition at ${where}: ${from} → ${to}`);
}
