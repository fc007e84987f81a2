// Store conformance for runs made from runs, on every store: a reset copies the journal prefix
// (states, results, execution ids) and records its lineage; a rerun copies nothing; positions that
// cannot be reused and live sources are refused before anything is created; idempotency keys return
// the first copy; `rerunOf` filters lists.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newRunId } from '../../src/domain/ids.ts';
import type { RunRecord } from '../../src/domain/records.ts';
import type { JournalWrite, Store } from '../../src/store/store.ts';
import { newRun, rejectsWith, SERVED, withStore, type StoreFactory } from './conformance.ts';

/** Claims the run and ends it `failed` with the given journal (as a worker would have). */
async function endWith(
  store: Store,
  tenantId: string,
  journal: JournalWrite[],
): Promise<RunRecord> {
  const { run } = await store.createRun(newRun(tenantId, { input: { q: 'source' } }));
  const [claimed] = await store.claimRuns({
    owner: 'w',
    limit: 1,
    leaseMs: 60_000,
    served: SERVED,
  });
  assert.equal(claimed?.id, run.id);
  await store.commit({
    runId: run.id,
    leaseToken: claimed!.leaseToken,
    expectedStateVersion: claimed!.stateVersion,
    journal,
    run: {
      status: 'failed',
      error: { code: 'agent_error', message: 'boom' },
      releaseLease: true,
    },
  });
  return (await store.getRun(run.id))!;
}

const settled = (seq: number, extra: Partial<JournalWrite> = {}): JournalWrite => ({
  seq,
  kind: 'model',
  name: 'gpt',
  status: 'succeeded',
  result: { text: `answer ${seq}` },
  worker: 'w',
  ...extra,
});

export function lineageStoreConformance(factory: StoreFactory): void {
  describe(`run lineage: ${factory.name}`, () => {
    test('reset copies positions 1..position with their results and execution ids, and records resetFrom and the seed', () =>
      withStore(factory, async (store, tenantId) => {
        const source = await endWith(store, tenantId, [
          settled(1),
          settled(2, {
            kind: 'tool',
            name: 'charge',
            executionId: 'x.2',
            effectClass: 'side-effect',
          }),
          settled(3),
          settled(4, {
            status: 'failed',
            result: null,
            error: { code: 'tool_failed', message: 'no' },
          }),
        ]);
        const { run, created } = await store.copyRun({
          run: newRun(tenantId, { input: source.input }),
          sourceRunId: source.id,
          mode: 'reset',
          position: 3,
        });
        assert.equal(created, true);
        assert.deepEqual(run.resetFrom, { runId: source.id, position: 3 });
        assert.equal(run.rerunOf, null);
        assert.equal(run.randomSeed, source.id, 'the source seeds the copy’s randomness');
        assert.equal(run.status, 'queued');
        assert.deepEqual(run.counters.steps, 0, 'the copy has spent nothing yet');
        const journal = await store.loadJournal(run.id);
        assert.deepEqual(
          journal.map((e) => [e.seq, e.kind, e.name, e.status, e.executionId, e.leaseToken]),
          [
            [1, 'model', 'gpt', 'succeeded', null, 0],
            [2, 'tool', 'charge', 'succeeded', 'x.2', 0],
            [3, 'model', 'gpt', 'succeeded', null, 0],
          ],
        );
        assert.deepEqual(journal[2]!.result, { text: 'answer 3' });
        assert.equal((await store.loadJournal(source.id)).length, 4, 'the source is untouched');
        const events = await store.listEvents(run.id, 0, 10);
        assert.deepEqual(
          events.map((e) => e.type),
          ['run.created', 'run.reset'],
        );
        // A reset of the reset keeps the first seed.
        const [claimed] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        await store.commit({
          runId: run.id,
          leaseToken: claimed!.leaseToken,
          expectedStateVersion: claimed!.stateVersion,
          run: { status: 'succeeded', result: 'ok', releaseLease: true },
        });
        const again = await store.copyRun({
          run: newRun(tenantId),
          sourceRunId: run.id,
          mode: 'reset',
          position: 1,
        });
        assert.equal(again.run.randomSeed, source.id);
        assert.equal((await store.loadJournal(again.run.id)).length, 1);
      }));

    test('rerun copies nothing and records rerunOf; lists filter by rerunOf', () =>
      withStore(factory, async (store, tenantId) => {
        const source = await endWith(store, tenantId, [settled(1)]);
        const first = await store.copyRun({
          run: newRun(tenantId, { input: source.input }),
          sourceRunId: source.id,
          mode: 'rerun',
        });
        const second = await store.copyRun({
          run: newRun(tenantId, { input: source.input }),
          sourceRunId: source.id,
          mode: 'rerun',
        });
        await store.createRun(newRun(tenantId));
        assert.equal(first.run.rerunOf, source.id);
        assert.equal(first.run.resetFrom, null);
        assert.equal(first.run.randomSeed, null, 'a rerun draws its own random values');
        assert.deepEqual(await store.loadJournal(first.run.id), []);
        const reruns = await store.listRuns(tenantId, { limit: 10, rerunOf: source.id });
        assert.deepEqual(
          reruns.map((r) => r.id),
          [second.run.id, first.run.id],
        );
        const fetched = await store.getRun(first.run.id);
        assert.equal(fetched?.rerunOf, source.id);
      }));

    test('an idempotency key returns the first copy; a different request under it conflicts', () =>
      withStore(factory, async (store, tenantId) => {
        const source = await endWith(store, tenantId, [settled(1), settled(2)]);
        const request = (hash: string) => ({
          run: newRun(tenantId, { idempotencyKey: 'reset-1', requestHash: hash }),
          sourceRunId: source.id,
          mode: 'reset' as const,
          position: 2,
        });
        const first = await store.copyRun(request('A'));
        const again = await store.copyRun(request('A'));
        assert.deepEqual([again.created, again.run.id], [false, first.run.id]);
        assert.equal((await store.loadJournal(first.run.id)).length, 2, 'copied once');
        await rejectsWith(store.copyRun(request('B')), 'idempotency_conflict');
      }));

    test('refused before anything is created: a live source, a position past the journal, an unsettled or compensated prefix, another tenant', () =>
      withStore(factory, async (store, tenantId) => {
        const live = (await store.createRun(newRun(tenantId, { agentVersion: '2' }))).run; // not served: stays queued
        await rejectsWith(
          store.copyRun({
            run: newRun(tenantId),
            sourceRunId: live.id,
            mode: 'reset',
            position: 0,
          }),
          'run_not_terminal',
        );
        const source = await endWith(store, tenantId, [
          settled(1),
          settled(2, {
            kind: 'tool',
            name: 'book',
            executionId: 'x.2',
            effectClass: 'side-effect',
          }),
          settled(3, {
            kind: 'tool',
            name: 'pay',
            status: 'unknown',
            result: null,
            executionId: 'x.3',
          }),
          settled(5),
          settled(6, {
            kind: 'compensation',
            name: 'book',
            args: { executionId: 'x.2' },
            result: null,
          }),
        ]);
        const reset = (position: number) =>
          store.copyRun({ run: newRun(tenantId), sourceRunId: source.id, mode: 'reset', position });
        await rejectsWith(reset(6), 'reset_position_out_of_range'); // 6 is the compensation, not the agent's
        await rejectsWith(reset(5), 'reset_position_unsettled'); // 3 unknown, 4 never committed
        await rejectsWith(reset(2), 'reset_position_unsettled'); // 2 was compensated
        await assert.rejects(reset(3), (e: unknown) => {
          const details = (e as { details?: Record<string, unknown> }).details;
          return details?.seq === 2 && details.reason === 'compensated' && details.resetFrom === 1;
        });
        const other = await store.createTenant('other', `k-${newRunId()}`);
        await rejectsWith(
          store.copyRun({ run: newRun(other.id), sourceRunId: source.id, mode: 'rerun' }),
          'run_not_found',
        );
        const before = await store.listRuns(tenantId, { limit: 50 });
        assert.equal(before.length, 2, 'no refused copy created a run');
        const ok = await reset(1);
        assert.equal((await store.loadJournal(ok.run.id)).length, 1);
      }));
  });
}
