// Store conformance for pool slots leased across processes (0044), run on every store: grants never
// pass a pool's limit or a tenant's cap summed over holders; a holder above its fair share gets
// nothing while another waits, and the waiter is visible to the others; an expired holder's slots
// stop counting and its token is fenced (no renewal, no return); a dropped holder gives all back.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import { rejectsWith, withStore, type StoreFactory } from './conformance.ts';
import { until } from '../support/distributed.ts';

const LEASE_MS = 60_000;
const POOL = 'browser';

function asker(store: Store, token: number, limit = 8, tenantCap: number | null = null) {
  return (count: number, tenantId = 't-a', wanted = count) =>
    store.grantPoolSlots({ pool: POOL, tenantId, token, limit, tenantCap, count, wanted });
}

export function poolSlotsStoreConformance(factory: StoreFactory): void {
  describe(`pool slot leases: ${factory.name}`, () => {
    test('the limit and a tenant cap hold summed over holders; returned slots can be granted again', () =>
      withStore(factory, async (store) => {
        const a = await store.openPoolSlotHolder('proc-a', LEASE_MS);
        const b = await store.openPoolSlotHolder('proc-b', LEASE_MS);
        assert.ok(b.token > a.token, 'fencing tokens increase');
        assert.equal((await asker(store, a.token)(5, 't-b')).granted, 5);
        assert.equal((await asker(store, b.token)(5, 't-b')).granted, 3, 'only 3 left of 8');
        assert.equal((await asker(store, b.token)(1, 't-b')).granted, 0);
        assert.equal(await store.returnPoolSlots(POOL, 't-b', a.token, 2, 0), true);
        assert.equal((await asker(store, b.token)(4, 't-b')).granted, 2);
        assert.equal(
          await store.returnPoolSlots(POOL, 't-b', a.token, 9, 0),
          false,
          'never below zero',
        );
        // A tenant cap of 3 over both holders, in another pool's terms: the same pool, tenant t-a.
        await store.returnPoolSlots(POOL, 't-b', a.token, 3, 0);
        await store.returnPoolSlots(POOL, 't-b', b.token, 5, 0);
        assert.equal((await asker(store, a.token, 8, 3)(2)).granted, 2);
        assert.equal((await asker(store, b.token, 8, 3)(3)).granted, 1, 'cap 3: one left');
        assert.equal((await asker(store, b.token, 8, 3)(3, 't-c')).granted, 3, 'others unaffected');
        const rows = await store.listPoolSlotLeases();
        const held = (tenant: string) =>
          rows.filter((r) => r.tenantId === tenant).reduce((n, r) => n + r.slots, 0);
        assert.equal(held('t-a'), 3);
        assert.equal(held('t-c'), 3);
        assert.deepEqual([...new Set(rows.map((r) => r.holder))].sort(), ['proc-a', 'proc-b']);
      }));

    test('concurrent grants from four holders never pass the limit and reach it', () =>
      withStore(factory, async (store) => {
        const holders = await Promise.all(
          [1, 2, 3, 4].map((i) => store.openPoolSlotHolder(`proc-${i}`, LEASE_MS)),
        );
        const grants = await Promise.all(
          Array.from({ length: 24 }, (_, i) => asker(store, holders[i % 4]!.token)(1)),
        );
        assert.equal(
          grants.reduce((n, g) => n + g.granted, 0),
          8,
        );
      }));

    test('while another holder waits, a holder gets no more than its fair share; the waiter is seen', () =>
      withStore(factory, async (store) => {
        const a = await store.openPoolSlotHolder('proc-a', LEASE_MS);
        const b = await store.openPoolSlotHolder('proc-b', LEASE_MS);
        assert.deepEqual(await asker(store, a.token)(8), { granted: 8, fairShare: null });
        assert.equal((await asker(store, b.token)(2, 't-a', 4)).granted, 0);
        const renewal = await store.renewPoolSlotHolder(a.token, LEASE_MS);
        assert.equal(renewal.renewed, true);
        assert.deepEqual(renewal.poolsWantedByOthers, [POOL]);
        await store.returnPoolSlots(POOL, 't-a', a.token, 4, 0);
        const again = await asker(store, a.token)(1);
        assert.deepEqual(again, { granted: 0, fairShare: 4 }, 'a holds its share of 8 / 2');
        assert.equal((await asker(store, b.token)(4)).granted, 4);
        assert.deepEqual(
          (await store.renewPoolSlotHolder(a.token, LEASE_MS)).poolsWantedByOthers,
          [],
          'b waits no more',
        );
      }));

    test('an expired holder’s slots come back; its token is fenced', () =>
      withStore(factory, async (store) => {
        const lost = await store.openPoolSlotHolder('proc-lost', 300);
        const live = await store.openPoolSlotHolder('proc-live', LEASE_MS);
        assert.equal((await asker(store, lost.token)(8)).granted, 8);
        assert.equal((await asker(store, live.token)(1)).granted, 0);
        await until(
          'the lost holder’s slots to come back',
          async () => ((await asker(store, live.token)(8)).granted === 8 ? true : undefined),
          10_000,
        );
        assert.equal((await store.renewPoolSlotHolder(lost.token, LEASE_MS)).renewed, false);
        assert.equal(await store.returnPoolSlots(POOL, 't-a', lost.token, 1, 0), false);
        await rejectsWith(asker(store, lost.token)(1), 'pool_slot_lease_lost');
        assert.deepEqual(
          (await store.listPoolSlotLeases()).map((r) => [r.holder, r.slots]),
          [['proc-live', 8]],
        );
      }));

    test('a dropped holder gives every slot back', () =>
      withStore(factory, async (store) => {
        const a = await store.openPoolSlotHolder('proc-a', LEASE_MS);
        const b = await store.openPoolSlotHolder('proc-b', LEASE_MS);
        assert.equal((await asker(store, a.token)(6, 't-x')).granted, 6);
        await store.dropPoolSlotHolder(a.token);
        assert.equal((await asker(store, b.token)(8)).granted, 8);
        await rejectsWith(asker(store, a.token)(1), 'pool_slot_lease_lost');
      }));
  });
}
