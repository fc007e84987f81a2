// Store conformance for version migrations: only queued runs of the named agent version that never
// started move (a claimed run, a run handed back with a journal, another agent, another tenant and
// another version stay), each with a `run.migrated` event, in `limit`-sized batches; a moved run is
// claimable by a worker serving the new version; queuedByVersion counts queued runs by pinned
// version.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newRun, withStore, type StoreFactory } from './conformance.ts';

export function versionStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (version migrations): ${factory.name}`, () => {
    test('migrateRunVersion moves only queued, never-started runs; started ones are reported', () =>
      withStore(factory, async (store, tenantId) => {
        const other = await store.createTenant(`o-${Math.random()}`, `h-${Math.random()}`);
        const create = async (overrides = {}) =>
          (await store.createRun(newRun(tenantId, overrides))).run.id;
        const fresh = [await create(), await create(), await create()];
        const otherAgent = await create({ agent: 'other' });
        const otherVersion = await create({ agentVersion: '3' });
        // One run started (a journal entry) and was handed back; one is running. Claimed together:
        // a handed-back run keeps its place in the claim order (it is due first), so claiming again
        // would take it back.
        const [claimed, running] = await store.claimRuns({
          owner: 'w',
          limit: 2,
          leaseMs: 60_000,
          served: ['agent@1'],
        });
        assert.ok(claimed && running);
        const handedBack = claimed.id;
        await store.commit({
          runId: handedBack,
          leaseToken: claimed.leaseToken,
          expectedStateVersion: claimed.stateVersion,
          journal: [{ seq: 1, kind: 'step', name: 's', status: 'succeeded', result: 1 }],
          run: { counters: { steps: 1 } },
        });
        await store.releaseLeases('w', [handedBack]);
        assert.ok(running.id !== handedBack);
        const movable = fresh.filter((id) => id !== handedBack && id !== running.id);
        assert.equal(movable.length, 1);
        const more = [await create(), await create()];
        const otherTenant = (await store.createRun(newRun(other.id))).run.id;

        const queued = await store.queuedByVersion();
        const count = (agent: string, version: string) =>
          queued.find((q) => q.agent === agent && q.version === version)?.runs;
        assert.equal(
          count('agent', '1'),
          5,
          'queued of every tenant, the handed-back one included',
        );
        assert.equal(count('agent', '3'), 1);

        const migration = { tenantId, agent: 'agent', fromVersion: '1', toVersion: '2' };
        const first = await store.migrateRunVersion({ ...migration, limit: 2 });
        assert.equal(first.moved.length, 2);
        assert.equal(first.more, true);
        const second = await store.migrateRunVersion({ ...migration, limit: 2 });
        assert.equal(second.more, false);
        assert.deepEqual(
          new Set([...first.moved, ...second.moved]),
          new Set([...movable, ...more]),
        );
        assert.deepEqual(second.started, [handedBack]);
        assert.equal(second.startedTotal, 1);

        for (const id of [...movable, ...more]) {
          const run = await store.getRun(id);
          assert.equal(run?.agentVersion, '2');
          assert.equal(run?.status, 'queued');
          const events = await store.listEvents(id, 0, 10);
          assert.deepEqual(events.at(-1)?.data, { agent: 'agent', from: '1', to: '2' });
          assert.equal(events.at(-1)?.type, 'run.migrated');
        }
        for (const id of [handedBack, running.id, otherAgent])
          assert.equal((await store.getRun(id))?.agentVersion, '1');
        assert.equal((await store.getRun(otherVersion))?.agentVersion, '3');
        assert.equal((await store.getRun(otherTenant))?.agentVersion, '1', 'another tenant’s');

        const onTwo = await store.claimRuns({
          owner: 'w2',
          limit: 10,
          leaseMs: 60_000,
          served: ['agent@2'],
        });
        assert.deepEqual(new Set(onTwo.map((r) => r.id)), new Set([...movable, ...more]));
      }));
  });
}
