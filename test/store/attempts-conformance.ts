// Conformance of the attempts record (src/domain/attempts.ts) on every store: a claim that takes a
// lease starts an attempt; the commit that ends, parks or yields the run ends it; a release ends it
// as released; a claim over an expired lease ends it as lease_expired and reports the recovery. The
// totals on the run: `attempts`, and `leaseExpiries` (never reset, unlike the poison counter).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RunRecord } from '../../src/domain/records.ts';
import type { Store } from '../../src/store/store.ts';
import { newRun, rejectsWith, SERVED, withStore, type StoreFactory } from './conformance.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function claimOne(
  store: Store,
  owner: string,
  options: { leaseMs?: number; probation?: boolean; heldAtLosses?: number } = {},
): Promise<RunRecord> {
  const [run] = await store.claimRuns({
    owner,
    limit: 1,
    leaseMs: options.leaseMs ?? 60_000,
    served: SERVED,
    ...(options.probation === true ? { probation: true } : {}),
    ...(options.heldAtLosses !== undefined ? { heldAtLosses: options.heldAtLosses } : {}),
  });
  assert.ok(run, `${owner} claimed a run`);
  return run;
}

const endings = async (store: Store, id: string) =>
  (await store.listAttempts(id)).map((a) => [a.number, a.worker, a.ending]);

export function attemptsStoreConformance(factory: StoreFactory): void {
  describe(`attempts conformance: ${factory.name}`, () => {
    test('each claim is an attempt; parking and ending close it, with its times kept', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const first = await claimOne(store, 'w1');
        assert.equal(first.attempts, 1);
        assert.equal(first.recovered, undefined, 'a fresh claim recovers nothing');
        assert.deepEqual(await endings(store, id), [[1, 'w1', 'running']]);
        await store.commit({
          runId: id,
          leaseToken: first.leaseToken,
          expectedStateVersion: first.stateVersion,
          run: {
            status: 'waiting',
            waitingReason: 'timer',
            wakeAt: Date.now(),
            releaseLease: true,
          },
        });
        await pause(2);
        const second = await claimOne(store, 'w2');
        assert.equal(second.attempts, 2);
        await store.commit({
          runId: id,
          leaseToken: second.leaseToken,
          expectedStateVersion: second.stateVersion,
          run: { status: 'succeeded', result: 'ok', releaseLease: true },
        });
        const attempts = await store.listAttempts(id);
        assert.deepEqual(
          attempts.map((a) => [a.number, a.worker, a.leaseToken, a.ending]),
          [
            [1, 'w1', first.leaseToken, 'parked'],
            [2, 'w2', second.leaseToken, 'completed'],
          ],
        );
        for (const a of attempts) assert.ok(a.endedAt !== null && a.endedAt >= a.startedAt);
        assert.ok(attempts[1]!.startedAt >= attempts[0]!.endedAt!, 'the first times are kept');
        const run = await store.getRun(id);
        assert.deepEqual([run?.attempts, run?.leaseExpiries], [2, 0]);
      }));

    test('a claim over an expired lease ends that attempt lease_expired and reports the recovery; leaseExpiries is never reset', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const lost = await claimOne(store, 'w1', { leaseMs: 1 });
        await pause(5);
        const taken = await claimOne(store, 'w2', { probation: true });
        assert.deepEqual(taken.recovered, {
          previousWorker: 'w1',
          leaseExpiredAt: lost.leaseExpiresAt,
          attempt: 2,
        });
        assert.deepEqual([taken.attempts, taken.leaseExpiries, taken.leaseLosses], [2, 1, 1]);
        assert.deepEqual(await endings(store, id), [
          [1, 'w1', 'lease_expired'],
          [2, 'w2', 'running'],
        ]);
        assert.equal((await store.listAttempts(id))[0]!.endedAt, lost.leaseExpiresAt);
        // The dead worker's late end is fenced off and ends no attempt.
        await rejectsWith(
          store.commit({
            runId: id,
            leaseToken: lost.leaseToken,
            expectedStateVersion: lost.stateVersion,
            run: { status: 'succeeded', result: 'late', releaseLease: true },
          }),
          'stale_write',
        );
        const progressed = await store.commit({
          runId: id,
          leaseToken: taken.leaseToken,
          expectedStateVersion: taken.stateVersion,
          journal: [{ seq: 1, kind: 'step', name: 's', status: 'succeeded', result: 1 }],
          run: { counters: { steps: 1 } },
        });
        const afterCommit = await store.getRun(id);
        assert.deepEqual(
          [afterCommit?.leaseLosses, afterCommit?.leaseExpiries],
          [0, 1],
          'a commit resets the poison counter, never the expiries',
        );
        await store.releaseLeases('w2', [id]);
        const third = await claimOne(store, 'w3');
        assert.equal(third.recovered, undefined, 'a released lease is no recovery');
        await store.requestCancel(id);
        const cancelling = await store.getRun(id);
        await store.commit({
          runId: id,
          leaseToken: third.leaseToken,
          expectedStateVersion: cancelling!.stateVersion,
          run: { status: 'cancelled', releaseLease: true },
        });
        assert.ok(progressed.stateVersion > 0);
        assert.deepEqual(await endings(store, id), [
          [1, 'w1', 'lease_expired'],
          [2, 'w2', 'released'],
          [3, 'w3', 'cancelled'],
        ]);
        const run = await store.getRun(id);
        assert.deepEqual([run?.attempts, run?.leaseExpiries], [3, 1]);
      }));

    test('a suspect held back unleased starts no attempt; the claim that runs it alone reports the recovery', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        await claimOne(store, 'w1', { leaseMs: 1 });
        await pause(5);
        const second = await claimOne(store, 'w2', { leaseMs: 1, probation: true });
        await pause(5);
        const held = await claimOne(store, 'busy', { probation: true, heldAtLosses: 2 });
        assert.deepEqual([held.leaseOwner, held.attempts, held.recovered], [null, 2, undefined]);
        assert.deepEqual(await endings(store, id), [
          [1, 'w1', 'lease_expired'],
          [2, 'w2', 'lease_expired'],
        ]);
        const alone = await claimOne(store, 'alone', { probation: true });
        assert.deepEqual(alone.recovered, {
          previousWorker: 'w2',
          leaseExpiredAt: second.leaseExpiresAt,
          attempt: 3,
        });
        assert.deepEqual([alone.attempts, alone.leaseExpiries], [3, 2]);
        assert.deepEqual((await endings(store, id)).at(-1), [3, 'alone', 'running']);
      }));

    test('a preempted run ends its attempt preempted', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId, { priority: 'batch' }))).run.id;
        const claimed = await claimOne(store, 'w1');
        await store.commit({
          runId: id,
          leaseToken: claimed.leaseToken,
          expectedStateVersion: claimed.stateVersion,
          run: {
            status: 'queued',
            releaseLease: true,
            waitingReason: 'preempted',
            wakeAt: null,
            preempted: true,
          },
        });
        assert.deepEqual(await endings(store, id), [[1, 'w1', 'preempted']]);
      }));
  });
}
