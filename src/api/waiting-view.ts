// Explains why a queued run is not running yet, for GET /v1/runs/:id and the run list: a stored
// waiting reason wins (unless it is an in-memory wait of a worker that handed the run back); else
// the agent version no worker serves, the tenant's concurrency cap, or simply awaiting a worker. A
// queued run's wait started when it was last queued (its updatedAt) unless a stored reason says
// otherwise.
import type { RunRecord, TenantRecord } from '../domain/records.ts';
import type { Store } from '../store/store.ts';
import type { runView } from './views.ts';
import { IN_FLIGHT_REASONS } from '../domain/waiting-reasons.ts';

type RunView = ReturnType<typeof runView>;

/**
 * Whether the tenant holds its maximum of concurrent runs: one query per page, and only when the
 * page needs it.
 */
export async function tenantAtCap(
  store: Store,
  tenant: TenantRecord,
  runs: readonly RunRecord[],
): Promise<boolean> {
  if (
    tenant.maxConcurrentRuns === null ||
    !runs.some((r) => r.status === 'queued' && r.waitingReason === null)
  )
    return false;
  return (await store.heldRuns(tenant.id)) >= tenant.maxConcurrentRuns;
}

/**
 * Fills a queued run's waitingReason and waitingSince in its view (other statuses are left as
 * stored).
 */
export function explainQueued(
  v: RunView,
  run: RunRecord,
  served: boolean,
  atCap: boolean,
): RunView {
  if (run.status !== 'queued') return v;
  if (v.waitingReason !== null && IN_FLIGHT_REASONS.has(v.waitingReason)) {
    v.waitingReason = null; // left by a worker that handed the run back mid-wait: it no longer applies
    v.waitingSince = null;
  }
  if (!served) v.waitingReason = 'agent_version_unavailable';
  else if (v.waitingReason === null)
    v.waitingReason = atCap ? 'tenant_concurrency_cap' : 'awaiting_worker';
  v.waitingSince ??= new Date(run.updatedAt).toISOString();
  return v;
}
