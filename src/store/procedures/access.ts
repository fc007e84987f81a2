// The key and audit-log procedures both stores share: a tenant's API keys (create, list, revoke,
// the lookup by hash that authenticates a request, the throttled last-used stamp) and its
// append-only audit log (append, read a filtered page newest first, prune past retention). Never
// sees a key's secret: only its SHA-256 hash.
import { randomUUID } from 'node:crypto';
import type {
  Actor,
  AdminPrincipalRecord,
  ApiKeyRecord,
  AuditEntry,
  AuditFilter,
  NewApiKey,
  NewAuditEntry,
  NewPlatformAuditEntry,
  PlatformAuditEntry,
  PlatformAuditFilter,
} from '../../domain/access.ts';
import { isScope } from '../../domain/access.ts';
import { KeelError } from '../../domain/keel-error.ts';
import type { TenantRecord } from '../../domain/records.ts';
import { toTenant } from '../rows.ts';
import { all, one, run, type Procedure, type Row, type Tx } from './transaction.ts';

/** At most this many audit entries go in one prune statement; the pass repeats until none is left. */
export const AUDIT_PRUNE_BATCH_ROWS = 1_000;

const num = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

function scopesOf(text: unknown): ApiKeyRecord['scopes'] {
  const parsed: unknown = typeof text === 'string' ? JSON.parse(text) : [];
  return Array.isArray(parsed) ? parsed.filter(isScope) : [];
}

export function toApiKey(row: Row, prefix = ''): ApiKeyRecord {
  return {
    id: row[`${prefix}id`] as string,
    tenantId: (row.tenant_id ?? row.id) as string,
    name: row[`${prefix}name`] as string,
    scopes: scopesOf(row[`${prefix}scopes`]),
    createdAt: Number(row[`${prefix}created_at`]),
    expiresAt: num(row[`${prefix}expires_at`]),
    lastUsedAt: num(row[`${prefix}last_used_at`]),
    revokedAt: num(row[`${prefix}revoked_at`]),
    requestsPerMinute: num(row[`${prefix}requests_per_minute`]),
  };
}

function toActor(row: Row): Actor {
  if (row.actor_type === 'key')
    return { type: 'key', id: String(row.actor_id), name: String(row.actor_name ?? '') };
  if (row.actor_type === 'delegated')
    return { type: 'delegated', id: String(row.actor_id), name: String(row.actor_name ?? '') };
  if (row.actor_type === 'admin')
    return row.actor_id === null || row.actor_id === undefined
      ? { type: 'admin', id: null, name: 'platform-admin' }
      : { type: 'admin', id: String(row.actor_id), name: String(row.actor_name ?? '') };
  return { type: 'system', id: null, name: null };
}

function toAuditEntry(row: Row): AuditEntry {
  return {
    id: Number(row.id),
    tenantId: row.tenant_id as string,
    at: Number(row.at),
    actor: toActor(row),
    action: row.kind as string,
    resource: (row.resource ?? null) as string | null,
    runId: (row.run_id ?? null) as string | null,
    outcome: row.outcome as string,
    data: JSON.parse(row.data as string) as Record<string, unknown>,
  };
}

export function* createApiKey(tx: Tx, key: NewApiKey): Procedure<ApiKeyRecord> {
  if ((yield* one('get-tenant', { id: key.tenantId })) === undefined)
    throw new KeelError('tenant_not_found', `no tenant ${key.tenantId}`);
  const id = `key_${randomUUID()}`;
  yield run('insert-api-key', {
    id,
    key_hash: key.keyHash,
    tenant_id: key.tenantId,
    name: key.name,
    scopes: JSON.stringify(key.scopes),
    expires_at: key.expiresAt,
    requests_per_minute: key.requestsPerMinute ?? null,
    now: tx.now,
  });
  const row = yield* one('get-api-key', { tenant_id: key.tenantId, id });
  // The hash belonged to a key already (a 192-bit random secret never collides: a caller bug).
  if (row === undefined) throw new KeelError('validation_failed', 'this key is attached already');
  return toApiKey(row);
}

export function* listApiKeys(tenantId: string): Procedure<ApiKeyRecord[]> {
  return (yield* all('list-api-keys', { tenant_id: tenantId })).map((row) => toApiKey(row));
}

/** Revokes the key (again: no change); `key_not_found` if the tenant has no such key. */
export function* revokeApiKey(tx: Tx, tenantId: string, id: string): Procedure<ApiKeyRecord> {
  if ((yield* one('revoke-api-key', { tenant_id: tenantId, id, now: tx.now })) === undefined)
    throw new KeelError('key_not_found', `the tenant has no API key ${id}`);
  return toApiKey((yield* one('get-api-key', { tenant_id: tenantId, id }))!);
}

/** The key with this hash and its tenant, revoked or expired ones too; null for an unknown hash. */
export function* findApiKey(
  keyHash: string,
): Procedure<{ key: ApiKeyRecord; tenant: TenantRecord } | null> {
  const row = yield* one('find-api-key', { key_hash: keyHash });
  if (row === undefined) return null;
  return { key: toApiKey(row, 'key_'), tenant: toTenant(row) };
}

export function* touchApiKey(tx: Tx, id: string): Procedure<void> {
  yield run('touch-api-key', { id, now: tx.now });
}

export function* appendAudit(tx: Tx, entry: NewAuditEntry): Procedure<void> {
  yield* one('append-audit', {
    tenant_id: entry.tenantId,
    run_id: entry.runId ?? null,
    at: tx.now,
    kind: entry.action,
    resource: entry.resource,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    actor_name: entry.actor.name,
    outcome: entry.outcome,
    data: JSON.stringify(entry.data),
  });
}

export function* listAudit(tenantId: string, filter: AuditFilter): Procedure<AuditEntry[]> {
  const rows = yield* all('list-audit', {
    tenant_id: tenantId,
    kind: filter.action ?? null,
    resource: filter.resource ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
    before_id: filter.beforeId ?? null,
    limit: filter.limit,
  });
  return rows.map(toAuditEntry);
}

/**
 * Deletes up to AUDIT_PRUNE_BATCH_ROWS entries older than `before` from the tenants' log and as
 * many from the platform's; returns how many went (fewer than the batch: both are done).
 */
export function* pruneAudit(before: number): Procedure<number> {
  const tenants = (yield run('prune-audit', { before, limit: AUDIT_PRUNE_BATCH_ROWS })) as number;
  const platform = (yield run('prune-platform-audit', {
    before,
    limit: AUDIT_PRUNE_BATCH_ROWS,
  })) as number;
  return tenants + platform;
}

export function* appendPlatformAudit(tx: Tx, entry: NewPlatformAuditEntry): Procedure<void> {
  yield* one('insert-platform-audit', {
    at: tx.now,
    kind: entry.action,
    resource: entry.resource,
    tenant_id: entry.tenantId,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    actor_name: entry.actor.name,
    outcome: entry.outcome,
    data: JSON.stringify(entry.data),
  });
}

export function* listPlatformAudit(filter: PlatformAuditFilter): Procedure<PlatformAuditEntry[]> {
  const rows = yield* all('list-platform-audit', {
    kind: filter.action ?? null,
    resource: filter.resource ?? null,
    tenant_id: filter.tenantId ?? null,
    actor_id: filter.actorId ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
    before_id: filter.beforeId ?? null,
    limit: filter.limit,
  });
  return rows.map((row) => ({
    id: Number(row.id),
    at: Number(row.at),
    actor: toActor(row),
    action: row.kind as string,
    resource: (row.resource ?? null) as string | null,
    tenantId: (row.tenant_id ?? null) as string | null,
    outcome: row.outcome as string,
    data: JSON.parse(row.data as string) as Record<string, unknown>,
  }));
}

function toAdminPrincipal(row: Row): AdminPrincipalRecord {
  return {
    id: row.id as string,
    name: row.name as string,
    createdAt: Number(row.created_at),
    revokedAt: num(row.revoked_at),
  };
}

/** Adds a named platform admin; `admin_principal_exists` if the name is taken. */
export function* createAdminPrincipal(
  tx: Tx,
  name: string,
  keyHash: string,
): Procedure<AdminPrincipalRecord> {
  const id = `adm_${randomUUID()}`;
  if (
    (yield* one('insert-admin-principal', { id, name, key_hash: keyHash, now: tx.now })) ===
    undefined
  )
    throw new KeelError('admin_principal_exists', `a platform admin named ${name} exists already`);
  return toAdminPrincipal((yield* one('get-admin-principal', { id }))!);
}

export function* listAdminPrincipals(): Procedure<AdminPrincipalRecord[]> {
  return (yield* all('list-admin-principals', {})).map(toAdminPrincipal);
}

/** Revokes a named platform admin at once (idempotent); `admin_principal_not_found` otherwise. */
export function* revokeAdminPrincipal(tx: Tx, id: string): Procedure<AdminPrincipalRecord> {
  if ((yield* one('revoke-admin-principal', { id, now: tx.now })) === undefined)
    throw new KeelError('admin_principal_not_found', `no platform admin ${id}`);
  return toAdminPrincipal((yield* one('get-admin-principal', { id }))!);
}

/** The named platform admin with this key hash, revoked ones too; null for an unknown hash. */
export function* findAdminPrincipal(keyHash: string): Procedure<AdminPrincipalRecord | null> {
  const row = yield* one('find-admin-principal', { key_hash: keyHash });
  return row === undefined ? null : toAdminPrincipal(row);
}

/**
 * The deployment key `name`: `candidate` when none was stored (it is stored now), else the one
 * stored first. Concurrent first callers all get the same key (the insert does nothing when a key
 * exists, and the read is in the same transaction).
 */
export function* deploymentKey(tx: Tx, name: string, candidate: string): Procedure<string> {
  yield run('ensure-deployment-key', { name, secret: candidate, now: tx.now });
  return (yield* one('get-deployment-key', { name }))!.secret as string;
}
