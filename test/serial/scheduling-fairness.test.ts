// Tenant fairness over HTTP with real Keel processes: tenant A floods the queue with 3,000 batch
// runs, then tenant B (same weight) submits 30 interactive runs; B's p95 latency must stay within
// 2× of B running alone (measured in the same test, on the same processes), and A must keep
// finishing runs meanwhile. On SQLite (`keel dev`) and on Postgres with two processes claiming
// (`keel server` + `keel worker`).
//
// Each run is one call to a mock model with a latency of 100 to 300 ms (by input); a process holds
// at most ACTIVE_RUNS runs, so workers are the scarce resource and the claim order decides who
// waits. B submits its runs one request after another, as an interactive client does. Latency is
// the server's own: a run's endedAt minus its createdAt.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type ApiClient,
  createTenant,
  distributedScene,
  submitAll,
  until,
} from '../support/distributed.ts';
import { startKeelProcess, startKeelRole } from '../support/keel-process.ts';
import { postgresAvailable } from '../support/postgres.ts';

const AGENTS = fileURLToPath(new URL('../fixtures/fairness-agents.ts', import.meta.url));
const ADMIN_KEY = 'fairness-admin-key-0123456789';
const DEV_KEY = 'fairness-dev-key-0123456789';
const A_RUNS = 3_000;
const B_RUNS = 30;
const ACTIVE_RUNS = '64';
const ENV = {
  KEEL_ADMIN_KEY: ADMIN_KEY,
  KEEL_MAX_ACTIVE_RUNS: ACTIVE_RUNS,
  KEEL_LOG_LEVEL: 'warn',
};

/** Submits `n` runs one after another (each request awaited) and returns their ids. */
async function submitInTurn(
  api: ApiClient,
  n: number,
  priority: 'interactive' | 'batch',
  offset: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api.request('POST', '/v1/runs', {
      agent: 'one-call',
      input: { n: offset + i },
      priority,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  return ids;
}

/**
 * GET with one retry on a connection error (a keep-alive socket the server closed as the client
 * reused it).
 */
async function get(api: ApiClient, path: string): Promise<any> {
  try {
    return (await api.request('GET', path)).body;
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return (await api.request('GET', path)).body;
  }
}

/**
 * Waits until every run ended and returns each one's latency (endedAt − createdAt, ms), all of them
 * succeeded.
 */
async function latencies(api: ApiClient, ids: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const run = await until(
      `run ${id} to end`,
      async () => {
        const body = await get(api, `/v1/runs/${id}`);
        return body.endedAt === null ? undefined : body;
      },
      60_000,
    );
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    out.push(Date.parse(run.endedAt) - Date.parse(run.createdAt));
  }
  return out;
}

const p95 = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1]!;

async function succeededCount(api: ApiClient): Promise<number> {
  let n = 0;
  let cursor: string | null = null;
  do {
    const body: { runs: unknown[]; nextCursor: string | null } = await get(
      api,
      `/v1/runs?status=succeeded&limit=200${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    n += body.runs.length;
    cursor = body.nextCursor;
  } while (cursor !== null);
  return n;
}

/** The scenario of the issue against a Keel API at `url`: B alone, then A's flood and B again. */
async function floodAndMeasure(t: TestContext, url: string): Promise<void> {
  const a = await createTenant(url, ADMIN_KEY, 'flood');
  const b = await createTenant(url, ADMIN_KEY, 'interactive');
  // Warm-up (code paths compiled, connections open), so that "alone" measures B alone, not a cold
  // process.
  await latencies(b, await submitInTurn(b, B_RUNS, 'interactive', 0));
  const alone = p95(await latencies(b, await submitInTurn(b, B_RUNS, 'interactive', B_RUNS)));

  const aIds = await submitAll(
    a,
    'one-call',
    Array.from({ length: A_RUNS }, (_, n) => ({ n })),
    20,
    { priority: 'batch' },
  );
  assert.equal(aIds.length, A_RUNS);
  const aBefore = await succeededCount(a);
  const bIds = await submitInTurn(b, B_RUNS, 'interactive', 2 * B_RUNS);
  const loaded = p95(await latencies(b, bIds));
  const aDuring = (await succeededCount(a)) - aBefore;
  t.diagnostic(
    `B p95 alone ${alone} ms, under A's flood ${loaded} ms (${(loaded / alone).toFixed(2)}×); A finished ${aDuring} runs meanwhile`,
  );
  assert.ok(
    loaded <= 2 * alone,
    `B's p95 under A's flood (${loaded} ms) is more than twice B's p95 alone (${alone} ms)`,
  );
  assert.ok(aDuring > 0, 'A kept making progress while B ran');
}

test('fairness on SQLite (keel dev): B keeps its latency while A floods the queue', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-fairness-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey: DEV_KEY,
    env: ENV,
  });
  t.after(() => keel.kill('SIGKILL'));
  await floodAndMeasure(t, keel.url);
});

test('fairness on Postgres with two processes (keel server + keel worker)', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const scene = await distributedScene(t, 'fairness');
  const server = await startKeelRole({
    role: 'server',
    agents: AGENTS,
    databaseUrl: scene.db.url,
    name: 'fair-server',
    env: ENV,
  });
  scene.processes.push(server);
  scene.processes.push(
    await startKeelRole({
      role: 'worker',
      agents: AGENTS,
      databaseUrl: scene.db.url,
      name: 'fair-worker',
      env: ENV,
    }),
  );
  await floodAndMeasure(t, server.url);
});
