// Model RPM/TPM limits are shared by every process on one Postgres database: two stores (two
// connection pools, as two processes have) reserving at once never count past a limit together, a
// refused reservation says how long to wait, settling corrects the tokens counted, and two gateways
// calling one limited model get the limit between them, not each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineModel } from '../src/sdk/define.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { PostgresRateWindows } from '../src/store/postgres/rate-windows.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';

const skip =
  !(await postgresAvailable()) && !process.env.CI ? 'PostgreSQL is not available' : false;

async function twoProcesses(t: { after(fn: () => Promise<void>): void }) {
  const db = await createFreshDatabase();
  const stores = [
    new PostgresStore({ connectionString: db.url }),
    new PostgresStore({ connectionString: db.url }),
  ];
  await stores[0]!.migrate();
  t.after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await db.drop();
  });
  return { db, stores, windows: stores.map((s) => new PostgresRateWindows(s)) };
}

test('two processes reserving at once count one request limit together, and a refusal says how long to wait', {
  skip,
}, async (t) => {
  const { windows } = await twoProcesses(t);
  const key = [{ key: 'model:shared', rpm: 50, tpm: undefined }];
  const verdicts = await Promise.all(
    Array.from({ length: 120 }, (_, i) => windows[i % 2]!.reserve(key, 10)),
  );
  const granted = verdicts.filter((v) => v.granted);
  assert.equal(granted.length, 50);
  for (const v of verdicts) {
    if (v.granted) continue;
    assert.equal(v.blocked, 'model:shared');
    assert.ok(v.waitMs > 0 && v.waitMs <= 61_000, `wait ${v.waitMs} ms`);
  }
  // Another key is not affected.
  assert.equal(
    (await windows[1]!.reserve([{ key: 'model:other', rpm: 1, tpm: undefined }], 10)).granted,
    true,
  );
});

test('tokens per minute: reservations count the estimate, settling corrects it, all keys or none are counted', {
  skip,
}, async (t) => {
  const { windows, db } = await twoProcesses(t);
  const keys = [
    { key: 'account:org', rpm: undefined, tpm: 1_000 },
    { key: 'tenant:t1', rpm: undefined, tpm: 10_000 },
  ];
  const first = await Promise.all(
    Array.from({ length: 15 }, (_, i) => windows[i % 2]!.reserve(keys, 100)),
  );
  const held = first.filter((v) => v.granted);
  assert.equal(held.length, 10);
  const refused = first.find((v) => !v.granted);
  assert.equal(refused?.granted === false && refused.blocked, 'account:org');
  // A refused reservation counted nothing under the key that had room.
  const [tenantRow] = await db.query<{ requests: number; tokens: string }>(
    "SELECT sum(requests)::int AS requests, sum(tokens)::text AS tokens FROM rate_windows WHERE key = 'tenant:t1'",
  );
  assert.deepEqual(tenantRow, { requests: 10, tokens: '1000' });
  // Each call really used 10 tokens: settling frees 900 of the account's minute.
  for (const v of held)
    if (v.granted)
      await windows[0]!.settle(
        keys.map((k) => k.key),
        v.second,
        10 - 100,
      );
  const after = await Promise.all(
    Array.from({ length: 10 }, (_, i) => windows[i % 2]!.reserve(keys, 100)),
  );
  assert.equal(after.filter((v) => v.granted).length, 9);
});

test('two gateways on one database share a model limit of 20 requests per minute', {
  skip,
  timeout: 60_000,
}, async (t) => {
  const { windows } = await twoProcesses(t);
  const model = defineModel({ name: 'metered', provider: 'mock', limits: { rpm: 20 } });
  const gateways = windows.map((w) => {
    const gateway = new ModelGateway([model]);
    gateway.shareLimits(w);
    return gateway;
  });
  const stop = new AbortController();
  t.after(() => stop.abort());
  let answered = 0;
  const waits: string[] = [];
  const calls = Array.from({ length: 30 }, (_, i) =>
    gateways[i % 2]!.call(
      { model: 'metered', messages: [{ role: 'user', content: `call ${i}` }] },
      {
        signal: stop.signal,
        onWait: (_reason, detail) => waits.push(detail),
      },
    ).then(
      () => {
        answered += 1;
      },
      () => {},
    ),
  );
  // Every call that fits is answered within moments; the other 10 wait for the minute to roll over.
  const deadline = Date.now() + 20_000;
  while (answered < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(answered, 20);
  assert.ok(
    waits.length >= 10 &&
      waits.every((w) => w.includes('model:metered: 20 requests per minute (all processes)')),
    waits[0],
  );
  stop.abort();
  await Promise.all(calls);
  assert.equal(answered, 20);
});
