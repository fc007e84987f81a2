// Rules both stores apply when they write a run: its priority rank, and when it may be claimed
// again by time alone.
import type { RunStatus } from '../domain/run-status.ts';
import type { Priority } from '../domain/records.ts';
import { runDueAt, runOrderOf } from '../domain/run-order.ts';

export const priorityRank = (priority: Priority): number => (priority === 'interactive' ? 0 : 1);

/**
 * When a run with this status may be claimed by time alone (null: only by an outside event;
 * undefined: unchanged).
 */
export function claimAfterFor(
  status: RunStatus,
  releasing: boolean,
  wakeAt: number | null,
  now: number,
): number | null | undefined {
  switch (status) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return null;
    case 'waiting':
      return wakeAt;
    case 'queued':
      return now;
    case 'running':
    case 'cancelling':
      return releasing ? now : undefined;
    default: {
      const never: never = status;
      throw new Error(`unknown status ${String(never)}`);
    }
  }
}

/**
 * Claimed runs in claim order (interactive first, then the run due first: its deadline, else its
 * admission; see run-order.ts): RETURNING does not keep the subquery's order.
 */
export function inClaimOrder<
  R extends { priority: Priority; createdAt: number; deadlineAt: number | null; id: string },
>(runs: R[]): R[] {
  const due = (run: R) => runDueAt(runOrderOf(run));
  return runs.sort(
    (a, b) =>
      priorityRank(a.priority) - priorityRank(b.priority) ||
      due(a) - due(b) ||
      (a.id < b.id ? -1 : 1),
  );
}
