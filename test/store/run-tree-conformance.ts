// Store conformance for the run tree (GET /v1/runs/:id/tree), on every store: a run's children and
// grandchildren breadth first with their depth and the parent-end policy their parent's journal
// gave them (detach for a child neither a journal entry nor its own on_parent_end names); the
// limit cuts the walk; another tenant's run is no tree at all.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newRunId } from '../../src/domain/ids.ts';
import type { Json } from '../../src/domain/json.ts';
import type { Store } from '../../src/store/store.ts';
import { newRun, SERVED, withStore, type StoreFactory } from './conformance.ts';

/** Claims `runId` and commits the spawn of children (policy per child: undefined is the default). */
async function spawn(
  store: Store,
  tenantId: string,
  runId: string,
  children: { id: string; onParentEnd?: string }[],
): Promise<void> {
  const [claimed] = await store.claimRuns({
    owner: 'w',
    limit: 1,
    leaseMs: 60_000,
    served: SERVED,
  });
  assert.equal(claimed?.id, runId);
  await store.commit({
    runId,
    leaseToken: claimed!.leaseToken,
    expectedStateVersion: claimed!.stateVersion,
    journal: children.map((c, i) => ({
      seq: i + 1,
      kind: 'child' as const,
      name: 'agent',
      status: 'waiting' as const,
      args: (c.onParentEnd === undefined
        ? { childRunId: c.id }
        : { childRunId: c.id, onParentEnd: c.onParentEnd }) as Json,
      worker: 'w',
    })),
    createRuns: children.map((c) => newRun(tenantId, { id: c.id, parentRunId: runId })),
    run: { status: 'waiting', waitingReason: 'child', releaseLease: true },
  });
}

export function runTreeStoreConformance(factory: StoreFactory): void {
  describe(`run tree: ${factory.name}`, () => {
    test('listRunTree: the root, its children and grandchildren breadth first, with depth and policy; limited; tenant-scoped', () =>
      withStore(factory, async (store, tenantId) => {
        const { run: root } = await store.createRun(newRun(tenantId));
        const [a, b, g] = [newRunId(), newRunId(), newRunId()].sort();
        await spawn(store, tenantId, root.id, [{ id: a! }, { id: b!, onParentEnd: 'detach' }]);
        await spawn(store, tenantId, a!, [{ id: g!, onParentEnd: 'wait' }]);

        const tree = await store.listRunTree(tenantId, root.id, 100);
        assert.deepEqual(
          tree.map((n) => [n.run.id, n.depth, n.onParentEnd, n.run.parentRunId]),
          [
            [root.id, 0, null, null],
            [a, 1, 'cancel', root.id],
            [b, 1, 'detach', root.id],
            [g, 2, 'wait', a],
          ],
        );
        assert.equal(tree[1]!.run.status, 'waiting');

        const sub = await store.listRunTree(tenantId, a!, 100);
        assert.deepEqual(
          sub.map((n) => [n.run.id, n.depth]),
          [
            [a, 0],
            [g, 1],
          ],
        );
        assert.deepEqual(
          (await store.listRunTree(tenantId, root.id, 2)).map((n) => n.run.id),
          [root.id, a],
        );
        const other = await store.createTenant(`other-${newRunId()}`, `h-${newRunId()}`);
        assert.deepEqual(await store.listRunTree(other.id, root.id, 100), []);
        assert.deepEqual(await store.listRunTree(tenantId, newRunId(), 100), []);
      }));

    test('listRunTree: a child its parent’s journal does not hold, with no policy of its own, is detached', () =>
      withStore(factory, async (store, tenantId) => {
        const { run: root } = await store.createRun(newRun(tenantId));
        const { run: started } = await store.createRun(newRun(tenantId, { parentRunId: root.id }));
        const tree = await store.listRunTree(tenantId, root.id, 100);
        assert.deepEqual(
          tree.map((n) => [n.run.id, n.onParentEnd]),
          [
            [root.id, null],
            [started.id, 'detach'],
          ],
        );
      }));
  });
}
