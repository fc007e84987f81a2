// Store conformance for the platform audit log (0034), run on every store: entries appended with
// the store's time, listed newest first, filtered by action, resource, tenant and actor, paged by
// id, platform-wide entries (no tenant) included, and pruned by the audit retention.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PLATFORM_ADMIN, type Actor } from '../../src/domain/access.ts';
import { withStore, type StoreFactory } from './conformance.ts';

const ANN: Actor = { type: 'admin', id: 'adm_ann', name: 'ann' };

export function platformAuditStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (platform audit log): ${factory.name}`, () => {
    test('appended, filtered, paged newest first, pruned', () =>
      withStore(factory, async (store, tenantId) => {
        await store.appendPlatformAudit({
          actor: PLATFORM_ADMIN,
          action: 'tenant.update',
          resource: `tenant:${tenantId}`,
          tenantId,
          outcome: 'ok',
          data: { fields: ['weight'] },
        });
        await store.appendPlatformAudit({
          actor: ANN,
          action: 'admin_principal.create',
          resource: 'admin-principal:adm_bob',
          tenantId: null,
          outcome: 'ok',
          data: { name: 'bob' },
        });
        await store.appendPlatformAudit({
          actor: ANN,
          action: 'tenant.update',
          resource: `tenant:${tenantId}`,
          tenantId,
          outcome: 'validation_failed',
          data: {},
        });
        const all = await store.listPlatformAudit({ limit: 10 });
        assert.deepEqual(
          all.map((e) => [e.action, e.actor.name, e.tenantId, e.outcome]),
          [
            ['tenant.update', 'ann', tenantId, 'validation_failed'],
            ['admin_principal.create', 'ann', null, 'ok'],
            ['tenant.update', 'platform-admin', tenantId, 'ok'],
          ],
        );
        assert.deepEqual(all[2]?.data, { fields: ['weight'] });
        assert.deepEqual(all[2]?.actor, PLATFORM_ADMIN);
        assert.equal((await store.listPlatformAudit({ tenantId, limit: 10 })).length, 2);
        assert.equal((await store.listPlatformAudit({ actorId: 'adm_ann', limit: 10 })).length, 2);
        assert.equal(
          (await store.listPlatformAudit({ action: 'admin_principal.create', limit: 10 })).length,
          1,
        );
        const page2 = await store.listPlatformAudit({ limit: 10, beforeId: all[0]!.id });
        assert.deepEqual(
          page2.map((e) => e.id),
          [all[1]!.id, all[2]!.id],
        );
        assert.equal(await store.listAudit('ten_none', { limit: 10 }).then((e) => e.length), 0);
        assert.ok((await store.pruneAudit(Date.now() + 60_000)) >= 3);
        assert.deepEqual(await store.listPlatformAudit({ limit: 10 }), []);
      }));
  });
}
