// Conformance of a run's progress and stall fields on every store: a commit writes ctx.progress's
// latest state and the stall the engine saw; a later commit that does not mention them keeps them;
// a commit clears the stall; the run's end clears it too, while its last progress stays.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RunCommit } from '../../src/store/store.ts';
import { newRun, SERVED, withStore, type StoreFactory } from './conformance.ts';

export function progressStoreConformance(factory: StoreFactory): void {
  describe(`progress conformance: ${factory.name}`, () => {
    test('progress and stalled are written, kept, cleared by a commit and by the end', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const [claimed] = await store.claimRuns({
          owner: 'w1',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(claimed);
        assert.equal(claimed.progress, null);
        assert.equal(claimed.stalled, null);
        let version = claimed.stateVersion;
        const commit = (run: RunCommit['run']) =>
          store.commit({
            runId: id,
            leaseToken: claimed.leaseToken,
            expectedStateVersion: version++,
            run,
          });
        const progress = {
          state: { phase: 'fetching', done: 3, of: [1, 'x'] },
          at: 1_700_000_000_123,
        };
        await commit({ progress });
        const stall = {
          since: 1_700_000_001_000,
          effect: { seq: 2, kind: 'tool', name: 'search', attempt: 1 },
          policy: 'alert' as const,
        };
        await commit({ stalled: stall });
        await commit({ counters: { steps: 1 }, waitingReason: null });
        let run = await store.getRun(id);
        assert.deepEqual(run?.progress, progress);
        assert.deepEqual(run?.stalled, stall);
        await commit({ stalled: null });
        assert.equal((await store.getRun(id))?.stalled, null);
        await commit({ stalled: { ...stall, effect: null, policy: 'fail' } });
        assert.equal((await store.getRun(id))?.stalled?.policy, 'fail');
        await commit({ status: 'succeeded', result: 'ok', releaseLease: true });
        run = await store.getRun(id);
        assert.equal(run?.stalled, null, 'the end clears the stall');
        assert.deepEqual(run?.progress, progress, 'the last progress stays');
      }));
  });
}
