// The dead-letter rule for runs whose own code kills the processes that run them. It only judges a
// claimed run's record; the execution stops the run with the verdict, and the orchestrator runs a
// suspect on its last chance alone.
import { KeelError } from '../domain/keel-error.ts';
import type { RunRecord } from '../domain/records.ts';

/**
 * The dead-letter rule: a run claimed after losing its lease `threshold` times in a row without
 * committing anything (its code crashed or stalled every worker that ran it) is not run again; it
 * fails with `poison_run` and the evidence.
 */
export function quarantineVerdict(run: RunRecord, threshold: number): KeelError | null {
  if (run.leaseLosses < threshold) return null;
  return new KeelError(
    'poison_run',
    `run ${run.id} lost its lease ${run.leaseLosses} times in a row without progress; quarantined`,
    {
      details: {
        leaseLosses: run.leaseLosses,
        attempts: run.leaseToken,
        workers: run.leaseLossOwners,
        threshold,
      },
    },
  );
}
