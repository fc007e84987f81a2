// Provider-failure isolation over HTTP with real Keel processes: one model provider fails every
// attempt for the whole test while many runs keep calling it; sandbox-only and inline-only runs of
// another tenant must finish at their normal rate, because each effect kind queues in its own pool
// (model:flaky, sandbox:iso-shell, inline). Throughput alone is measured first, on the same
// processes, then again with the failing provider saturating its pool; it must stay at least
// MIN_RATIO of the rate alone. Serial: rates want the machine to itself. On SQLite (`keel dev`) and
// on Postgres with two processes (`keel server` + `keel worker`). Throughput is the server's own:
// runs ÷ (last endedAt − first createdAt). The models file keeps the breaker closed, so the failing
// attempts hold every slot of their pool for the whole measurement (a provider that fails slowly,
// the worst case for a shared queue); the pools file widens model:flaky to FLAKY_POOL_LIMIT, which
// also checks that the file is applied.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

const AGENTS = fileURLToPath(new URL('../fixtures/pools-agents.ts', import.meta.url));
const ADMIN_KEY = 'pools-admin-key-0123456789abcdef';
const DEV_KEY = 'pools-dev-key-0123456789';
const INLINE_RUNS = 150;
const SANDBOX_RUNS = 60;
const FLAKY_RUNS = 100;
/** Failing model calls per flaky run: enough to keep failing for the whole measurement. */
const FLAKY_CALLS = 40;
const MIN_RATIO = 0.5;
const FLAKY_POOL_LIMIT = 6;
const ENV = { KEEL_ADMIN_KEY: ADMIN_KEY, KEEL_LOG_LEVEL: 'warn' };

async function adminPools(url: string): Promise<
  Array<{
    name: string;
    limit: number;
    running: number;
    queued: number;
    oldestWaitMs: number | null;
  }>
> {
  const res = await fetch(`${url}/v1/admin/pools`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { pools: any[] }).pools;
}

/**
 * Waits until every run ended (all succeeded) and returns the server-side span: first createdAt to
 * last endedAt, in ms.
 */
async function span(api: ApiClient, ids: string[], detail: () => string): Promise<number> {
  const ended = new Map<string, any>();
  await until(
    `${ids.length} runs to end`,
    async () => {
      const open = ids.filter((id) => !ended.has(id));
      for (let i = 0; i < open.length; i += 16) {
        await Promise.all(
          open.slice(i, i + 16).map(async (id) => {
            const run = (await api.request('GET', `/v1/runs/${id}`)).body;
            if (run.endedAt !== null) ended.set(id, run);
          }),
        );
      }
      return ended.size === ids.length ? true : undefined;
    },
    90_000,
    detail,
  );
  const runs = [...ended.values()];
  for (const run of runs) assert.equal(run.status, 'succeeded', JSON.stringify(run));
  return (
    Math.max(...runs.map((r) => Date.parse(r.endedAt))) -
    Math.min(...runs.map((r) => Date.parse(r.createdAt)))
  );
}

/**
 * Submits the inline-only and sandbox-only runs together; returns each kind's throughput (runs per
 * second).
 */
async function measure(
  api: ApiClient,
  detail: () => string,
): Promise<{ inline: number; sandbox: number }> {
  const [inlineIds, sandboxIds] = await Promise.all([
    submitAll(
      api,
      'inline-only',
      Array.from({ length: INLINE_RUNS }, () => ({})),
      8,
    ),
    submitAll(
      api,
      'sandbox-only',
      Array.from({ length: SANDBOX_RUNS }, () => ({})),
      8,
    ),
  ]);
  const [inlineMs, sandboxMs] = await Promise.all([
    span(api, inlineIds, detail),
    span(api, sandboxIds, detail),
  ]);
  return { inline: INLINE_RUNS / (inlineMs / 1000), sandbox: SANDBOX_RUNS / (sandboxMs / 1000) };
}

async function isolationScenario(t: TestContext, url: string, detail: () => string): Promise<void> {
  const steady = await createTenant(url, ADMIN_KEY, 'steady');
  const failing = await createTenant(url, ADMIN_KEY, 'failing');
  await measure(steady, detail); // warm-up: code paths compiled, sandbox tier probed
  const alone = await measure(steady, detail);

  const flakyIds = await submitAll(
    failing,
    'flaky-caller',
    Array.from({ length: FLAKY_RUNS }, () => ({ calls: FLAKY_CALLS })),
    20,
  );
  // The failing provider's pool is saturated (its queue holds calls) before the measurement starts.
  await until(
    'the flaky model pool to fill up',
    async () => {
      const pool = (await adminPools(url)).find((p) => p.name === 'model:flaky');
      return pool !== undefined && pool.running === FLAKY_POOL_LIMIT && pool.queued > 0
        ? pool
        : undefined;
    },
    30_000,
    detail,
  );
  // Sample the failing pool while the others are measured: it must stay saturated.
  const samples: Array<{ running: number; queued: number }> = [];
  let measuring = true;
  const sampler = (async () => {
    while (measuring) {
      const pool = (await adminPools(url)).find((p) => p.name === 'model:flaky')!;
      samples.push({ running: pool.running, queued: pool.queued });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const loaded = await measure(steady, detail).finally(() => (measuring = false));
  await sampler;
  const pools = await adminPools(url);
  const flakyStill = await Promise.all(
    flakyIds
      .slice(0, 10)
      .map(async (id) => (await failing.request('GET', `/v1/runs/${id}`)).body.status as string),
  );

  const ratio = { inline: loaded.inline / alone.inline, sandbox: loaded.sandbox / alone.sandbox };
  t.diagnostic(
    `inline ${alone.inline.toFixed(1)} → ${loaded.inline.toFixed(1)} runs/s (${ratio.inline.toFixed(2)}×); sandbox ${alone.sandbox.toFixed(1)} → ${loaded.sandbox.toFixed(1)} runs/s (${ratio.sandbox.toFixed(2)}×)`,
  );
  const saturated = samples.filter((s) => s.running === FLAKY_POOL_LIMIT).length / samples.length;
  t.diagnostic(
    `model:flaky saturated in ${(saturated * 100).toFixed(0)}% of ${samples.length} samples, up to ${Math.max(...samples.map((s) => s.queued))} calls queued`,
  );
  t.diagnostic(
    `pools: ${pools.map((p) => `${p.name} limit ${p.limit} running ${p.running} queued ${p.queued}`).join('; ')}`,
  );
  assert.ok(
    flakyStill.every((s) => s === 'running' || s === 'queued' || s === 'waiting'),
    `the failing runs kept calling for the whole measurement: ${flakyStill.join(', ')}`,
  );
  assert.deepEqual(
    ['inline', 'model:flaky', 'sandbox:iso-shell'].filter(
      (name) => !pools.some((p) => p.name === name),
    ),
    [],
    'every effect kind has its pool',
  );
  assert.equal(
    pools.find((p) => p.name === 'model:flaky')!.limit,
    FLAKY_POOL_LIMIT,
    'the pools file sets the model pool’s limit',
  );
  assert.ok(
    saturated >= 0.5,
    `the failing provider's pool was saturated during the measurement (${(saturated * 100).toFixed(0)}% of samples)`,
  );
  assert.ok(
    ratio.inline >= MIN_RATIO,
    `inline-only throughput with the failing provider is ${ratio.inline.toFixed(2)}× of alone (< ${MIN_RATIO})`,
  );
  assert.ok(
    ratio.sandbox >= MIN_RATIO,
    `sandbox-only throughput with the failing provider is ${ratio.sandbox.toFixed(2)}× of alone (< ${MIN_RATIO})`,
  );
}

/**
 * A directory sandbox uids can traverse (workspaces live under the data directory), with the models
 * and pools files.
 */
function sandboxBase(t: TestContext): { base: string; env: Record<string, string> } {
  const base = mkdtempSync(join(tmpdir(), 'keel-pools-'));
  chmodSync(base, 0o711);
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const models = join(base, 'models.json');
  writeFileSync(
    models,
    JSON.stringify({
      models: [],
      breaker: { consecutiveFailures: 1_000_000, minCalls: 1_000_000 },
    }),
  );
  const pools = join(base, 'pools.json');
  writeFileSync(pools, JSON.stringify({ pools: { 'model:flaky': { limit: FLAKY_POOL_LIMIT } } }));
  return { base, env: { ...ENV, KEEL_MODELS_FILE: models, KEEL_POOLS_FILE: pools } };
}

test('a failing model provider does not slow sandbox-only and inline-only runs (SQLite, keel dev)', async (t) => {
  const { base, env } = sandboxBase(t);
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(base, 'data'),
    apiKey: DEV_KEY,
    env,
  });
  t.after(() => keel.kill('SIGKILL'));
  await isolationScenario(t, keel.url, () => keel.output());
});

test('a failing model provider does not slow sandbox-only and inline-only runs (Postgres, server + worker)', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { base, env } = sandboxBase(t);
  const scene = await distributedScene(t, 'pools');
  const dataDir = (name: string) => {
    const dir = join(base, name);
    mkdirSync(dir, { mode: 0o711 });
    return dir;
  };
  const server = await startKeelRole({
    role: 'server',
    agents: AGENTS,
    databaseUrl: scene.db.url,
    name: 'pools-server',
    env: { ...env, KEEL_DATA_DIR: dataDir('server') },
  });
  scene.processes.push(server);
  const worker = await startKeelRole({
    role: 'worker',
    agents: AGENTS,
    databaseUrl: scene.db.url,
    name: 'pools-worker',
    env: { ...env, KEEL_DATA_DIR: dataDir('worker') },
  });
  scene.processes.push(worker);
  await isolationScenario(t, server.url, () => `${server.output()}\n${worker.output()}`);
});
