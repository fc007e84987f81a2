// Store conformance for API keys and the audit log (0021, 0027), the deployment keys (0032), run on every store: several keys
// per tenant with names, scopes, expiry and a request rate limit; revocation; the lookup by hash returning revoked and
// expired keys for the caller to refuse; the first key of a tenant holding every scope; the audit
// log per tenant, newest first, filtered and paged, with the store's own records (a resolution)
// filed under the run's tenant; retention pruning.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SCOPES, PLATFORM_ADMIN } from '../../src/domain/access.ts';
import { newRun, rejectsWith, withStore, type StoreFactory } from './conformance.ts';

export function accessStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (keys and audit): ${factory.name}`, () => {
    test('keys: several per tenant, found by hash with their tenant, revoked at once, first key has every scope', () =>
      withStore(factory, async (store, tenantId) => {
        const first = await store.listApiKeys(tenantId);
        assert.equal(first.length, 1);
        assert.deepEqual(first[0]!.scopes, [...SCOPES]);
        assert.equal(first[0]!.name, 'default');
        assert.match(first[0]!.id, /^key_/);
        const expiresAt = Date.now() + 60_000;
        const ci = await store.createApiKey({
          tenantId,
          name: 'ci',
          scopes: ['submit', 'read'],
          expiresAt,
          keyHash: 'hash-ci',
        });
        assert.deepEqual(
          [ci.name, ci.scopes, ci.expiresAt, ci.revokedAt, ci.requestsPerMinute],
          ['ci', ['submit', 'read'], expiresAt, null, null],
        );
        const found = await store.findApiKey('hash-ci');
        assert.equal(found?.tenant.id, tenantId);
        assert.equal(found?.key.id, ci.id);
        // A key's own request rate limit (0027) is kept and found with it.
        const limited = await store.createApiKey({
          tenantId,
          name: 'limited',
          scopes: ['read'],
          expiresAt: null,
          keyHash: 'hash-limited',
          requestsPerMinute: 120,
        });
        assert.equal(limited.requestsPerMinute, 120);
        assert.equal((await store.findApiKey('hash-limited'))?.key.requestsPerMinute, 120);
        assert.equal(await store.findApiKey('no-such-hash'), null);
        assert.deepEqual(
          (await store.listApiKeys(tenantId)).map((k) => [k.name, k.requestsPerMinute]),
          [
            ['default', null],
            ['ci', null],
            ['limited', 120],
          ],
        );
        const revoked = await store.revokeApiKey(tenantId, ci.id);
        assert.ok(revoked.revokedAt !== null);
        const again = await store.revokeApiKey(tenantId, ci.id);
        assert.equal(
          again.revokedAt,
          revoked.revokedAt,
          'a second revocation keeps the first time',
        );
        assert.equal((await store.findApiKey('hash-ci'))?.key.revokedAt, revoked.revokedAt);
        await store.touchApiKey(ci.id);
        assert.ok(((await store.listApiKeys(tenantId))[1]!.lastUsedAt ?? 0) > 0);
        // Another tenant cannot revoke the key, nor create keys for a missing tenant.
        const other = await store.createTenant('other-tenant', 'hash-other');
        await rejectsWith(store.revokeApiKey(other.id, first[0]!.id), 'key_not_found');
        await rejectsWith(
          store.createApiKey({
            tenantId: 'ten_missing',
            name: 'x',
            scopes: ['read'],
            expiresAt: null,
            keyHash: 'h-x',
          }),
          'tenant_not_found',
        );
      }));

    test('named platform admins (0028): unique names, found by hash, revoked at once', () =>
      withStore(factory, async (store) => {
        const alice = await store.createAdminPrincipal('alice', 'hash-adm-alice');
        assert.match(alice.id, /^adm_/);
        assert.deepEqual([alice.name, alice.revokedAt], ['alice', null]);
        await rejectsWith(
          store.createAdminPrincipal('alice', 'hash-adm-other'),
          'admin_principal_exists',
        );
        await store.createAdminPrincipal('bob', 'hash-adm-bob');
        assert.deepEqual(
          (await store.listAdminPrincipals()).map((p) => p.name),
          ['alice', 'bob'],
        );
        assert.equal((await store.findAdminPrincipal('hash-adm-alice'))?.id, alice.id);
        assert.equal(await store.findAdminPrincipal('no-such-hash'), null);
        const revoked = await store.revokeAdminPrincipal(alice.id);
        assert.ok(revoked.revokedAt !== null);
        assert.equal((await store.revokeAdminPrincipal(alice.id)).revokedAt, revoked.revokedAt);
        assert.equal(
          (await store.findAdminPrincipal('hash-adm-alice'))?.revokedAt,
          revoked.revokedAt,
        );
        await rejectsWith(store.revokeAdminPrincipal('adm_missing'), 'admin_principal_not_found');
      }));

    test('audit: per tenant, newest first, filtered by action, resource and time, paged by id; store records filed under the run’s tenant; pruned by age', () =>
      withStore(factory, async (store, tenantId) => {
        const other = await store.createTenant('audit-other', 'hash-audit-other');
        const actor = { type: 'key', id: 'key_a', name: 'ops' } as const;
        for (let i = 0; i < 5; i += 1)
          await store.appendAudit({
            tenantId,
            actor,
            action: i % 2 === 0 ? 'run.cancel' : 'key.create',
            resource: `run:r${i}`,
            outcome: i === 4 ? 'run_terminal' : 'ok',
            data: { i },
          });
        await store.appendAudit({
          tenantId: other.id,
          actor: PLATFORM_ADMIN,
          action: 'tenant.update',
          resource: `tenant:${other.id}`,
          outcome: 'ok',
          data: {},
        });
        const all = await store.listAudit(tenantId, { limit: 10 });
        assert.deepEqual(
          all.map((e) => e.data.i),
          [4, 3, 2, 1, 0],
        );
        assert.deepEqual(all[0]!.actor, actor);
        assert.equal(all[0]!.outcome, 'run_terminal');
        assert.deepEqual(
          (await store.listAudit(tenantId, { limit: 10, action: 'run.cancel' })).map(
            (e) => e.data.i,
          ),
          [4, 2, 0],
        );
        assert.deepEqual(
          (await store.listAudit(tenantId, { limit: 10, resource: 'run:r3' })).map((e) => e.data.i),
          [3],
        );
        const page2 = await store.listAudit(tenantId, { limit: 2, beforeId: all[1]!.id });
        assert.deepEqual(
          page2.map((e) => e.data.i),
          [2, 1],
        );
        assert.equal(
          (await store.listAudit(tenantId, { limit: 10, since: Date.now() + 60_000 })).length,
          0,
        );
        assert.equal((await store.listAudit(tenantId, { limit: 10, until: all[4]!.at })).length, 0);
        const others = await store.listAudit(other.id, { limit: 10 });
        assert.deepEqual(
          others.map((e) => [e.action, e.actor.type]),
          [['tenant.update', 'admin']],
        );

        // A store record (a re-admission refused... here: a resolution) lands in the run's tenant's log.
        const { run } = await store.createRun(newRun(tenantId));
        await rejectsWith(store.readmitRun(run.id), 'run_not_quarantined');
        const rerun = await store.copyRun({
          run: newRun(tenantId),
          sourceRunId: run.id,
          mode: 'rerun',
        });
        const records = await store.listAudit(tenantId, { limit: 10, action: 'run_rerun' });
        assert.equal(records.length, 1);
        assert.deepEqual(
          [records[0]!.runId, records[0]!.resource, records[0]!.actor.type],
          [rerun.run.id, `run:${rerun.run.id}`, 'system'],
        );

        assert.equal(await store.pruneAudit(Date.now() + 1), 7);
        assert.equal((await store.listAudit(tenantId, { limit: 10 })).length, 0);
        assert.equal((await store.listAudit(other.id, { limit: 10 })).length, 0);
      }));

    test('deployment keys (0032): the first writer wins, racing first callers get the same key, names are apart', () =>
      withStore(factory, async (store) => {
        const name = `delegation-${Math.random().toString(36).slice(2)}`;
        const raced = await Promise.all(
          ['key-a', 'key-b', 'key-c'].map((candidate) => store.deploymentKey(name, candidate)),
        );
        assert.equal(new Set(raced).size, 1);
        assert.ok(['key-a', 'key-b', 'key-c'].includes(raced[0]!));
        assert.equal(await store.deploymentKey(name, 'key-later'), raced[0]);
        assert.equal(await store.deploymentKey(`${name}-other`, 'key-other'), 'key-other');
      }));

    test('audit: a delegated token’s actor (the run and the tool call) reads back as written', () =>
      withStore(factory, async (store, tenantId) => {
        await store.appendAudit({
          tenantId,
          actor: { type: 'delegated', id: 'run_parent', name: 'run_parent.3' },
          action: 'run.child_create',
          resource: 'run:run_child',
          runId: 'run_parent',
          outcome: 'ok',
          data: { parentRunId: 'run_parent' },
        });
        const [entry] = await store.listAudit(tenantId, { limit: 1 });
        assert.deepEqual(entry!.actor, {
          type: 'delegated',
          id: 'run_parent',
          name: 'run_parent.3',
        });
      }));
  });
}
