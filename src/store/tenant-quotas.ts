// Tenant quotas as both stores write and enforce them: statement parameters for creating and patching a tenant, and
// the admission rule for queued runs (issue 7). No I/O here.
import { KeelError } from '../errors/keel-error.ts';
import { DEFAULT_TENANT_QUOTAS, type TenantQuotas } from './records.ts';

/** How long a client refused with `tenant_queue_full` is told to wait (Retry-After), in ms. */
export const TENANT_QUEUE_FULL_RETRY_AFTER_MS = 5_000;

/** Parameters of insert-tenant.sql for a new tenant (:id, :name, :now added by the caller). */
export function insertQuotaParams(quotas: Partial<TenantQuotas> = {}): { weight: number; max_concurrent_runs: number | null; max_queued_runs: number | null } {
  const d = DEFAULT_TENANT_QUOTAS;
  return { weight: quotas.weight ?? d.weight, max_concurrent_runs: quotas.maxConcurrentRuns ?? d.maxConcurrentRuns, max_queued_runs: quotas.maxQueuedRuns ?? d.maxQueuedRuns };
}

/** Parameters of update-tenant.sql: a field is written only when present in the patch (:id, :now added by the caller). */
export function updateQuotaParams(patch: Partial<TenantQuotas>): Record<string, number | null> {
  return {
    set_weight: patch.weight === undefined ? 0 : 1, weight: patch.weight ?? null,
    set_max_concurrent_runs: patch.maxConcurrentRuns === undefined ? 0 : 1, max_concurrent_runs: patch.maxConcurrentRuns ?? null,
    set_max_queued_runs: patch.maxQueuedRuns === undefined ? 0 : 1, max_queued_runs: patch.maxQueuedRuns ?? null,
  };
}

export function tenantNotFound(id: string): KeelError {
  return new KeelError('tenant_not_found', `no tenant has id ${JSON.stringify(id)}`);
}

/** Throws `tenant_queue_full` when `queued` runs fill the tenant's queue (`maxQueuedRuns` null: never). */
export function admitQueuedRun(tenantId: string, maxQueuedRuns: number | null, queued: number): void {
  if (maxQueuedRuns === null || queued < maxQueuedRuns) return;
  throw new KeelError('tenant_queue_full', `tenant ${tenantId} has ${maxQueuedRuns} queued runs, its maximum; retry later`, {
    details: { maxQueuedRuns }, retryable: true, retryAfterMs: TENANT_QUEUE_FULL_RETRY_AFTER_MS,
  });
}
