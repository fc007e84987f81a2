// The order of work inside one tenant and priority class, shared by every effect pool and the run
// claim of both stores: a run's due time. A run with a deadline is due at its deadline (earliest
// deadline first); one without is due UNDATED_RUN_DUE_AFTER_MS after its admission, so among such
// runs the one admitted first goes first. It never orders across tenants (fair-share.ts does).
//
// Why not the time each call was queued: under saturation that serves every run's first call before
// any run's second, so all runs advance in lockstep and none finishes until the load ends. Ordering
// by the run finishes the runs started first while the total throughput stays the same.

/**
 * A run without a deadline is ordered as if due this long after its admission: it yields to runs
 * with a nearer deadline, yet a run whose deadline is further away than this never overtakes it.
 * The claim SQL of both stores stores the same due time (runs.due_at).
 */
export const UNDATED_RUN_DUE_AFTER_MS = 300_000;

/** What orders a run's work: when it was admitted (created) and its deadline, if any. */
export interface RunOrder {
  /** When the run was admitted (its `createdAt`, ms since the epoch). */
  admittedAt: number;
  /** Its deadline (ms since the epoch), or null. */
  deadlineAt: number | null;
}

/**
 * When the run is due: its deadline, else its admission plus UNDATED_RUN_DUE_AFTER_MS.
 * @example
 * runDueAt({ admittedAt: 1_000, deadlineAt: null }); // 301_000
 * runDueAt({ admittedAt: 1_000, deadlineAt: 31_000 }); // 31_000
 */
export function runDueAt(run: RunOrder): number {
  return run.deadlineAt ?? run.admittedAt + UNDATED_RUN_DUE_AFTER_MS;
}

/** The order of a run record (`createdAt`, `deadlineAt`). */
export const runOrderOf = (run: { createdAt: number; deadlineAt: number | null }): RunOrder => ({
  admittedAt: run.createdAt,
  deadlineAt: run.deadlineAt,
});
