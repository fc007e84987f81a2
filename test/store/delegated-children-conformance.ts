// Store conformance for children started with a delegated token (issue 20), on every store: the
// commit that ends their parent (succeeded, failed or cancelled) cancels those whose policy is
// `cancel` in the same transaction, cascading through their own ends; `detach` ones, ended ones and
// ones already cancelling are left alone, and a ctx.child child (named by the journal) is cancelled
// once. A delegated child of a parent that has ended is refused; the run tree shows each policy.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isKeelError } from '../../src/domain/keel-error.ts';
import type { RunRecord } from '../../src/domain/records.ts';
import type { Store } from '../../src/store/store.ts';
import { newRun, withStore, type StoreFactory } from './conformance.ts';

/** Parents run agent `parent`, children agent `agent`: a claim served `parent@1` takes a parent. */
const PARENT = { agent: 'parent' } as const;

async function claim(store: Store, agentKey: string, runId: string): Promise<RunRecord> {
  const [claimed] = await store.claimRuns({
    owner: 'w',
    limit: 1,
    leaseMs: 60_000,
    served: [agentKey],
  });
  assert.equal(claimed?.id, runId);
  return claimed!;
}

/** Claims the run and commits its end with `status` (a cancelling run ends cancelled). */
async function end(
  store: Store,
  run: RunRecord,
  status: 'succeeded' | 'failed' | 'cancelled',
  extra: { cancelRuns?: string[]; journalChild?: string } = {},
): Promise<void> {
  const claimed = await claim(store, `${run.agent}@1`, run.id);
  await store.commit({
    runId: run.id,
    leaseToken: claimed.leaseToken,
    expectedStateVersion: claimed.stateVersion,
    run: { status, releaseLease: true, ...(status === 'succeeded' ? { result: 1 } : {}) },
    events: [{ type: `run.${status}`, data: { status } }],
    ...(extra.cancelRuns !== undefined ? { cancelRuns: extra.cancelRuns } : {}),
  });
}

async function statusOf(store: Store, id: string): Promise<string | undefined> {
  return (await store.getRun(id))?.status;
}

async function cancellingEvents(store: Store, id: string) {
  return (await store.listEvents(id, 0, 100))
    .filter((e) => e.type === 'run.cancelling')
    .map((e) => (e.data as { by: string }).by);
}

export function delegatedChildrenStoreConformance(factory: StoreFactory): void {
  describe(`delegated children: ${factory.name}`, () => {
    for (const status of ['succeeded', 'failed'] as const)
      test(`a parent's ${status} end cancels its live 'cancel' children in its commit, not 'detach' ones`, () =>
        withStore(factory, async (store, tenantId) => {
          const { run: parent } = await store.createRun(newRun(tenantId, PARENT));
          const child = (id: string | null, onParentEnd?: 'cancel' | 'detach') =>
            store.createRun(
              newRun(tenantId, { parentRunId: id, ...(onParentEnd ? { onParentEnd } : {}) }),
            );
          const { run: cancel } = await child(parent.id, 'cancel');
          const { run: detach } = await child(parent.id, 'detach');
          const { run: journal } = await child(parent.id); // a ctx.child child: no policy column
          await end(store, parent, status, { cancelRuns: [journal.id] });

          assert.equal(await statusOf(store, parent.id), status);
          assert.equal(await statusOf(store, cancel.id), 'cancelling');
          assert.deepEqual(await cancellingEvents(store, cancel.id), [`parent ${parent.id}`]);
          assert.equal(await statusOf(store, detach.id), 'queued');
          assert.deepEqual(await cancellingEvents(store, detach.id), []);
          // The journal's child is cancelled by the engine's list, once.
          assert.deepEqual(await cancellingEvents(store, journal.id), [`parent ${parent.id}`]);
        }));

    test('a cancelled parent cancels them, and a cancelled child its own (the cascade goes through each end)', () =>
      withStore(factory, async (store, tenantId) => {
        const { run: parent } = await store.createRun(newRun(tenantId, PARENT));
        const { run: child } = await store.createRun(
          // Its own agent: a claim of it never takes the parent or the grandchild (created in the
          // same millisecond, they may come first in claim order).
          newRun(tenantId, { agent: 'child', parentRunId: parent.id, onParentEnd: 'cancel' }),
        );
        const { run: grandchild } = await store.createRun(
          newRun(tenantId, { parentRunId: child.id, onParentEnd: 'cancel' }),
        );
        await store.requestCancel(parent.id);
        // The request alone ends nothing: the parent's end does, in its own commit.
        assert.equal(await statusOf(store, child.id), 'queued');
        await end(store, parent, 'cancelled');
        assert.equal(await statusOf(store, parent.id), 'cancelled');
        assert.equal(await statusOf(store, child.id), 'cancelling');
        assert.equal(await statusOf(store, grandchild.id), 'queued');
        await end(store, (await store.getRun(child.id))!, 'cancelled');
        assert.equal(await statusOf(store, child.id), 'cancelled');
        assert.equal(await statusOf(store, grandchild.id), 'cancelling');
        assert.deepEqual(await cancellingEvents(store, grandchild.id), [`parent ${child.id}`]);
      }));

    test('a child held by a worker becomes cancelling; ended and cancelling children are not touched', () =>
      withStore(factory, async (store, tenantId) => {
        const { run: parent } = await store.createRun(newRun(tenantId, PARENT));
        const make = async () =>
          (
            await store.createRun(
              newRun(tenantId, { agent: 'held', parentRunId: parent.id, onParentEnd: 'cancel' }),
            )
          ).run;
        const held = await make();
        await claim(store, 'held@1', held.id);
        const ended = await make();
        await end(store, ended, 'succeeded');
        const cancelling = await make();
        await store.requestCancel(cancelling.id);
        const endedVersion = (await store.getRun(ended.id))!.stateVersion;
        const cancellingVersion = (await store.getRun(cancelling.id))!.stateVersion;

        await end(store, parent, 'succeeded');
        const heldNow = (await store.getRun(held.id))!;
        assert.equal(heldNow.status, 'cancelling');
        assert.equal(heldNow.leaseOwner, 'w'); // its worker is told and ends it
        assert.equal((await store.getRun(ended.id))!.stateVersion, endedVersion);
        assert.equal((await store.getRun(ended.id))!.status, 'succeeded');
        assert.equal((await store.getRun(cancelling.id))!.stateVersion, cancellingVersion);
        assert.deepEqual(await cancellingEvents(store, cancelling.id), ['api']);
      }));

    test('a delegated child of a parent that has ended, or is cancelling, is refused', () =>
      withStore(factory, async (store, tenantId) => {
        const { run: parent } = await store.createRun(newRun(tenantId, PARENT));
        await store.requestCancel(parent.id);
        const refused = async () => {
          await assert.rejects(
            store.createRun(newRun(tenantId, { parentRunId: parent.id, onParentEnd: 'detach' })),
            (e: unknown) => isKeelError(e) && e.code === 'delegated_token_revoked',
          );
        };
        await refused();
        await end(store, parent, 'cancelled');
        await refused();
        const tree = await store.listRunTree(tenantId, parent.id, 100);
        assert.equal(tree.length, 1);
      }));

    test('listRunTree: a delegated child shows its own policy', () =>
      withStore(factory, async (store, tenantId) => {
        const { run: root } = await store.createRun(newRun(tenantId, PARENT));
        const ids = [];
        for (const onParentEnd of ['cancel', 'detach'] as const)
          ids.push(
            (await store.createRun(newRun(tenantId, { parentRunId: root.id, onParentEnd }))).run.id,
          );
        const policies = new Map(
          (await store.listRunTree(tenantId, root.id, 100)).map((n) => [n.run.id, n.onParentEnd]),
        );
        assert.equal(policies.get(root.id), null);
        assert.equal(policies.get(ids[0]!), 'cancel');
        assert.equal(policies.get(ids[1]!), 'detach');
      }));
  });
}
