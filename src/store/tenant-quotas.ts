// Tenant quotas as both stores write and enforce them: statement parameters for creating and
// patching a tenant, and the admission rule for queued runs. No I/O here.
import { KeelError } from '../domain/keel-error.ts';
import { DEFAULT_TENANT_QUOTAS, type TenantQuotas } from '../domain/records.ts';

/** How long a client refused with `tenant_queue_full` is told to wait (Retry-After), in ms. */
export const TENANT_QUEUE_FULL_RETRY_AFTER_MS = 5_000;

/**
 * The tenant columns a create or a patch writes, with their record field (pool_caps, redact and
 * egress_allow are written as JSON text).
 */
const COLUMNS = [
  ['weight', 'weight'],
  ['max_concurrent_runs', 'maxConcurrentRuns'],
  ['max_queued_runs', 'maxQueuedRuns'],
  ['rpm', 'rpm'],
  ['tpm', 'tpm'],
  ['daily_token_budget', 'dailyTokenBudget'],
  ['daily_cost_budget_usd', 'dailyCostBudgetUsd'],
  ['pool_caps', 'poolCaps'],
  ['redact', 'redact'],
  ['egress_allow', 'egressAllow'],
] as const satisfies ReadonlyArray<readonly [string, keyof TenantQuotas]>;

type Param = number | string | null;
/** Object-valued settings are stored as JSON text. */
const JSON_FIELDS: ReadonlySet<keyof TenantQuotas> = new Set(['poolCaps', 'redact']);
const column = (field: keyof TenantQuotas, value: TenantQuotas[keyof TenantQuotas]): Param => {
  // The egress list is JSON text, but null stays NULL: no list is not an empty list.
  if (field === 'egressAllow') return value === null ? null : JSON.stringify(value);
  return JSON_FIELDS.has(field) ? JSON.stringify(value ?? {}) : (value as number | null);
};

/** Parameters of insert-tenant.sql for a new tenant (:id, :name, :now added by the caller). */
export function insertQuotaParams(quotas: Partial<TenantQuotas> = {}): Record<string, Param> {
  return Object.fromEntries(
    COLUMNS.map(([name, field]) => [
      name,
      column(field, quotas[field] === undefined ? DEFAULT_TENANT_QUOTAS[field] : quotas[field]),
    ]),
  );
}

/**
 * Parameters of update-tenant.sql: a field is written only when present in the patch (:id, :now
 * added by the caller).
 */
export function updateQuotaParams(patch: Partial<TenantQuotas>): Record<string, Param> {
  const params: Record<string, Param> = {};
  for (const [name, field] of COLUMNS) {
    const value = patch[field];
    params[`set_${name}`] = value === undefined ? 0 : 1;
    params[name] = value === undefined ? null : column(field, value);
  }
  return params;
}

/** The patch changes a daily budget: runs waiting on a spent budget must look again. */
export function patchesBudget(patch: Partial<TenantQuotas>): boolean {
  return patch.dailyTokenBudget !== undefined || patch.dailyCostBudgetUsd !== undefined;
}

export function tenantNotFound(id: string): KeelError {
  return new KeelError('tenant_not_found', `no tenant has id ${JSON.stringify(id)}`);
}

/**
 * Throws `tenant_queue_full` when `queued` runs fill the tenant's queue (`maxQueuedRuns` null:
 * never).
 */
export function admitQueuedRun(
  tenantId: string,
  maxQueuedRuns: number | null,
  queued: number,
): void {
  if (maxQueuedRuns === null || queued < maxQueuedRuns) return;
  throw new KeelError(
    'tenant_queue_full',
    `tenant ${tenantId} has ${maxQueuedRuns} queued runs, its maximum; retry later`,
    {
      details: { maxQueuedRuns },
      retryable: true,
      retryAfterMs: TENANT_QUEUE_FULL_RETRY_AFTER_MS,
    },
  );
}
