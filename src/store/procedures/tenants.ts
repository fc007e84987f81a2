// The tenant procedures both stores share: creating a tenant with its first key, ensuring one
// exists with a key, changing its quotas (a new daily budget makes the runs waiting on the old one
// due now), and reading its queue room.
import { randomUUID } from 'node:crypto';
import { SCOPES } from '../../domain/access.ts';
import { KeelError } from '../../domain/keel-error.ts';
import type { TenantQuotas, TenantRecord } from '../../domain/records.ts';
import { toTenant } from '../rows.ts';
import {
  insertQuotaParams,
  patchesBudget,
  tenantNotFound,
  updateQuotaParams,
} from '../tenant-quotas.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

export function* createTenant(
  tx: Tx,
  name: string,
  apiKeyHash: string,
  quotas?: Partial<TenantQuotas>,
): Procedure<TenantRecord> {
  const id = `ten_${randomUUID()}`;
  if (
    (yield* one('insert-tenant', { id, name, now: tx.now, ...insertQuotaParams(quotas) })) ===
    undefined
  ) {
    throw new KeelError(
      'validation_failed',
      `a tenant named ${JSON.stringify(name)} exists already`,
    );
  }
  yield run('insert-api-key', firstKeyParams(tx, apiKeyHash, id));
  return toTenant((yield* one('get-tenant', { id }))!);
}

/**
 * Creates the tenant if missing (a concurrent creator's tenant is taken as it is) and attaches the
 * key if it is not yet.
 */
export function* ensureTenant(tx: Tx, name: string, apiKeyHash: string): Procedure<TenantRecord> {
  let row = yield* one('find-tenant-by-name', { name });
  if (row === undefined) {
    yield* one('insert-tenant', {
      id: `ten_${randomUUID()}`,
      name,
      now: tx.now,
      ...insertQuotaParams(),
    });
    row = yield* one('find-tenant-by-name', { name });
  }
  const tenant = toTenant(row!);
  yield run('insert-api-key', firstKeyParams(tx, apiKeyHash, tenant.id));
  return tenant;
}

/**
 * A tenant's first key (admin creation, KEEL_API_KEY, the dev tenant): named `default`, every
 * scope, no expiry.
 */
function firstKeyParams(tx: Tx, apiKeyHash: string, tenantId: string) {
  return {
    id: `key_${randomUUID()}`,
    key_hash: apiKeyHash,
    tenant_id: tenantId,
    name: 'default',
    scopes: JSON.stringify(SCOPES),
    expires_at: null,
    requests_per_minute: null,
    now: tx.now,
  };
}

export function* updateTenant(
  tx: Tx,
  id: string,
  quotas: Partial<TenantQuotas>,
): Procedure<TenantRecord> {
  const row = yield* one('update-tenant', { id, now: tx.now, ...updateQuotaParams(quotas) });
  if (row === undefined) throw tenantNotFound(id);
  if (patchesBudget(quotas)) {
    for (const woken of yield* all('wake-budget-waiting-runs', { tenant_id: id, now: tx.now }))
      tx.touch(String(woken.id), 'runnable');
  }
  return toTenant(row);
}

/**
 * How many more runs the tenant may queue (null: no limit). Two reads, outside any write
 * transaction.
 */
export function* queuedRoom(tenantId: string): Procedure<number | null> {
  const tenant = yield* one('get-tenant', { id: tenantId });
  const max = tenant === undefined ? null : toTenant(tenant).maxQueuedRuns;
  if (max === null) return null;
  return Math.max(
    0,
    max - Number((yield* one('count-queued-runs', { tenant_id: tenantId, limit: max }))!.queued),
  );
}
