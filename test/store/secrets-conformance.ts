// Store conformance for secrets (0024), run on every store: a secret is created at version 1 and
// read back sealed exactly as given; a second create of the name is refused; rotation bumps the
// version only from the version read (a racing rotation is a conflict, not a lost update); the
// list carries names, versions and times, never sealed values; secrets are per tenant; delete.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SealedSecret } from '../../src/domain/secrets.ts';
import { rejectsWith, withStore, type StoreFactory } from './conformance.ts';

const sealed = (n: number): SealedSecret => ({
  keyProvider: 'env',
  keyId: `sha256:k${n}`,
  wrappedKey: `wrapped-${n}`,
  sealed: `sealed-${n}`,
});

export function secretsStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (secrets): ${factory.name}`, () => {
    test('create, read sealed, rotate from the version read, list without values, per tenant, delete', () =>
      withStore(factory, async (store, tenantId) => {
        assert.equal(await store.anySecret(), false);
        const created = await store.createSecret(tenantId, 'API_TOKEN', sealed(1));
        assert.equal(created.name, 'API_TOKEN');
        assert.equal(created.version, 1);
        assert.ok(created.createdAt > 0 && created.updatedAt === created.createdAt);
        assert.equal(await store.anySecret(), true);
        const read = await store.getSecret(tenantId, 'API_TOKEN');
        assert.deepEqual(
          { ...read, createdAt: 0, updatedAt: 0 },
          { tenantId, name: 'API_TOKEN', version: 1, createdAt: 0, updatedAt: 0, ...sealed(1) },
        );
        await rejectsWith(store.createSecret(tenantId, 'API_TOKEN', sealed(9)), 'secret_exists');
        const rotated = await store.rotateSecret(tenantId, 'API_TOKEN', 1, sealed(2));
        assert.equal(rotated.version, 2);
        assert.equal((await store.getSecret(tenantId, 'API_TOKEN'))?.sealed, 'sealed-2');
        // A rotation computed from version 1 lost the race: refused, the value stays.
        await rejectsWith(
          store.rotateSecret(tenantId, 'API_TOKEN', 1, sealed(3)),
          'secret_conflict',
        );
        assert.equal((await store.getSecret(tenantId, 'API_TOKEN'))?.sealed, 'sealed-2');
        await rejectsWith(store.rotateSecret(tenantId, 'NOPE', 1, sealed(3)), 'secret_not_found');
        await store.createSecret(tenantId, 'A_FIRST', sealed(4));
        const listed = await store.listSecrets(tenantId);
        assert.deepEqual(
          listed.map((s) => [s.name, s.version]),
          [
            ['API_TOKEN', 2],
            ['A_FIRST', 1],
          ],
          'by name, bytewise',
        );
        assert.ok(listed.every((s) => !('sealed' in s) && !('wrappedKey' in s)));
        // Another tenant sees none of them and can make its own of the same name.
        const other = await store.createTenant('secrets-other', 'hash-secrets-other');
        assert.deepEqual(await store.listSecrets(other.id), []);
        assert.equal(await store.getSecret(other.id, 'API_TOKEN'), null);
        await rejectsWith(store.deleteSecret(other.id, 'API_TOKEN'), 'secret_not_found');
        await store.createSecret(other.id, 'API_TOKEN', sealed(5));
        await rejectsWith(store.createSecret('ten_missing', 'X', sealed(6)), 'tenant_not_found');
        await store.deleteSecret(tenantId, 'API_TOKEN');
        assert.equal(await store.getSecret(tenantId, 'API_TOKEN'), null);
        assert.equal((await store.getSecret(other.id, 'API_TOKEN'))?.sealed, 'sealed-5');
      }));
  });
}
