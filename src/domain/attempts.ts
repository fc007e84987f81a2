// Attempts: each claim that takes a run's lease starts one, and it ends exactly once. This module
// owns the endings (a one-step state machine: `running` to one of the others), which commit ends an
// attempt how, and the records the store returns. A recovery (a claim over an expired lease) is a
// new attempt; a retry is an effect's attempt, never a run's.
import type { RunStatus } from './run-status.ts';

export const AttemptEnding = {
  /** The attempt holds the lease now (or held it until the lease expired, unnoticed so far). */
  running: 'running',
  /** The run ended (succeeded or failed) under this attempt. */
  completed: 'completed',
  /** The run parked: it waits for a timer, an input, a child run or a pool, and holds no worker. */
  parked: 'parked',
  /** The next claim found the lease expired unreleased: the worker died or stalled. */
  lease_expired: 'lease_expired',
  /** A batch run gave its slot back to interactive work at an effect boundary. */
  preempted: 'preempted',
  /** The worker handed the lease back without progress (shutdown, or a claim it did not use). */
  released: 'released',
  /** The run ended cancelled under this attempt. */
  cancelled: 'cancelled',
} as const;
export type AttemptEnding = (typeof AttemptEnding)[keyof typeof AttemptEnding];

export const ATTEMPT_ENDINGS = Object.values(AttemptEnding);

/** from → to: only a running attempt ends, and only once. */
export const ATTEMPT_TRANSITIONS: { readonly [E in AttemptEnding]: readonly AttemptEnding[] } = {
  running: ['completed', 'parked', 'lease_expired', 'preempted', 'released', 'cancelled'],
  completed: [],
  parked: [],
  lease_expired: [],
  preempted: [],
  released: [],
  cancelled: [],
};

/** How a commit that gives the lease up ends its attempt (undefined: it keeps the lease). */
export function endingForCommit(
  status: RunStatus | undefined,
  releasesLease: boolean,
  preempted: boolean,
): AttemptEnding | undefined {
  if (status === undefined) return undefined;
  switch (status) {
    case 'succeeded':
    case 'failed':
      return 'completed';
    case 'cancelled':
      return 'cancelled';
    case 'waiting':
      return 'parked';
    case 'queued':
      return preempted ? 'preempted' : 'parked';
    case 'running':
    case 'cancelling':
      return releasesLease ? 'released' : undefined;
    default: {
      const never: never = status;
      throw new Error(`unknown status ${String(never)}`);
    }
  }
}

/** One claim of a run: who held its lease, from when to when, and how it ended. */
export interface AttemptRecord {
  runId: string;
  /** 1 for the first claim, then one more per claim that took the lease. */
  number: number;
  /** The lease owner (the worker process). */
  worker: string;
  /** The fencing token of its lease. */
  leaseToken: number;
  startedAt: number;
  /**
   * When it ended: its commit, its release, or (lease_expired) when its lease expired. Null while
   * running.
   */
  endedAt: number | null;
  ending: AttemptEnding;
}

/** What a claim that took over an expired lease knows of the attempt it replaces. */
export interface RecoveredLease {
  /** The worker whose lease expired (null: unknown, it predates the attempts record). */
  previousWorker: string | null;
  /** When that lease expired (on `keel dev`, when the restarted process declared it expired). */
  leaseExpiredAt: number | null;
  /** The number of the attempt that recovers the run (the new one). */
  attempt: number;
}
