// `npx node bench/fair-claims.ts [--seconds <s>] [--limit <runs per claim>] [--processes 1,2,4]`:
// fair claims on Postgres from several processes at once. 1,000 tenants are backlogged (weights 1,
// 2 and 4, each with more queued runs than it can be served in the bench); for each count of
// claiming processes, that many real child processes (each its own PostgresStore, its own
// connections) claim in a loop for the same window of time. It reports claims/s (runs claimed per
// second, all processes together), checks that no run was claimed twice, and measures fairness as
// the share error per 1,000-dispatch window: the claims of all processes merged in the order they
// returned, cut in consecutive windows of 1,000, and in each window every tenant's dispatched share
// set against its weight share among the backlogged tenants (all of them, throughout).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { type BackloggedTenant, pickOne } from '../src/domain/fair-share.ts';
import { newRunId } from '../src/domain/ids.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';

const DATABASE_URL =
  process.env.KEEL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TENANTS = 1_000;
const WEIGHTS = [1, 2, 4] as const;
const WINDOW = 1_000;
/** Children start together this long after the last says it is ready. */
const START_DELAY_MS = 500;
const SERVED = ['bench@1'];

function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1]!;
}

interface Claim {
  runId: string;
  tenantId: string;
  at: number;
}

/**
 * A child: connects, says it is ready, reads the window of time to claim in from its stdin, claims
 * in it and prints one JSON line per claimed run.
 */
async function child(schema: string, index: number, limit: number) {
  const store = new PostgresStore({ connectionString: DATABASE_URL, schema, poolSize: 2 });
  await store.health();
  process.stdout.write('ready\n');
  const input = createInterface({ input: process.stdin });
  const [startAt, endAt] = JSON.parse(
    await new Promise<string>((resolve) => input.once('line', resolve)),
  ) as [number, number];
  input.close();
  const lines: string[] = [];
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
  while (Date.now() < endAt) {
    const runs = await store.claimRuns({
      owner: `bench-${index}`,
      limit,
      leaseMs: 3_600_000,
      served: SERVED,
    });
    const at = performance.timeOrigin + performance.now();
    for (const run of runs)
      lines.push(JSON.stringify({ runId: run.id, tenantId: run.tenantId, at }));
  }
  await store.close();
  process.stdout.write(lines.length === 0 ? '' : `${lines.join('\n')}\n`);
}

async function fill(store: PostgresStore): Promise<Map<string, number>> {
  const weights = new Map<string, number>();
  for (let i = 0; i < TENANTS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, TENANTS - i) }, async (_, k) => {
        const weight = WEIGHTS[(i + k) % WEIGHTS.length]!;
        const tenant = await store.createTenant(`t${i + k}`, `key-${i + k}`, { weight });
        weights.set(tenant.id, weight);
        await store.createRun({
          id: newRunId(),
          tenantId: tenant.id,
          agent: 'bench',
          agentVersion: '1',
          input: null,
          priority: 'batch',
          budget: {},
          metadata: null,
          parentRunId: null,
          idempotencyKey: null,
          requestHash: null,
        });
      }),
    );
  }
  return weights;
}

/** Copies each tenant's one run until it has `perWeight` × weight + 20 runs (one statement). */
async function multiplyRuns(client: pg.Client, perWeight: number): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'runs' ORDER BY ordinal_position`,
  );
  const columns = rows.map((r) => `"${r.name}"`);
  const values = rows.map((r) => (r.name === 'id' ? `r.id || '_' || g` : `r."${r.name}"`));
  await client.query(
    `INSERT INTO runs (${columns.join(', ')})
     SELECT ${values.join(', ')}
     FROM runs r JOIN tenants t ON t.id = r.tenant_id
     CROSS JOIN LATERAL generate_series(1, $1::int * t.weight + 19) g`,
    [perWeight],
  );
  await client.query('ANALYZE');
}

interface Fairness {
  windows: number;
  /** Total variation distance between dispatched shares and weight shares: ½ Σ |share − target|. */
  tvMean: number;
  tvMax: number;
  /** Largest |claims − 1,000 × target| of any tenant in any window, in claims. */
  maxTenantErrorClaims: number;
  /** Largest relative error of a weight class's share (all tenants of weight w together). */
  maxClassError: number;
}

function fairness(claims: readonly Claim[], weights: ReadonlyMap<string, number>): Fairness {
  const total = [...weights.values()].reduce((a, b) => a + b, 0);
  let tvSum = 0;
  let tvMax = 0;
  let maxTenant = 0;
  let maxClass = 0;
  let windows = 0;
  for (let from = 0; from + WINDOW <= claims.length; from += WINDOW) {
    windows += 1;
    const counts = new Map<string, number>();
    for (const c of claims.slice(from, from + WINDOW))
      counts.set(c.tenantId, (counts.get(c.tenantId) ?? 0) + 1);
    let tv = 0;
    const classShare = new Map<number, number>();
    for (const [tenantId, weight] of weights) {
      const share = (counts.get(tenantId) ?? 0) / WINDOW;
      const target = weight / total;
      tv += Math.abs(share - target) / 2;
      maxTenant = Math.max(maxTenant, Math.abs(share - target) * WINDOW);
      classShare.set(weight, (classShare.get(weight) ?? 0) + share);
    }
    for (const w of WEIGHTS) {
      const target = (w * [...weights.values()].filter((x) => x === w).length) / total;
      maxClass = Math.max(maxClass, Math.abs((classShare.get(w) ?? 0) - target) / target);
    }
    tvSum += tv;
    tvMax = Math.max(tvMax, tv);
  }
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    windows,
    tvMean: round(windows === 0 ? Number.NaN : tvSum / windows),
    tvMax: round(tvMax),
    maxTenantErrorClaims: round(maxTenant),
    maxClassError: round(maxClass),
  };
}

async function measure(
  schema: string,
  processes: number,
  seconds: number,
  limit: number,
): Promise<Claim[]> {
  const ready: Promise<void>[] = [];
  const children: ReturnType<typeof spawn>[] = [];
  const results = Promise.all(
    Array.from({ length: processes }, (_, index) => {
      const proc = spawn(
        process.execPath,
        [new URL(import.meta.url).pathname, '--child', schema, String(index), String(limit)],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      children.push(proc);
      const claims: Claim[] = [];
      const lines = createInterface({ input: proc.stdout! });
      ready.push(new Promise((resolve) => lines.once('line', () => resolve())));
      lines.on('line', (line) => {
        if (line !== 'ready') claims.push(JSON.parse(line) as Claim);
      });
      return new Promise<Claim[]>((resolve, reject) =>
        proc.on('close', (code) =>
          code === 0 ? resolve(claims) : reject(new Error(`claimer ${index} exited ${code}`)),
        ),
      );
    }),
  );
  await Promise.all(ready);
  const startAt = Date.now() + START_DELAY_MS;
  for (const proc of children)
    proc.stdin!.end(`${JSON.stringify([startAt, startAt + seconds * 1000])}\n`);
  return (await results).flat().sort((a, b) => a.at - b.at);
}

/**
 * The serial reference: the claims one claimer holding the whole backlog under one lock makes (what
 * the fair-clock row lock gave: the planner's one-slot pick, pickOne, over every tenant), from a
 * cold start, for the same tenants and weights: the fairness the measured claims are set against.
 */
function serialReference(claims: number): Fairness {
  const tenants: BackloggedTenant[] = Array.from({ length: TENANTS }, (_, i) => ({
    tenantId: `t${i}`,
    weight: WEIGHTS[i % WEIGHTS.length]!,
    vtime: 0,
    room: Infinity,
    headKey: 0,
    interactiveHead: false,
  }));
  const byId = new Map(tenants.map((t) => [t.tenantId, t]));
  let clock = 0;
  const log: Claim[] = [];
  for (let i = 0; i < claims; i++) {
    const pick = pickOne(tenants, clock)!;
    byId.get(pick.tenantId)!.vtime = pick.vtime;
    clock = pick.clock;
    log.push({ runId: String(i), tenantId: pick.tenantId, at: i });
  }
  return fairness(log, new Map(tenants.map((t) => [t.tenantId, t.weight])));
}

async function main(): Promise<void> {
  if (process.argv.includes('--reference')) {
    console.log(
      JSON.stringify({ serialReference: serialReference(Number(argument('claims', '6000'))) }),
    );
    return;
  }
  const seconds = Number(argument('seconds', '20'));
  const limit = Number(argument('limit', '1'));
  const counts = argument('processes', '1,2,4').split(',').map(Number);
  const schema = `keel_bench_fair_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  const store = new PostgresStore({ connectionString: DATABASE_URL, schema, poolSize: 8 });
  try {
    await store.migrate();
    const weights = await fill(store);
    console.error('tenants created');
    await admin.query(`SET search_path = ${schema}`);
    await multiplyRuns(admin, 25);
    console.error('runs queued');
    const report: Record<string, unknown>[] = [];
    const seen = new Set<string>();
    for (const processes of counts) {
      const claims = await measure(schema, processes, seconds, limit);
      for (const claim of claims) {
        assert.ok(!seen.has(claim.runId), `run ${claim.runId} was claimed twice`);
        seen.add(claim.runId);
      }
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM tenants t WHERE NOT EXISTS
           (SELECT 1 FROM runs r WHERE r.tenant_id = t.id AND r.lease_owner IS NULL)`,
      );
      report.push({
        processes,
        limit,
        seconds,
        claims: claims.length,
        claimsPerSecond: Math.round(claims.length / seconds),
        tenantsRunDry: rows[0].n,
        fairness: fairness(claims, weights),
      });
      console.error(JSON.stringify(report.at(-1)));
    }
    const { rows } = await admin.query(
      'SELECT count(*)::int AS claimed, count(DISTINCT id)::int AS distinct_runs FROM runs WHERE lease_owner IS NOT NULL',
    );
    assert.equal(rows[0].claimed, seen.size, 'every claim the processes saw is a claimed run');
    console.log(JSON.stringify({ tenants: TENANTS, weights: WEIGHTS, results: report }, null, 2));
  } finally {
    await store.close();
    if (!process.argv.includes('--keep'))
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    else console.error(`kept schema ${schema}`);
    await admin.end();
  }
}

if (process.argv[2] === '--child') {
  const [schema, index, limit] = process.argv.slice(3);
  await child(schema!, Number(index), Number(limit));
} else {
  await main();
}
