// Store conformance for the order of claims inside a tenant and priority class (issue 27), run on
// every store: the run due first is claimed first (earliest deadline, else earliest admission), and
// a run re-queued after it was held keeps its place ahead of runs admitted after it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import { newRun, SERVED, withStore, type StoreFactory } from './conformance.ts';

const claim = (store: Store, limit: number, owner = 'w') =>
  store.claimRuns({ owner, limit, leaseMs: 60_000, served: SERVED });

/** Returns once the clock has moved past `ms`, so the next run is admitted strictly later. */
async function after(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((resolve) => setTimeout(resolve, 1));
}

export function runOrderStoreConformance(factory: StoreFactory): void {
  describe(`run order conformance: ${factory.name}`, () => {
    test('claims: the nearest deadline first, then the run admitted first', () =>
      withStore(factory, async (store, tenantId) => {
        const a = (await store.createRun(newRun(tenantId))).run;
        await after(a.createdAt);
        const b = (await store.createRun(newRun(tenantId, { budget: { deadlineMs: 5_000 } }))).run;
        await after(b.createdAt);
        const c = (await store.createRun(newRun(tenantId))).run;
        const d = (await store.createRun(newRun(tenantId, { budget: { deadlineMs: 1_000 } }))).run;
        const claimed = await claim(store, 4);
        assert.deepEqual(
          claimed.map((r) => r.id),
          [d.id, b.id, a.id, c.id],
        );
      }));

    test('claims: one at a time, the nearest deadline first', () =>
      withStore(factory, async (store, tenantId) => {
        const a = (await store.createRun(newRun(tenantId))).run;
        await after(a.createdAt);
        const b = (await store.createRun(newRun(tenantId, { budget: { deadlineMs: 5_000 } }))).run;
        assert.deepEqual(
          (await claim(store, 1)).map((r) => r.id),
          [b.id],
        );
        assert.deepEqual(
          (await claim(store, 1)).map((r) => r.id),
          [a.id],
        );
      }));

    test('claims: a run re-queued after it was held goes before runs admitted after it', () =>
      withStore(factory, async (store, tenantId) => {
        const first = (await store.createRun(newRun(tenantId))).run;
        await after(first.createdAt);
        const [held] = await claim(store, 1, 'w1');
        assert.equal(held?.id, first.id);
        const second = (await store.createRun(newRun(tenantId))).run;
        await after(second.createdAt);
        await store.releaseLeases('w1', [first.id]); // claimable again, later than `second`
        assert.deepEqual(
          (await claim(store, 1, 'w2')).map((r) => r.id),
          [first.id],
        );
        assert.deepEqual(
          (await claim(store, 1, 'w2')).map((r) => r.id),
          [second.id],
        );
      }));
  });
}
