// Store conformance for bounded replay (issue 22), on every store: a run's latest snapshot is its
// last committed `checkpoint` journal entry (state and replay state as written, null before any),
// and the journal read from a position returns exactly the positions from it on, in order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JournalWrite } from '../../src/store/store.ts';
import { newRun, SERVED, withStore, type StoreFactory } from './conformance.ts';

const step = (seq: number): JournalWrite => ({
  seq,
  kind: 'step',
  name: `s${seq}`,
  status: 'succeeded',
  result: seq,
  worker: 'w',
});

const checkpoint = (seq: number, state: unknown): JournalWrite => ({
  seq,
  kind: 'checkpoint',
  name: 'checkpoint',
  status: 'succeeded',
  result: {
    state: state as never,
    replay: { random: [1, 2, 3, seq], channels: { inbox: 2 }, retriesSpent: 1 },
  },
  endedAt: 1_000 + seq,
  worker: 'w',
});

export function snapshotStoreConformance(factory: StoreFactory): void {
  describe(`run snapshots: ${factory.name}`, () => {
    test('latestSnapshot is the last checkpoint entry; loadJournalFrom reads from a position on', () =>
      withStore(factory, async (store, tenantId) => {
        const { run } = await store.createRun(newRun(tenantId));
        const other = (await store.createRun(newRun(tenantId))).run;
        assert.equal(await store.latestSnapshot(run.id), null, 'no checkpoint yet');
        const [claimed] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.equal(claimed?.id, run.id);
        let version = claimed!.stateVersion;
        const commit = (journal: JournalWrite[]) =>
          store.commit({
            runId: run.id,
            leaseToken: claimed!.leaseToken,
            expectedStateVersion: version++,
            journal,
          });
        await commit([step(1), step(2)]);
        await commit([checkpoint(3, { done: 2 })]);
        await commit([step(4), step(5)]);
        await commit([checkpoint(6, { done: 4, notes: ['a', 'b'] })]);
        await commit([step(7)]);

        const latest = await store.latestSnapshot(run.id);
        assert.deepEqual(latest, {
          runId: run.id,
          seq: 6,
          state: { done: 4, notes: ['a', 'b'] },
          replay: { random: [1, 2, 3, 6], channels: { inbox: 2 }, retriesSpent: 1 },
          at: 1_006,
        });
        assert.equal(await store.latestSnapshot(other.id), null, 'another run has none');

        const from = await store.loadJournalFrom(run.id, latest!.seq);
        assert.deepEqual(
          from.map((e) => [e.seq, e.kind]),
          [
            [6, 'checkpoint'],
            [7, 'step'],
          ],
        );
        assert.deepEqual(
          from,
          (await store.loadJournal(run.id)).filter((e) => e.seq >= 6),
          'the same entries as the whole journal holds',
        );
        assert.deepEqual(await store.loadJournalFrom(run.id, 8), []);
        assert.equal((await store.loadJournalFrom(run.id, 1)).length, 7);
      }));
  });
}
