// The store-side rule for re-admitting a quarantined run, shared by both stores: only a run that
// failed with `poison_run` can be re-admitted; anything else is a 409 naming what the run is.
import { KeelError } from '../domain/keel-error.ts';
import type { RunRecord } from '../domain/records.ts';

export function notQuarantined(run: RunRecord): KeelError {
  return new KeelError(
    'run_not_quarantined',
    `run ${run.id} is ${run.status}${run.error !== null ? ` (${run.error.code})` : ''}; only a run quarantined as poison_run can be re-admitted`,
    {
      details: { status: run.status, code: run.error?.code ?? null },
    },
  );
}
