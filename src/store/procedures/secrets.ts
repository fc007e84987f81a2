// The secret procedures both stores share: create (version 1), rotate (guarded by the version read,
// so two rotations racing cannot both win), read one sealed, list names, delete. They only ever see
// sealed values: encryption and decryption happen in src/secrets/, outside the store.
import { KeelError } from '../../domain/keel-error.ts';
import type { SealedSecret, SecretInfo, SecretRecord } from '../../domain/secrets.ts';
import { all, one, type Procedure, type Row, type Tx } from './transaction.ts';

function toInfo(row: Row): SecretInfo {
  return {
    name: row.name as string,
    version: Number(row.version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function toRecord(row: Row): SecretRecord {
  return {
    ...toInfo(row),
    tenantId: row.tenant_id as string,
    keyProvider: row.key_provider as string,
    keyId: row.key_id as string,
    wrappedKey: row.wrapped_key as string,
    sealed: row.sealed as string,
  };
}

const sealedParams = (sealed: SealedSecret) => ({
  key_provider: sealed.keyProvider,
  key_id: sealed.keyId,
  wrapped_key: sealed.wrappedKey,
  sealed: sealed.sealed,
});

/** `secret_exists` when the tenant has a secret of this name already. */
export function* createSecret(
  tx: Tx,
  tenantId: string,
  name: string,
  sealed: SealedSecret,
): Procedure<SecretInfo> {
  if ((yield* one('get-tenant', { id: tenantId })) === undefined)
    throw new KeelError('tenant_not_found', `no tenant ${tenantId}`);
  const inserted = yield* one('insert-secret', {
    tenant_id: tenantId,
    name,
    ...sealedParams(sealed),
    now: tx.now,
  });
  if (inserted === undefined)
    throw new KeelError('secret_exists', `the tenant has a secret ${name} already: rotate it`);
  return toInfo((yield* one('get-secret', { tenant_id: tenantId, name }))!);
}

/**
 * Replaces the value of version `version`; `secret_not_found` if there is none, `secret_conflict`
 * if another rotation got there first.
 */
export function* rotateSecret(
  tx: Tx,
  tenantId: string,
  name: string,
  version: number,
  sealed: SealedSecret,
): Procedure<SecretInfo> {
  const rotated = yield* one('rotate-secret', {
    tenant_id: tenantId,
    name,
    version,
    ...sealedParams(sealed),
    now: tx.now,
  });
  if (rotated === undefined) {
    if ((yield* one('get-secret', { tenant_id: tenantId, name })) === undefined)
      throw new KeelError('secret_not_found', `the tenant has no secret ${name}`);
    throw new KeelError('secret_conflict', `secret ${name} was rotated meanwhile: try again`);
  }
  return toInfo((yield* one('get-secret', { tenant_id: tenantId, name }))!);
}

export function* getSecret(tenantId: string, name: string): Procedure<SecretRecord | null> {
  const row = yield* one('get-secret', { tenant_id: tenantId, name });
  return row === undefined ? null : toRecord(row);
}

export function* listSecrets(tenantId: string): Procedure<SecretInfo[]> {
  return (yield* all('list-secrets', { tenant_id: tenantId })).map(toInfo);
}

/** `secret_not_found` if the tenant has no such secret. */
export function* deleteSecret(tenantId: string, name: string): Procedure<void> {
  if ((yield* one('delete-secret', { tenant_id: tenantId, name })) === undefined)
    throw new KeelError('secret_not_found', `the tenant has no secret ${name}`);
}

export function* anySecret(): Procedure<boolean> {
  return (yield* one('any-secret', {})) !== undefined;
}
