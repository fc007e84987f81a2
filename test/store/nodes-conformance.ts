// Store conformance for sandbox nodes (0046), run on every store: a node is created pending with
// its token's hash (names and hashes unique), found by that hash, registers (url, capacity) and
// heartbeats its load; drain and undrain follow the transition table and a drained node stays
// drained when it registers again; a removed node's token no longer finds it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeTokenHash } from '../../src/domain/sandbox-nodes.ts';
import { withStore, type StoreFactory } from './conformance.ts';

const capacity = {
  cores: 4,
  memoryBytes: 8 * 2 ** 30,
  slots: 6,
  tiers: ['process', 'namespace'],
  images: ['img-1'],
  warmPools: { shell: 2 },
};

export function nodesStoreConformance(factory: StoreFactory): void {
  describe(`sandbox nodes: ${factory.name}`, () => {
    test('create, find by token, register, heartbeat, drain, remove', () =>
      withStore(factory, async (store) => {
        assert.deepEqual(await store.listNodes(), []);
        const created = await store.createNode('node-b', nodeTokenHash('tok-b'));
        assert.equal(created.state, 'pending');
        assert.equal(created.url, null);
        assert.equal(created.heartbeatAt, null);
        await assert.rejects(store.createNode('node-b', nodeTokenHash('other')), {
          code: 'node_exists',
        });
        await assert.rejects(store.createNode('node-c', nodeTokenHash('tok-b')), {
          code: 'node_exists',
        });
        const a = await store.createNode('node-a', nodeTokenHash('tok-a'));
        assert.equal((await store.findNodeByToken(nodeTokenHash('tok-a')))?.id, a.id);
        assert.equal(await store.findNodeByToken(nodeTokenHash('nope')), undefined);
        // A pending node's heartbeat is refused: it must register first.
        assert.equal(
          await store.heartbeatNode(a.id, { active: 1, cpu: 0, memoryUsedBytes: 0 }),
          false,
        );
        const before = Date.now();
        const registered = await store.registerNode(a.id, 'http://127.0.0.1:9000', capacity);
        assert.equal(registered.state, 'ready');
        assert.deepEqual(registered.capacity, capacity);
        assert.ok(registered.heartbeatAt! >= before);
        assert.equal(
          await store.heartbeatNode(a.id, { active: 3, cpu: 0.5, memoryUsedBytes: 1024 }),
          true,
        );
        const listed = await store.listNodes();
        assert.deepEqual(
          listed.map((n) => [n.name, n.state]),
          [
            ['node-a', 'ready'],
            ['node-b', 'pending'],
          ],
        );
        assert.deepEqual(listed[0]!.load, { active: 3, cpu: 0.5, memoryUsedBytes: 1024 });
        // Drain; a restart (register) keeps it drained; undrain; undrain twice is a conflict.
        assert.equal((await store.moveNode(a.id, 'drain')).state, 'draining');
        assert.equal(
          (await store.registerNode(a.id, 'http://127.0.0.1:9001', capacity)).state,
          'draining',
        );
        assert.equal((await store.moveNode(a.id, 'undrain')).state, 'ready');
        await assert.rejects(store.moveNode(a.id, 'undrain'), { code: 'node_state_conflict' });
        await store.removeNode(a.id);
        assert.equal(await store.findNodeByToken(nodeTokenHash('tok-a')), undefined);
        assert.equal(
          await store.heartbeatNode(a.id, { active: 0, cpu: 0, memoryUsedBytes: 0 }),
          false,
        );
        await assert.rejects(store.removeNode(a.id), { code: 'node_not_found' });
        await assert.rejects(store.moveNode(a.id, 'drain'), { code: 'node_not_found' });
        await assert.rejects(store.registerNode(a.id, 'http://x', capacity), {
          code: 'node_not_found',
        });
      }));
  });
}
