// The effect (and tool execution) state machine: pending → dispatched → running → succeeded | failed | unknown,
// plus `waiting` for effects that park the run (input, timer, child). Only committed states are persisted:
// read/idempotent effects are persisted once, when they end; side-effect tools persist `running` before they run.

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

export const EFFECT_TRANSITIONS: { readonly [S in EffectStatus]: Partial<Record<EffectEvent, EffectStatus>> } = {
  pending: { dispatch: 'dispatched', park: 'waiting', succeed: 'succeeded', fail: 'failed' },
  dispatched: { start: 'running', succeed: 'succeeded', fail: 'failed' },
  running: { succeed: 'succeeded', fail: 'failed', lose: 'unknown', retry: 'running' },
  waiting: { succeed: 'succeeded', fail: 'failed', park: 'waiting' },
  unknown: { succeed: 'succeeded', fail: 'failed', retry: 'running' },
  succeeded: {},
  failed: {},
};

export function effectTransition(from: EffectStatus, event: EffectEvent): EffectStatus {
  const to = EFFECT_TRANSITIONS[from][event];
  if (to === undefined) throw new Error(`illegal effect transition: ${from} --${event}-->`);
  return to;
}

export function isEffectSettled(status: EffectStatus): boolean {
  switch (status) {
    case 'succeeded':
    case 'failed':
      return true;
    case 'pending':
    case 'dispatched':
    case 'running':
    case 'waiting':
    case 'unknown':
      return false;
    default: {
      const never: never = status;
      throw new Error(`unknown effect status ${String(never)}`);
    }
  }
}
