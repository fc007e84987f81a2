// Store conformance for serving processes (0019), run on every store: a process announces itself
// with the versions it serves and is listed while seen recently; a new announcement refreshes its
// versions and last-seen time but keeps its start; a retired process is gone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { withStore, type StoreFactory } from './conformance.ts';

const announcement = (workerId: string, served: string[], startedAt = 1_000) => ({
  workerId,
  role: 'worker',
  host: 'host-a',
  pid: 4242,
  served,
  startedAt,
});

export function processStoreConformance(factory: StoreFactory): void {
  describe(`serving processes: ${factory.name}`, () => {
    test('announce, refresh, list the recently seen, retire', () =>
      withStore(factory, async (store) => {
        assert.deepEqual(await store.listServingProcesses(0), []);
        const before = Date.now();
        await store.announceProcess(announcement('w-1', ['a@1']));
        await store.announceProcess(announcement('w-2', ['a@1', 'b@2'], 2_000));
        const listed = await store.listServingProcesses(0);
        assert.deepEqual(
          listed.map((p) => [p.workerId, p.served, p.role, p.host, p.pid, p.startedAt]),
          [
            ['w-1', ['a@1'], 'worker', 'host-a', 4242, 1_000],
            ['w-2', ['a@1', 'b@2'], 'worker', 'host-a', 4242, 2_000],
          ],
        );
        assert.ok(listed.every((p) => p.lastSeenAt >= before && p.lastSeenAt <= Date.now()));
        // Only processes seen since the cutoff are listed.
        assert.deepEqual(await store.listServingProcesses(Date.now() + 60_000), []);
        // A refresh changes the versions and last-seen time, not the start.
        await store.announceProcess(announcement('w-1', ['a@2'], 9_999));
        const w1 = (await store.listServingProcesses(0)).find((p) => p.workerId === 'w-1')!;
        assert.deepEqual(w1.served, ['a@2']);
        assert.equal(w1.startedAt, 1_000);
        await store.retireProcess('w-1');
        assert.deepEqual(
          (await store.listServingProcesses(0)).map((p) => p.workerId),
          ['w-2'],
        );
      }));
  });
}
