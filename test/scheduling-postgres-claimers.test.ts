// Fair claims from several Postgres stores at once: stores on one schema stand for processes; they
// claim concurrently, and the claims they make together keep the weighted shares (the fair state
// lives in the database: each claim locks a window of tenants by virtual time, skipping those
// another claimer holds), and no run is ever claimed by two of them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import type { RunRecord } from '../src/domain/records.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { newRun } from './store/conformance.ts';
import { TEST_DATABASE_URL, postgresAvailable } from './support/postgres.ts';

test('two Postgres claimers together keep the weighted shares of backlogged tenants', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const stores = [
    new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 }),
    new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 }),
  ];
  t.after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  const [one, two] = stores as [PostgresStore, PostgresStore];
  await one.migrate();
  await two.migrate();
  const heavy = await one.createTenant('heavy', 'k1', { weight: 2 });
  const light = await one.createTenant('light', 'k2', { weight: 1 });
  for (const tenant of [heavy, light]) {
    for (let i = 0; i < 400; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, () =>
          one.createRun(newRun(tenant.id, { input: null, priority: 'batch' })),
        ),
      );
    }
  }
  // Each store claims in its own loop, both at once, 3 runs per claim, until they have 300 between
  // them.
  const claimed: RunRecord[] = [];
  await Promise.all(
    stores.map(async (store, k) => {
      while (claimed.length < 300)
        claimed.push(
          ...(await store.claimRuns({
            owner: `w${k}`,
            limit: 3,
            leaseMs: 60_000,
            served: ['agent@1'],
          })),
        );
    }),
  );
  const first = claimed.slice(0, 300);
  const heavyShare = first.filter((r) => r.tenantId === heavy.id).length / first.length;
  assert.ok(
    Math.abs(heavyShare - 2 / 3) <= 0.1 * (2 / 3),
    `weight 2 of 3 should get about 2/3 of the claims, got ${heavyShare.toFixed(3)}`,
  );
  assert.ok(
    claimed.some((r) => r.leaseOwner === 'w0') && claimed.some((r) => r.leaseOwner === 'w1'),
    'both claimers claimed',
  );
  assert.equal(new Set(claimed.map((r) => r.id)).size, claimed.length, 'no run was claimed twice');
  // The virtual times both claimers advanced in the database agree with the claims: 1/weight per
  // claim.
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL,
    options: `-c search_path=${schema}`,
  });
  await client.connect();
  const vtimes = new Map(
    (
      await client.query<{ tenant_id: string; vtime: number }>(
        'SELECT tenant_id, vtime FROM fair_tenant_clocks',
      )
    ).rows.map((r) => [r.tenant_id, r.vtime]),
  );
  await client.end();
  const count = (id: string) => claimed.filter((r) => r.tenantId === id).length;
  assert.equal(vtimes.get(heavy.id), count(heavy.id) / 2);
  assert.equal(vtimes.get(light.id), count(light.id));
});

test('four Postgres claimers at once never claim a run twice, and claim every run', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const stores = Array.from(
    { length: 4 },
    () => new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 }),
  );
  t.after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  for (const store of stores) await store.migrate();
  const first = stores[0]!;
  const ids = new Set<string>();
  for (let i = 0; i < 40; i++) {
    const tenant = await first.createTenant(`t${i}`, `k${i}`, { weight: 1 + (i % 3) });
    await Promise.all(
      Array.from({ length: 15 }, async () => {
        const run = newRun(tenant.id, {
          input: null,
          priority: i % 4 === 0 ? 'interactive' : 'batch',
        });
        ids.add(run.id);
        await first.createRun(run);
      }),
    );
  }
  // Each store claims 1 to 4 runs at a time, all four at once, until every run is claimed (or a
  // claimer finds nothing 20 times in a row: another claimer holds the last tenants).
  const claimed: RunRecord[] = [];
  await Promise.all(
    stores.map(async (store, k) => {
      for (let round = 0, empty = 0; claimed.length < ids.size && empty < 20; round++) {
        const runs = await store.claimRuns({
          owner: `w${k}`,
          limit: 1 + ((round + k) % 4),
          leaseMs: 60_000,
          served: ['agent@1'],
        });
        empty = runs.length === 0 ? empty + 1 : 0;
        claimed.push(...runs);
      }
    }),
  );
  const seen = new Map<string, string>();
  for (const run of claimed) {
    assert.ok(
      !seen.has(run.id),
      `run ${run.id} was claimed by ${seen.get(run.id)} and ${run.leaseOwner}`,
    );
    seen.set(run.id, run.leaseOwner!);
  }
  assert.deepEqual(new Set(seen.keys()), ids, 'every run was claimed exactly once');
  assert.ok(new Set(seen.values()).size > 1, 'more than one claimer claimed');
});
