// Overlap policies: what a fire does while an earlier run of its schedule is still active. Pure
// decision; the scheduler records the outcome of every fire, whichever it is.
import type { OverlapPolicy } from '../store/schedule-store.ts';

export type OverlapDecision = 'start' | 'skip' | 'buffer' | 'cancel_other';

export const OVERLAP_POLICIES = [
  'allow',
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
] as const satisfies readonly OverlapPolicy[];

export interface OverlapState {
  /** Runs of the schedule not yet terminal. */
  activeRuns: number;
  /** Fires waiting for those runs to end (buffered, or cancelling the others). */
  waitingFires: number;
}

export function decideOverlap(policy: OverlapPolicy, state: OverlapState): OverlapDecision {
  const busy = state.activeRuns > 0 || state.waitingFires > 0;
  switch (policy) {
    case 'allow':
      return 'start';
    case 'skip':
      return busy ? 'skip' : 'start';
    case 'buffer_one':
      if (!busy) return 'start';
      return state.waitingFires > 0 ? 'skip' : 'buffer';
    case 'buffer_all':
      return busy ? 'buffer' : 'start';
    case 'cancel_other':
      return busy ? 'cancel_other' : 'start';
    default: {
      const never: never = policy;
      throw new Error(`unknown overlap policy ${String(never)}`);
    }
  }
}
