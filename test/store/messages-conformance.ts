// Store conformance for messages (issue 21), run on every store: a message for the key a parked run
// waits on queues it; a duplicate id delivers nothing (also when racing); racing posts on one
// channel take distinct indexes 1..n; an ended run refuses new messages but still answers a
// duplicate; an unknown run is run_not_found.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { messageKey } from '../../src/domain/messages.ts';
import {
  claimAndCommit,
  newRun,
  rejectsWith,
  withStore,
  type StoreFactory,
} from './conformance.ts';

export function messagesStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (messages): ${factory.name}`, () => {
    test('delivery wakes the receive; duplicates deliver nothing; racing posts get distinct indexes', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        await claimAndCommit(store, id, {
          journal: [{ seq: 1, kind: 'input', name: messageKey('inbox', 1), status: 'waiting' }],
          run: { status: 'waiting', waitingReason: 'input', releaseLease: true },
        });
        const post = (msgId: string, channel = 'inbox') =>
          store.postMessage(id, { channel, id: msgId, payload: { msgId }, from: null });
        const racing = await Promise.all(Array.from({ length: 8 }, () => post('m1')));
        assert.equal(racing.filter((d) => !d.duplicate).length, 1, 'one delivery of m1');
        assert.ok(racing.every((d) => d.index === 1));
        assert.equal(
          (await store.getRun(id))?.status,
          'queued',
          'the awaited message woke the run',
        );
        const envelope = (await store.getInput(id, messageKey('inbox', 1)))?.value as {
          id: string;
          index: number;
          payload: unknown;
        };
        assert.deepEqual(
          [envelope.id, envelope.index, envelope.payload],
          ['m1', 1, { msgId: 'm1' }],
        );

        const more = await Promise.all(['a', 'b', 'c', 'd'].map((m) => post(m)));
        assert.deepEqual(
          more.map((d) => d.index).toSorted(),
          [2, 3, 4, 5],
          'racing posts on one channel take distinct indexes',
        );
        assert.equal((await post('other', 'elsewhere')).index, 1, 'indexes count per channel');
        const delivered = (await store.listEvents(id, 0, 100)).filter(
          (e) => e.type === 'message.delivered',
        );
        assert.equal(delivered.length, 6);

        await claimAndCommit(store, id, {
          run: { status: 'succeeded', result: 1, releaseLease: true },
        });
        await rejectsWith(post('late'), 'run_terminal');
        assert.equal((await post('m1')).duplicate, true, 'a retried post is still answered');
        await rejectsWith(
          store.postMessage('run_missing', { channel: 'inbox', id: 'x', payload: 1, from: null }),
          'run_not_found',
        );
      }));
  });
}
