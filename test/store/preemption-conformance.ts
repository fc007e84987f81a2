// Store conformance for preemption, run on every store: the starved-interactive query that claim
// loops ask before preempting (what counts as starved, what does not), and the commit that yields a
// preempted run back to the queue (counted, stamped, journal kept, the next claim measurable as its
// requeue delay).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { requeueDelayMs } from '../../src/scheduling/preemption.ts';
import type { Store } from '../../src/store/store.ts';
import { newRun, SERVED, withStore, type StoreFactory } from './conformance.ts';

const claim = (store: Store, limit: number, owner = 'w') =>
  store.claimRuns({ owner, limit, leaseMs: 60_000, served: SERVED });
const starved = (store: Store, cutoff: number, limit = 100) =>
  store.starvedInteractive({ cutoff, served: SERVED, limit });

export function preemptionStoreConformance(factory: StoreFactory): void {
  describe(`preemption: ${factory.name}`, () => {
    test('starved interactive runs: claimable interactive runs of served versions, of tenants under their cap, older than the cutoff', () =>
      withStore(factory, async (store, tenantId) => {
        const before = Date.now() - 1;
        assert.deepEqual(await starved(store, Date.now()), { count: 0, oldestSince: null });
        await store.createRun(newRun(tenantId, { priority: 'batch' }));
        await store.createRun(newRun(tenantId, { agentVersion: '2' })); // not served here
        const a = (await store.createRun(newRun(tenantId))).run;
        await store.createRun(newRun(tenantId));
        await store.createRun(newRun(tenantId));
        const now = Date.now() + 1;
        const all = await starved(store, now);
        assert.equal(
          all.count,
          3,
          'the three served interactive runs; not the batch run, not the unserved version',
        );
        assert.ok(
          all.oldestSince !== null && all.oldestSince >= before && all.oldestSince <= a.createdAt,
          'since the oldest became claimable',
        );
        assert.equal(
          (await starved(store, before)).count,
          0,
          'none claimable before the cutoff: none starved yet',
        );
        assert.equal((await starved(store, now, 2)).count, 2, 'counted up to the limit');
        // A claimed run is no longer waiting.
        const claimed = await claim(store, 1);
        assert.equal(claimed[0]?.priority, 'interactive');
        assert.equal((await starved(store, Date.now() + 1)).count, 2);
        // A tenant at its concurrency cap cannot take a freed slot: its runs do not count.
        const capped = await store.createTenant('capped', 'k-capped', { maxConcurrentRuns: 1 });
        await store.createRun(newRun(capped.id));
        await store.createRun(newRun(capped.id));
        assert.equal((await starved(store, Date.now() + 1)).count, 4);
        const [held] = await store
          .claimRuns({ owner: 'w', limit: 10, leaseMs: 60_000, served: SERVED })
          .then((runs) => runs.filter((r) => r.tenantId === capped.id));
        assert.ok(held, "one of the capped tenant's runs is held");
        const after = await starved(store, Date.now() + 1);
        assert.equal(
          after.count,
          0,
          'the capped tenant is at its cap; the other runs were claimed',
        );
      }));

    test('a preempted run: back to queued with its journal, counted and stamped; its next claim measures the requeue delay', () =>
      withStore(factory, async (store, tenantId) => {
        await store.createRun(newRun(tenantId, { priority: 'batch' }));
        const [run] = await claim(store, 1);
        assert.ok(run);
        assert.deepEqual([run.preemptions, run.preemptedAt, requeueDelayMs(run)], [0, null, null]);
        const step = await store.commit({
          runId: run.id,
          leaseToken: run.leaseToken,
          expectedStateVersion: run.stateVersion,
          journal: [{ seq: 1, kind: 'step', name: 's1', status: 'succeeded', result: 1 }],
          run: { counters: { steps: 1 } },
        });
        await store.commit({
          runId: run.id,
          leaseToken: run.leaseToken,
          expectedStateVersion: step.stateVersion,
          run: {
            status: 'queued',
            releaseLease: true,
            waitingReason: 'preempted',
            wakeAt: null,
            preempted: true,
          },
          events: [{ type: 'run.preempted', data: { waitedMs: 2500 } }],
        });
        const queued = (await store.getRun(run.id))!;
        assert.equal(queued.status, 'queued');
        assert.equal(queued.waitingReason, 'preempted');
        assert.equal(queued.leaseOwner, null);
        assert.equal(queued.preemptions, 1);
        assert.ok(queued.preemptedAt !== null && queued.preemptedAt >= run.updatedAt);
        assert.deepEqual(
          (await store.loadJournal(run.id)).map((e) => [e.seq, e.status, e.result]),
          [[1, 'succeeded', 1]],
          'the journal is kept',
        );
        const [again] = await claim(store, 1, 'w2');
        assert.equal(again?.id, run.id, 'claimable again at once');
        assert.equal(again.waitingReason, null);
        assert.equal(again.preemptions, 1);
        const delay = requeueDelayMs(again);
        assert.ok(
          delay !== null && delay >= 0 && delay < 60_000,
          `the claim after the preemption measures the requeue delay (${delay})`,
        );
        // A later claim (the lease given back without preemption) is not a requeue after a
        // preemption.
        await store.releaseLeases('w2', [run.id]);
        const [third] = await claim(store, 1, 'w3');
        assert.equal(third?.id, run.id);
        assert.equal(requeueDelayMs(third), null);
        assert.equal(third.preemptions, 1);
      }));
  });
}
