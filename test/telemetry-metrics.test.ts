// /metrics of a real `keel dev` process under a small load (mock models): `promtool check metrics` accepts the
// output, and every metric with a data source moves as the load says it must — checked against what
// the runs API reports (tokens, cost, attempts), not against constants. Then a kill -9 mid side
// effect shows the outstanding unknown execution appear and go once an operator resolves it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startKeelProcess, type KeelProcess } from './support/keel-process.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';
import {
  assertPromtoolAccepts,
  client,
  has,
  metric,
  parseSamples,
  until,
  type Sample,
} from './support/telemetry.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/telemetry-agents.ts', import.meta.url));
const KEY = 'telemetry-tenant-key';
const ADMIN = 'telemetry-admin-key-0123456789';
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const FLAKY_CALLS = 40;

async function scrape(url: string): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parseSamples(text) };
}

test('/metrics: promtool accepts it, and each metric changes as expected under a small load', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-telemetry-'));
  const port = await freePort();
  const metricsPort = await freePort();
  // A retry budget wide enough that the flaky model's 30% failures are all retried (the budget has
  // its own tests).
  const modelsFile = fileURLToPath(new URL('./fixtures/telemetry-models.json', import.meta.url));
  const env = {
    KEEL_ADMIN_KEY: ADMIN,
    KEEL_MAX_ACTIVE_RUNS: '1',
    KEEL_METRICS_PORT: String(metricsPort),
    KEEL_MODELS_FILE: modelsFile,
  };
  let keel: KeelProcess | undefined = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    port,
    apiKey: KEY,
    env,
  });
  t.after(async () => {
    await keel?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const api = client(keel.url, KEY);
  const finish = (id: string) =>
    until(`run ${id} to end`, async () => {
      const run = (await api('GET', `/v1/runs/${id}`)).body;
      return TERMINAL.has(run.status) ? run : undefined;
    });
  const submit = async (agent: string, input: unknown, budget?: unknown) =>
    (await api('POST', '/v1/runs', { agent, input, ...(budget === undefined ? {} : { budget }) }))
      .body.id as string;

  // Auth: the admin key reads /metrics; no key and a tenant key do not (labels name every tenant).
  assert.equal((await fetch(`${keel.url}/metrics`)).status, 401);
  assert.equal((await api('GET', '/metrics')).status, 401);
  const before = await scrape(keel.url);
  assertPromtoolAccepts(before.text);
  // KEEL_METRICS_PORT: the same exposition without auth on a separate listener that serves nothing
  // else.
  const separate = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  assert.equal(separate.status, 200);
  assert.ok(parseSamples(await separate.text()).some((s) => s.name === 'keel_commits_not_durable'));
  assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/v1/runs`)).status, 404);
  // ...but the health checks a worker without an API is probed on.
  assert.deepEqual(await (await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).json(), {
    ok: true,
  });
  const readyz = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
  assert.equal(readyz.status, 200);
  assert.equal(((await readyz.json()) as { ready: boolean }).ready, true);

  // The run queue: one slot (KEEL_MAX_ACTIVE_RUNS=1) held by a slow run, two more wait and age.
  const blocker = await submit('spender', { slowMs: 1500 });
  await until('the blocker to run', async () =>
    (await api('GET', `/v1/runs/${blocker}`)).body.status === 'running' ? true : undefined,
  );
  const queued = [await submit('spender', {}), await submit('spender', {})];
  const busy = await until('the run queue to show two waiting runs', async () => {
    const { samples } = await scrape(keel!.url);
    return metric(samples, 'keel_pool_queue_depth', { pool: 'runs' }) === 2 &&
      metric(samples, 'keel_pool_oldest_item_age_seconds', { pool: 'runs' }) > 0
      ? samples
      : undefined;
  });
  const tenantId = (await api('GET', `/v1/runs/${blocker}`)).body.tenantId as string;
  assert.equal(metric(busy, 'keel_tenant_runs', { tenant: tenantId, state: 'queued' }), 2);
  assert.equal(metric(busy, 'keel_tenant_runs', { tenant: tenantId, state: 'running' }), 1);
  for (const id of [blocker, ...queued]) await finish(id);

  // Outcomes, deadlines, spend and a flaky provider.
  const failing = [
    await submit('spender', { fail: true }),
    await submit('spender', { fail: true }),
  ];
  const late = await submit('spender', { slowMs: 600 }, { deadlineMs: 200 });
  const onTime = await submit('spender', {}, { deadlineMs: 60_000 });
  const retrier = await submit('retrier', { calls: FLAKY_CALLS });
  const spenderIds = [blocker, ...queued, ...failing, late, onTime];
  const ended = new Map<string, any>();
  for (const id of [...spenderIds, retrier]) ended.set(id, await finish(id));
  assert.equal(ended.get(late).error.code, 'budget_exceeded');

  // A wait answered through the API.
  const traced = await submit('traced', { topic: 'metrics' });
  const waiting = await until('the traced run to wait, seen in keel_tenant_runs', async () => {
    const { samples } = await scrape(keel!.url);
    return metric(samples, 'keel_tenant_runs', { tenant: tenantId, state: 'waiting' }) === 1
      ? samples
      : undefined;
  });
  assert.equal(
    metric(waiting, 'keel_effect_wait_seconds_count', { kind: 'tool' }) -
      metric(before.samples, 'keel_effect_wait_seconds_count', { kind: 'tool' }),
    2,
  );
  assert.equal(
    (await api('POST', `/v1/runs/${traced}/input`, { key: 'approval', value: 'yes' })).status,
    202,
  );
  ended.set(traced, await finish(traced));
  assert.equal(ended.get(traced).status, 'succeeded');

  const after = await until('the waiting count to drop', async () => {
    const s = await scrape(keel!.url);
    return metric(s.samples, 'keel_tenant_runs', { tenant: tenantId, state: 'waiting' }) === 0
      ? s
      : undefined;
  });
  assertPromtoolAccepts(after.text);
  const m = after.samples;
  const delta = (name: string, where: Record<string, string> = {}) =>
    metric(m, name, where) - metric(before.samples, name, where);

  // Runs by status and outcome; the share that succeeded within the deadline.
  const spender = { tenant: tenantId, agent: 'spender' };
  assert.equal(metric(m, 'keel_runs_total', { ...spender, status: 'succeeded', outcome: 'ok' }), 4);
  assert.equal(
    metric(m, 'keel_runs_total', { ...spender, status: 'failed', outcome: 'agent_error' }),
    2,
  );
  assert.equal(
    metric(m, 'keel_runs_total', { ...spender, status: 'failed', outcome: 'budget_exceeded' }),
    1,
  );
  assert.equal(
    metric(m, 'keel_runs_total', { tenant: tenantId, agent: 'traced', status: 'succeeded' }),
    1,
  );
  assert.equal(metric(m, 'keel_runs_succeeded_within_deadline_total', spender), 4);
  assert.ok(
    Math.abs(metric(m, 'keel_runs_succeeded_within_deadline_ratio', spender) - 4 / 7) < 1e-9,
  );
  // Completion time (admission to success): one observation per succeeded run.
  assert.equal(metric(m, 'keel_run_completion_seconds_count', spender), 4);
  assert.ok(metric(m, 'keel_run_completion_seconds_sum', spender) > 0);

  // Tokens and cost by tenant and model equal what the runs themselves report; cost per success is
  // all spend ÷ successes.
  const runs = [...ended.values()];
  const sum = (ids: Array<any>, field: 'inputTokens' | 'outputTokens' | 'costUsd') =>
    ids.reduce((a, r) => a + r.counters[field], 0);
  const pricedRuns = runs.filter((r) => r.agent !== 'retrier');
  assert.equal(
    metric(m, 'keel_tokens_total', { tenant: tenantId, model: 'priced', type: 'input' }),
    sum(pricedRuns, 'inputTokens'),
  );
  assert.equal(
    metric(m, 'keel_tokens_total', { tenant: tenantId, model: 'priced', type: 'output' }),
    sum(pricedRuns, 'outputTokens'),
  );
  assert.equal(
    metric(m, 'keel_tokens_total', { tenant: tenantId, model: 'flaky', type: 'input' }),
    ended.get(retrier).counters.inputTokens,
  );
  assert.ok(
    Math.abs(
      metric(m, 'keel_cost_usd_total', { tenant: tenantId, model: 'priced' }) -
        sum(pricedRuns, 'costUsd'),
    ) < 1e-12,
  );
  const spenderSpend = sum(
    spenderIds.map((id) => ended.get(id)),
    'costUsd',
  );
  assert.ok(spenderSpend > 0);
  assert.ok(Math.abs(metric(m, 'keel_run_cost_usd_total', spender) - spenderSpend) < 1e-12);
  assert.ok(
    Math.abs(metric(m, 'keel_cost_per_successful_run_usd', spender) - spenderSpend / 4) < 1e-12,
    'failed runs’ spend counts, divided by successes',
  );

  // Model calls, retries and amplification per provider, against the attempts the journal recorded.
  const steps = (await api('GET', `/v1/runs/${retrier}/steps`)).body.steps as Array<{
    kind: string;
    attempts: number;
  }>;
  const retries = steps.filter((s) => s.kind === 'model').reduce((a, s) => a + s.attempts - 1, 0);
  assert.ok(retries > 0, 'a 30% failure rate over 40 calls retries (probability of none: 0.7^40)');
  assert.equal(
    metric(m, 'keel_model_calls_total', { provider: 'mock', model: 'flaky', outcome: 'ok' }),
    FLAKY_CALLS,
  );
  // (The late run may pass its deadline while queued, before its model call: count the calls the
  // journals hold.)
  let pricedCalls = 0;
  for (const run of pricedRuns)
    pricedCalls += (await api('GET', `/v1/runs/${run.id}/steps`)).body.steps.filter(
      (x: any) => x.kind === 'model' && x.status === 'succeeded',
    ).length;
  assert.ok(pricedCalls >= spenderIds.length);
  assert.equal(
    metric(m, 'keel_model_calls_total', { provider: 'mock', model: 'priced', outcome: 'ok' }),
    pricedCalls,
  );
  assert.equal(
    metric(m, 'keel_model_retries_total', { provider: 'mock', model: 'flaky' }),
    retries,
  );
  assert.equal(metric(m, 'keel_model_retries_total', { provider: 'mock', model: 'priced' }), 0);
  const calls = FLAKY_CALLS + pricedCalls;
  // Amplification counts every logical call, whatever its outcome: under load the late run's call
  // can be cut off by its deadline mid-flight (outcome not ok, never journaled as succeeded), and
  // it still cost an attempt.
  const logicalCalls = metric(m, 'keel_model_calls_total', { provider: 'mock' });
  assert.ok(
    logicalCalls >= calls && logicalCalls <= calls + 1,
    `${logicalCalls} logical calls for ${calls} journaled ones`,
  );
  const allRetries = metric(m, 'keel_model_retries_total', { provider: 'mock' });
  assert.equal(allRetries, retries);
  assert.ok(
    Math.abs(
      metric(m, 'keel_model_retry_amplification', { provider: 'mock' }) -
        (logicalCalls + allRetries) / logicalCalls,
    ) < 1e-9,
  );

  // Wait and execution histograms per effect kind.
  assert.equal(delta('keel_effect_wait_seconds_count', { kind: 'model' }), calls);
  assert.equal(delta('keel_effect_execution_seconds_count', { kind: 'model' }), calls);
  assert.equal(delta('keel_effect_execution_seconds_count', { kind: 'tool' }), 2);
  assert.equal(delta('keel_effect_wait_seconds_count', { kind: 'input' }), 1);
  assert.equal(
    delta('keel_effect_execution_seconds_count', { kind: 'input' }),
    0,
    'a wait is all waiting',
  );
  // The execution histogram holds what the journal says the tool calls took (no wall-clock bound
  // asserted here).
  const tracedTools = ((await api('GET', `/v1/runs/${traced}/steps`)).body.steps as any[]).filter(
    (x) => x.kind === 'tool',
  );
  const journaled = tracedTools.reduce(
    (a, x) => a + (Date.parse(x.endedAt) - Date.parse(x.startedAt)) / 1000,
    0,
  );
  assert.ok(journaled > 0);
  assert.ok(
    Math.abs(delta('keel_effect_execution_seconds_sum', { kind: 'tool' }) - journaled) < 1e-6,
    'the histogram sums the journaled execution times',
  );

  // Pools, commits and durability.
  for (const pool of ['runs', 'inline', 'model:priced', 'model:flaky'])
    assert.ok(has(m, 'keel_pool_queue_depth', { pool }), `pool ${pool}`);
  assert.equal(metric(m, 'keel_pool_queue_depth', { pool: 'runs' }), 0);
  assert.ok(delta('keel_commits_total', { result: 'ok' }) > calls);
  assert.ok(delta('keel_commit_batch_size_count') > 0);
  assert.equal(
    metric(m, 'keel_commits_not_durable'),
    0,
    'durability fsync: every acknowledged commit is on disk',
  );
  assert.equal(metric(m, 'keel_unknown_executions'), 0);

  // kill -9 during a side effect: after the restart its outcome is unknown until an operator
  // decides.
  const charge = await submit('charger', {});
  await until('the side effect to be running', async () => {
    const s = (await api('GET', `/v1/runs/${charge}/steps`)).body.steps as Array<{
      status: string;
    }>;
    return s.some((x) => x.status === 'running') ? true : undefined;
  });
  await keel.kill('SIGKILL');
  keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    port,
    apiKey: KEY,
    env,
  });
  const restarted = await until('the unknown execution to show', async () => {
    const s = await scrape(keel!.url);
    return metric(s.samples, 'keel_unknown_executions') === 1 ? s : undefined;
  });
  assertPromtoolAccepts(restarted.text);
  const unknown = (await api('GET', `/v1/runs/${charge}/steps`)).body.steps.find(
    (x: any) => x.status === 'unknown',
  );
  const resolved = await api(
    'POST',
    `/v1/runs/${charge}/executions/${unknown.executionId}/resolve`,
    { action: 'succeeded', result: { charged: true } },
  );
  assert.equal(resolved.status, 202);
  assert.equal((await finish(charge)).status, 'succeeded');
  await until('the unknown execution to be gone', async () =>
    metric((await scrape(keel!.url)).samples, 'keel_unknown_executions') === 0 ? true : undefined,
  );
});

test('/metrics on Postgres: promtool accepts it; live runs, the queue and commits come from the Postgres store', {
  timeout: 60_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const db = await createFreshDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'keel-telemetry-pg-'));
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    port: await freePort(),
    apiKey: KEY,
    env: { KEEL_ADMIN_KEY: ADMIN, KEEL_DATABASE_URL: db.url },
  });
  t.after(async () => {
    await keel.kill('SIGKILL');
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const api = client(keel.url, KEY);
  const done = (await api('POST', '/v1/runs', { agent: 'spender', input: {} })).body.id as string;
  const traced = (await api('POST', '/v1/runs', { agent: 'traced', input: { topic: 'pg' } })).body
    .id as string;
  await until('the spender to succeed', async () =>
    (await api('GET', `/v1/runs/${done}`)).body.status === 'succeeded' ? true : undefined,
  );
  const tenantId = (await api('GET', `/v1/runs/${traced}`)).body.tenantId as string;
  const { text, samples } = await until(
    'the traced run to wait, seen in keel_tenant_runs',
    async () => {
      const s = await scrape(keel.url);
      return metric(s.samples, 'keel_tenant_runs', { tenant: tenantId, state: 'waiting' }) === 1
        ? s
        : undefined;
    },
  );
  assertPromtoolAccepts(text);
  assert.equal(
    metric(samples, 'keel_runs_total', { tenant: tenantId, agent: 'spender', status: 'succeeded' }),
    1,
  );
  assert.equal(metric(samples, 'keel_pool_queue_depth', { pool: 'runs' }), 0);
  assert.ok(
    metric(samples, 'keel_commit_batch_size_count') > 0,
    'the Postgres write queue reports its transactions',
  );
  assert.equal(
    metric(samples, 'keel_commits_not_durable'),
    0,
    'synchronous_commit on: every acknowledged commit is flushed',
  );
});
