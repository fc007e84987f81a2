// `npx node bench/scheduler.ts [--quick] [--postgres] [--tenants <n>]`: the cost of fair claiming
// across tenants 1,000 tenants unless --tenants says otherwise (10,000 runs in all, fewer with
// --quick).
// 1. Decisions: fair-order decisions per second of the pure planner (src/domain/fair-share.ts) with
//    the tenants backlogged, one claim per decision and 32 per claim.
// 2. Claims: latency of a real store claim with the tenants backlogged, fair order against the
//    order Keel used before (interactive first, then oldest:
//    bench/sql/*-claim-runs-priority-order.sql), on identical fresh stores, both in a transaction
//    of their own with lease-only durability. Runs are created, never executed.
// 3. Pool grants: in one effect pool (src/scheduling/pool.ts, 64 slots) with the tenants' effects
//    waiting, the latency of releasing a slot and granting it to the next waiter in fair order, and
//    grants per second.
// It prints JSON figures and asserts nothing but that every claim got runs.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { newRunId } from '../src/domain/ids.ts';
import { statusesAllowing } from '../src/domain/run-status.ts';
import { FairClaim, type BackloggedTenant } from '../src/domain/fair-share.ts';
import { Pool } from '../src/scheduling/pool.ts';
import { PgStatement } from '../src/store/postgres/statements.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { NamedStatement } from '../src/store/sqlite/statements.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';

const quick = process.argv.includes('--quick');
const tenantsFlag = process.argv.indexOf('--tenants');
const TENANTS = tenantsFlag === -1 ? 1_000 : Number(process.argv[tenantsFlag + 1]);
if (!Number.isSafeInteger(TENANTS) || TENANTS < 1)
  throw new Error('--tenants needs a whole number from 1');
const RUNS_PER_TENANT = Math.ceil((quick ? 3_000 : 10_000) / TENANTS);
const CLAIMS = quick ? 100 : 400;
const BATCH = 32;
const SERVED = JSON.stringify(['bench@1']);
const CLAIMABLE = JSON.stringify(statusesAllowing('claim'));
const DATABASE_URL =
  process.env.KEEL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Latency {
  claims: number;
  perClaim: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

function summarize(samples: number[], perClaim: number): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3));
  return {
    claims: samples.length,
    perClaim,
    meanMs: Number((samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(3)),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

/**
 * Planner decisions per second: FairClaim over TENANTS backlogged tenants, vtimes carried from
 * claim to claim.
 */
function decisionsPerSecond(perClaim: number): number {
  const tenants: BackloggedTenant[] = Array.from({ length: TENANTS }, (_, i) => ({
    tenantId: `t${i}`,
    weight: 1 + (i % 4),
    vtime: 0,
    room: Infinity,
    headKey: i,
    interactiveHead: i % 3 === 0,
  }));
  let clock = 0;
  let decisions = 0;
  const started = performance.now();
  while (performance.now() - started < 1_000) {
    const claim = new FairClaim<string>(tenants, clock, perClaim);
    const plan = claim.next()!;
    claim.record(new Map([...plan].map(([id, n]) => [id, Array.from({ length: n }, () => id)])));
    const result = claim.result();
    for (const t of tenants) t.vtime = result.vtimes.get(t.tenantId) ?? t.vtime;
    clock = result.clock;
    decisions += result.items.length;
  }
  return Math.round(decisions / ((performance.now() - started) / 1000));
}

/** TENANTS tenants with RUNS_PER_TENANT batch runs each (one in ten interactive). */
async function fill(store: Store): Promise<void> {
  await store.migrate();
  for (let t = 0; t < TENANTS; t += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, TENANTS - t) }, async (_, k) => {
        const tenant = await store.createTenant(`bench-${t + k}`, randomUUID(), {
          weight: 1 + ((t + k) % 4),
        });
        for (let i = 0; i < RUNS_PER_TENANT; i++) {
          await store.createRun({
            id: newRunId(),
            tenantId: tenant.id,
            agent: 'bench',
            agentVersion: '1',
            input: null,
            priority: i % 10 === 0 ? 'interactive' : 'batch',
            budget: {},
            metadata: null,
            parentRunId: null,
            idempotencyKey: null,
            requestHash: null,
          });
        }
      }),
    );
  }
}

async function timeClaims(
  claim: (limit: number) => Promise<number>,
): Promise<{ single: Latency; batch: Latency }> {
  const measure = async (n: number, limit: number) => {
    const samples: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      const got = await claim(limit);
      samples.push(performance.now() - started);
      if (got === 0)
        throw new Error('a claim found no runs: the backlog is too small for this many claims');
    }
    return summarize(samples, limit);
  };
  return { single: await measure(CLAIMS, 1), batch: await measure(Math.floor(CLAIMS / 4), BATCH) };
}

async function sqliteClaims(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-fair-'));
  try {
    const fair = new SqliteStore({ path: join(dir, 'fair.db') });
    const old = new SqliteStore({ path: join(dir, 'old.db') });
    await Promise.all([fill(fair), fill(old)]);
    const fairTimes = await timeClaims(
      async (limit) =>
        (await fair.claimRuns({ owner: 'w', limit, leaseMs: 600_000, served: ['bench@1'] })).length,
    );
    const sql = readFileSync(
      new URL('./sql/sqlite-claim-runs-priority-order.sql', import.meta.url),
      'utf8',
    );
    const statement = new NamedStatement(
      old.connection,
      'sqlite-claim-runs-priority-order.sql',
      sql,
    );
    const oldTimes = await timeClaims(async (limit) => {
      const now = Date.now();
      old.connection.exec('BEGIN IMMEDIATE');
      const rows = statement.all({
        owner: 'w',
        now,
        lease_expires_at: now + 600_000,
        served: SERVED,
        limit,
        claimable_statuses: CLAIMABLE,
      });
      old.connection.exec('COMMIT');
      return rows.length;
    });
    await Promise.all([fair.close(), old.close()]);
    return {
      store: 'sqlite',
      fair: fairTimes,
      before: oldTimes,
      addedMsPerClaim: added(fairTimes, oldTimes),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresClaims(): Promise<Record<string, unknown>> {
  const schemas = [
    `keel_bench_fair_${randomUUID().slice(0, 8)}`,
    `keel_bench_old_${randomUUID().slice(0, 8)}`,
  ];
  const fair = new PostgresStore({ connectionString: DATABASE_URL, schema: schemas[0] });
  const old = new PostgresStore({ connectionString: DATABASE_URL, schema: schemas[1] });
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    options: `-c search_path=${schemas[1]}`,
    max: 1,
  });
  try {
    await Promise.all([fill(fair), fill(old)]);
    const fairTimes = await timeClaims(
      async (limit) =>
        (await fair.claimRuns({ owner: 'w', limit, leaseMs: 600_000, served: ['bench@1'] })).length,
    );
    const statement = new PgStatement(
      'bench-claim-runs-priority-order',
      readFileSync(
        new URL('./sql/postgres-claim-runs-priority-order.sql', import.meta.url),
        'utf8',
      ),
    );
    const oldTimes = await timeClaims(async (limit) => {
      const client = await pool.connect();
      try {
        const now = Date.now();
        await client.query('BEGIN; SET LOCAL synchronous_commit = off');
        const rows = await statement.rows(client, {
          owner: 'w',
          now,
          lease_expires_at: now + 600_000,
          served: SERVED,
          limit,
          claimable_statuses: CLAIMABLE,
        });
        await client.query('COMMIT');
        return rows.length;
      } finally {
        client.release();
      }
    });
    return {
      store: 'postgres',
      fair: fairTimes,
      before: oldTimes,
      addedMsPerClaim: added(fairTimes, oldTimes),
    };
  } finally {
    await Promise.all([fair.close(), old.close(), pool.end()]);
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    for (const schema of schemas) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

function added(
  fair: { single: Latency; batch: Latency },
  old: { single: Latency; batch: Latency },
) {
  const diff = (a: number, b: number) => Number((a - b).toFixed(3));
  return {
    single: diff(fair.single.meanMs, old.single.meanMs),
    [`batch${BATCH}`]: diff(fair.batch.meanMs, old.batch.meanMs),
  };
}

/**
 * Release-and-grant in one pool with TENANTS tenants waiting (each keeps waiters queued), weights
 * 1–4.
 */
async function poolGrants(): Promise<{
  grants: number;
  perGrant: Latency;
  grantsPerSecond: number;
}> {
  const SLOTS = 64;
  const GRANTS = quick ? 5_000 : 20_000;
  const pool = new Pool(
    'bench',
    { limit: SLOTS, maxQueued: 10_000_000 },
    { weightOf: (id) => 1 + (Number(id.slice(1)) % 4), capOf: () => undefined },
  );
  const held: Array<() => void> = [];
  const want = (tenantId: string) =>
    void pool
      .acquire({
        tenantId,
        priority: Number(tenantId.slice(1)) % 3 === 0 ? 'interactive' : 'batch',
      })
      .then((release) => held.push(release));
  const queuedEach = Math.max(2, Math.ceil((SLOTS + GRANTS) / TENANTS) + 1);
  for (let i = 0; i < TENANTS; i++) for (let k = 0; k < queuedEach; k++) want(`t${i}`);
  await new Promise((r) => setImmediate(r));
  const samples: number[] = [];
  const started = performance.now();
  for (let g = 0; g < GRANTS; g++) {
    const release = held.shift()!;
    const t0 = performance.now();
    release(); // frees a slot: the pool grants it to the next waiter in fair order, synchronously
    samples.push(performance.now() - t0);
    await Promise.resolve(); // the grant's promise settles: its holder joins `held`
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    grants: GRANTS,
    perGrant: summarize(samples, 1),
    grantsPerSecond: Math.round(GRANTS / seconds),
  };
}

const results: Record<string, unknown> = {
  tenantsBacklogged: TENANTS,
  runsPerTenant: RUNS_PER_TENANT,
  plannerDecisionsPerSecond: {
    onePerClaim: decisionsPerSecond(1),
    [`${BATCH}PerClaim`]: decisionsPerSecond(BATCH),
  },
  poolGrants: await poolGrants(),
  claims: [
    await sqliteClaims(),
    ...(process.argv.includes('--postgres') ? [await postgresClaims()] : []),
  ],
};
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
