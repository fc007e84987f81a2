// The circuit breaker's state machine: closed → open (too many failures) → half_open (after the
// open period, one probe at a time) → closed (probe succeeded) or open again (probe failed). Every
// move goes through `transition`, which asserts; nothing else may change a breaker's state.
import assert from 'node:assert/strict';

export const BREAKER_STATUS = {
  closed: 'closed',
  open: 'open',
  halfOpen: 'half_open',
} as const;
export type BreakerStatus = (typeof BREAKER_STATUS)[keyof typeof BREAKER_STATUS];

export type BreakerEvent = 'trip' | 'cool_down' | 'probe_succeeded' | 'probe_failed';

const TRANSITIONS: Record<BreakerStatus, Partial<Record<BreakerEvent, BreakerStatus>>> = {
  closed: { trip: 'open' },
  open: { cool_down: 'half_open' },
  half_open: { probe_succeeded: 'closed', probe_failed: 'open' },
};

/**
 * The state after `event` in state `from`; throws (an assertion: a bug) when the table has no such
 * move.
 * @example
 * transition('closed', 'trip'); // 'open'
 */
export function transition(from: BreakerStatus, event: BreakerEvent): BreakerStatus {
  const to = TRANSITIONS[from][event];
  assert.ok(to !== undefined, `circuit breaker: no transition from ${from} on ${event}`);
  return to;
}

/**
 * Whether a breaker in `status` lets a call through (half-open lets only its probe through; the
 * breaker decides).
 */
export function admitsCalls(status: BreakerStatus): boolean {
  switch (status) {
    case 'closed':
      return true;
    case 'half_open':
      return true;
    case 'open':
      return false;
    default: {
      const unreachable: never = status;
      return unreachable;
    }
  }
}
