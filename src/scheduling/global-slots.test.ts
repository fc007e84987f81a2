// Two holders (two GlobalSlots, as two processes would have) on one real SQLite store: together
// they never hold more than the pool's limit or a tenant's cap, a waiter of one gets a slot the
// other gives back, and a holder that gives up (close) frees its slots for the other.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { GlobalSlots } from './global-slots.ts';

async function withHolders(
  fn: (a: GlobalSlots, b: GlobalSlots) => Promise<void>,
  caps: Record<string, number> = {},
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-global-slots-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const make = (holder: string) =>
    new GlobalSlots({
      store,
      holder,
      leaseMs: 60_000,
      retryMs: 10,
      limitOf: () => 4,
      capOf: (tenantId) => caps[tenantId],
    });
  const a = make('proc-a');
  const b = make('proc-b');
  await a.start();
  await b.start();
  try {
    await fn(a, b);
  } finally {
    await a.close();
    await b.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  return done;
};

describe('global slots over one store', () => {
  test('two holders never pass the limit; a released slot reaches the other holder’s waiter', () =>
    withHolders(async (a, b) => {
      const held = await Promise.all([1, 2, 3].map(() => a.acquire('gpu', 't1')));
      const fourth = await b.acquire('gpu', 't1');
      const fifth = b.acquire('gpu', 't2');
      assert.equal(await settled(fifth), false, 'the pool of 4 is full');
      held[0]!();
      const release = await fifth;
      assert.equal((a.held().get('gpu') ?? 0) + (b.held().get('gpu') ?? 0), 4);
      release();
      fourth();
      for (const r of held.slice(1)) r();
    }));

  test('a tenant cap holds over both holders', () =>
    withHolders(
      async (a, b) => {
        const first = await a.acquire('gpu', 'capped');
        const second = b.acquire('gpu', 'capped');
        assert.equal(await settled(second), false, 'cap 1');
        const other = await b.acquire('gpu', 'free');
        first();
        (await second)();
        other();
      },
      { capped: 1 },
    ));

  test('an aborted waiter leaves; a closed holder gives its slots to the other', () =>
    withHolders(async (a, b) => {
      const held = await Promise.all([1, 2, 3, 4].map(() => a.acquire('gpu', 't1')));
      const controller = new AbortController();
      const gaveUp = b.acquire('gpu', 't1', controller.signal);
      controller.abort(new Error('gave up'));
      await assert.rejects(gaveUp, /gave up/);
      const waiting = b.acquire('gpu', 't1');
      await a.close();
      (await waiting)();
      for (const r of held) r(); // harmless after close
    }));
});
