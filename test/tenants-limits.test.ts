// Tenant rate limits, daily budgets and pool caps over real HTTP: the admin API and `keel tenants`
// set and show them, bad input is a 4xx with a stable code; a tenant whose daily budget is spent
// waits (durably, explained) instead of failing and resumes when an admin raises the budget;
// waiting is explained in runs and events.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { runTenantsCommand } from '../src/cli/client/tenants-command.ts';
import { defineAgent } from '../src/index.ts';
import type { AgentDefinition } from '../src/sdk/types.ts';
import { assertError } from './support/assert-error.ts';
import { captureCli } from './support/cli-capture.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';
import { scheduleAgents } from './fixtures/schedule-agents.ts';
import { startSchedulesKeel } from './support/schedules-keel.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { done: true };
  },
});

async function start(
  t: TestContext,
  agents: AgentDefinition<any, any>[] = [quick],
): Promise<TestKeel> {
  const keel = await startKeel({ agents });
  t.after(() => keel.close());
  return keel;
}

test('admin API: rate limits, daily budgets and pool caps are created, patched, listed; bad values are 400 validation_failed', async (t) => {
  const keel = await start(t);
  const created = await keel.request(
    'POST',
    '/v1/admin/tenants',
    {
      name: 'acme',
      rpm: 60,
      tpm: 90_000,
      dailyTokenBudget: 1_000_000,
      dailyCostBudgetUsd: 2.5,
      poolCaps: { 'sandbox:default': 2, browser: 1 },
    },
    keel.adminKey,
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { tenant } = created.body;
  assert.deepEqual(
    [tenant.rpm, tenant.tpm, tenant.dailyTokenBudget, tenant.dailyCostBudgetUsd, tenant.poolCaps],
    [60, 90_000, 1_000_000, 2.5, { 'sandbox:default': 2, browser: 1 }],
  );
  const plain = await keel.request('POST', '/v1/admin/tenants', { name: 'plain' }, keel.adminKey);
  assert.deepEqual(
    [plain.body.tenant.rpm, plain.body.tenant.dailyTokenBudget, plain.body.tenant.poolCaps],
    [null, null, {}],
  );

  const patched = await keel.request(
    'PATCH',
    `/v1/admin/tenants/${tenant.id}`,
    { rpm: null, dailyCostBudgetUsd: 0, poolCaps: {} },
    keel.adminKey,
  );
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.deepEqual(
    [
      patched.body.tenant.rpm,
      patched.body.tenant.tpm,
      patched.body.tenant.dailyCostBudgetUsd,
      patched.body.tenant.poolCaps,
    ],
    [null, 90_000, 0, {}],
  );
  const listed = await keel.request('GET', '/v1/admin/tenants', undefined, keel.adminKey);
  assert.deepEqual(
    listed.body.tenants.find((x: any) => x.id === tenant.id),
    patched.body.tenant,
  );

  for (const body of [
    { rpm: 0 },
    { rpm: 1.5 },
    { tpm: -3 },
    { tpm: '100' },
    { dailyTokenBudget: -1 },
    { dailyTokenBudget: 0.5 },
    { dailyCostBudgetUsd: -0.01 },
    { dailyCostBudgetUsd: 'lots' },
    { poolCaps: [] },
    { poolCaps: { sandbox: 0 } },
    { poolCaps: { sandbox: 'x' } },
    { poolCaps: { '': 1 } },
    { poolCaps: { 'bad pool name': 1 } },
    { poolCaps: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, 1])) },
  ]) {
    assertError(
      await keel.request('POST', '/v1/admin/tenants', { name: 'bad', ...body }, keel.adminKey),
      400,
      'validation_failed',
    );
    assertError(
      await keel.request('PATCH', `/v1/admin/tenants/${tenant.id}`, body, keel.adminKey),
      400,
      'validation_failed',
    );
  }
});

test('keel tenants create|update|list take and show rate limits, daily budgets and pool caps', async (t) => {
  const keel = await start(t);
  const cli = (...argv: string[]) =>
    captureCli(runTenantsCommand, { KEEL_URL: keel.url, KEEL_ADMIN_KEY: keel.adminKey }, argv);
  const created = await cli(
    'create',
    'acme',
    '--rpm',
    '60',
    '--tpm',
    '1000',
    '--daily-token-budget',
    '0',
    '--daily-cost-budget-usd',
    '1.25',
    '--pool-caps',
    'sandbox:default=2,browser=1',
    '--json',
  );
  assert.equal(created.code, 0, created.err);
  const { tenant } = JSON.parse(created.out);
  assert.deepEqual(
    [tenant.rpm, tenant.tpm, tenant.dailyTokenBudget, tenant.dailyCostBudgetUsd, tenant.poolCaps],
    [60, 1000, 0, 1.25, { 'sandbox:default': 2, browser: 1 }],
  );
  const updated = await cli(
    'update',
    tenant.id,
    '--rpm',
    'none',
    '--daily-token-budget',
    '500',
    '--pool-caps',
    'none',
  );
  assert.equal(updated.code, 0, updated.err);
  assert.match(
    updated.out,
    /rpm\s+unlimited\ntpm\s+1000\ndaily tokens\s+500\ndaily cost usd\s+1.25\npool caps\s+none/,
  );
  const listed = await cli('list');
  assert.match(
    listed.out,
    /acme\s+1\s+unlimited\s+unlimited\s+unlimited\s+1000\s+500\s+1.25\s+none/,
  );
  for (const argv of [
    ['--rpm', '0'],
    ['--tpm', 'x'],
    ['--daily-token-budget', '-1'],
    ['--daily-cost-budget-usd', '-2'],
    ['--pool-caps', 'sandbox'],
    ['--pool-caps', 'sandbox=0'],
  ]) {
    assert.equal((await cli('update', tenant.id, ...argv)).code, 2, argv.join(' '));
  }
});

test('keel tenants create|update take an egress list: host:port pairs, empty, none', async (t) => {
  const keel = await start(t);
  const cli = (...argv: string[]) =>
    captureCli(runTenantsCommand, { KEEL_URL: keel.url, KEEL_ADMIN_KEY: keel.adminKey }, argv);
  const created = await cli(
    'create',
    'egress',
    '--egress-allow',
    'pypi.example.org:443,127.0.0.1:8080',
    '--json',
  );
  assert.equal(created.code, 0, created.err);
  const { tenant } = JSON.parse(created.out);
  assert.deepEqual(tenant.egressAllow, [
    { host: 'pypi.example.org', port: 443 },
    { host: '127.0.0.1', port: 8080 },
  ]);
  const emptied = await cli('update', tenant.id, '--egress-allow', 'empty');
  assert.equal(emptied.code, 0, emptied.err);
  assert.match(emptied.out, /egress allow\s+nothing/);
  const lifted = await cli('update', tenant.id, '--egress-allow', 'none');
  assert.match(lifted.out, /egress allow\s+any the profile allows/);
  for (const value of ['pypi.example.org', 'host:0', 'bad host:443'])
    assert.notEqual((await cli('update', tenant.id, '--egress-allow', value)).code, 0, value);
});

const talker = defineAgent({
  name: 'talker',
  version: '1',
  async run(ctx, input: { calls: number }) {
    for (let i = 0; i < input.calls; i++)
      await ctx.model({
        model: 'mock',
        messages: [{ role: 'user', content: `hello number ${i}` }],
      });
    return { calls: input.calls };
  },
});
const asker = defineAgent({
  name: 'asker',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('answer');
  },
});

const get = async (keel: TestKeel, id: string, key?: string) =>
  (await keel.request('GET', `/v1/runs/${id}`, undefined, key)).body;
const events = async (keel: TestKeel, id: string, key?: string) =>
  (await keel.request('GET', `/v1/runs/${id}/events?format=json`, undefined, key)).body as any[];
const nextUtcMidnight = () =>
  new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000).toISOString();

test('daily token budget: once spent, model calls wait durably (tenant_budget_exhausted until midnight UTC) and resume when an admin raises it', async (t) => {
  const keel = await start(t, [talker]);
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'frugal', dailyTokenBudget: 1 },
    keel.adminKey,
  );
  const key = body.apiKey;
  // The first call spends more than the whole budget (a call in flight is not cut short); the
  // second one waits.
  const run = (
    await keel.request('POST', '/v1/runs', { agent: 'talker', input: { calls: 2 } }, key)
  ).body;
  await waitFor(async () => (await get(keel, run.id, key)).status === 'waiting');
  const seen = await get(keel, run.id, key);
  assert.deepEqual(
    [seen.status, seen.waitingReason, seen.wakeAt, seen.counters.steps],
    ['waiting', 'tenant_budget_exhausted', nextUtcMidnight(), 1],
  );
  assert.ok(seen.waitingSince !== null && Date.parse(seen.waitingSince) <= Date.now());
  const listed = (await keel.request('GET', '/v1/runs', undefined, key)).body.runs.find(
    (r: any) => r.id === run.id,
  );
  assert.deepEqual(
    [listed.waitingReason, listed.waitingSince],
    ['tenant_budget_exhausted', seen.waitingSince],
  );
  const parked = (await events(keel, run.id, key)).find((e) => e.type === 'run.waiting');
  assert.equal(parked.data.reason, 'tenant_budget_exhausted');
  assert.match(parked.data.detail, /model tokens today/);
  assert.ok(typeof parked.data.since === 'string');
  const steps = (await keel.request('GET', `/v1/runs/${run.id}/steps`, undefined, key)).body.steps;
  assert.deepEqual(
    steps.map((s: any) => [s.kind, s.status]),
    [
      ['model', 'succeeded'],
      ['model', 'waiting'],
    ],
  );

  // A second run of the tenant waits too, before calling the model at all.
  const second = (
    await keel.request('POST', '/v1/runs', { agent: 'talker', input: { calls: 1 } }, key)
  ).body;
  await waitFor(
    async () =>
      (await keel.request('GET', `/v1/runs/${second.id}`, undefined, key)).body.waitingReason ===
      'tenant_budget_exhausted',
  );

  // Raising the budget wakes both: they resume at once and finish.
  assert.equal(
    (
      await keel.request(
        'PATCH',
        `/v1/admin/tenants/${body.tenant.id}`,
        { dailyTokenBudget: 1_000_000 },
        keel.adminKey,
      )
    ).status,
    200,
  );
  for (const id of [run.id, second.id]) {
    await waitFor(
      async () =>
        (await keel.request('GET', `/v1/runs/${id}`, undefined, key)).body.status === 'succeeded',
    );
    const done = (await keel.request('GET', `/v1/runs/${id}`, undefined, key)).body;
    assert.deepEqual([done.waitingReason, done.waitingSince], [null, null]);
    const resumed = (await events(keel, id, key)).find((e) => e.type === 'run.resumed');
    assert.equal(
      resumed?.data.reason,
      'tenant_budget_exhausted',
      JSON.stringify(await events(keel, id, key)),
    );
  }
});

const pricey = defineAgent({
  name: 'pricey',
  version: '1',
  async run(ctx) {
    await ctx.model({ model: 'priced', messages: [{ role: 'user', content: 'one' }] });
    await ctx.model({ model: 'priced', messages: [{ role: 'user', content: 'two' }] });
    return 'done';
  },
});

test('daily cost budget: a priced model over budget waits too; other tenants are not affected', async (t) => {
  const keel = await startKeel({
    agents: [pricey],
    models: [
      {
        kind: 'keel.model',
        name: 'priced',
        provider: 'mock',
        price: { inputPerMTok: 1_000, outputPerMTok: 1_000 },
      },
    ],
  });
  t.after(() => keel.close());
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'thrifty', dailyCostBudgetUsd: 0.000001 },
    keel.adminKey,
  );
  const run = (await keel.request('POST', '/v1/runs', { agent: 'pricey' }, body.apiKey)).body;
  const other = (await keel.request('POST', '/v1/runs', { agent: 'pricey' })).body;
  await waitFor(
    async () => (await get(keel, run.id, body.apiKey)).waitingReason === 'tenant_budget_exhausted',
  );
  const seen = await get(keel, run.id, body.apiKey);
  assert.equal(seen.status, 'waiting');
  assert.ok(seen.counters.costUsd > 0.000001);
  await waitFor(async () => (await get(keel, other.id)).status === 'succeeded');
  const parked = (await events(keel, run.id, body.apiKey)).find((e) => e.type === 'run.waiting');
  assert.match(parked.data.detail, /spent \$[0-9.]+ of its \$0.000001/);
});

async function waitFor(predicate: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    assert.ok(Date.now() < deadline, 'condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('tenant RPM from its record: a call over it waits (rate_limited, explained in events); a PATCH lifting it applies at once', async (t) => {
  const keel = await start(t, [talker]);
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'metered', rpm: 1 },
    keel.adminKey,
  );
  const key = body.apiKey;
  const first = (
    await keel.request('POST', '/v1/runs', { agent: 'talker', input: { calls: 1 } }, key)
  ).body;
  await waitFor(async () => (await get(keel, first.id, key)).status === 'succeeded');
  const second = (
    await keel.request('POST', '/v1/runs', { agent: 'talker', input: { calls: 1 } }, key)
  ).body;
  await waitFor(async () => (await get(keel, second.id, key)).waitingReason === 'rate_limited');
  const seen = await get(keel, second.id, key);
  assert.equal(
    seen.status,
    'running',
    'a rate-limited run stays claimed: it waits in the model plane',
  );
  assert.ok(seen.waitingSince !== null);
  const log = await events(keel, second.id, key);
  assert.ok(
    log.some((e) => e.type === 'model.waiting' && e.data.reason === 'rate_limited'),
    'model.waiting is still emitted',
  );
  const waiting = log.find((e) => e.type === 'run.waiting');
  assert.equal(waiting?.data.reason, 'rate_limited');
  assert.match(waiting.data.detail, new RegExp(`tenant:${body.tenant.id}`));
  // Other tenants are not limited by it; lifting the limit lets the tenant's next call through at
  // once.
  await keel.request('PATCH', `/v1/admin/tenants/${body.tenant.id}`, { rpm: null }, keel.adminKey);
  const third = (
    await keel.request('POST', '/v1/runs', { agent: 'talker', input: { calls: 1 } }, key)
  ).body;
  await waitFor(async () => (await get(keel, third.id, key)).status === 'succeeded');
  await keel.request('POST', `/v1/runs/${second.id}/cancel`, undefined, key);
});

test('explainable waiting: queued runs say awaiting_worker or tenant_concurrency_cap (in the list too), with since; input waits emit run.waiting and run.resumed', async (t) => {
  const keel = await start(t, [quick, asker]);
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'capped', maxConcurrentRuns: 1 },
    keel.adminKey,
  );
  const key = body.apiKey;
  await keel.orchestrator.stop();
  const queued = (await keel.request('POST', '/v1/runs', { agent: 'quick' }, key)).body;
  let seen = await get(keel, queued.id, key);
  assert.deepEqual(
    [seen.status, seen.waitingReason, seen.waitingSince],
    ['queued', 'awaiting_worker', queued.createdAt],
  );
  // A worker holds one run of the tenant: its other queued runs wait on the cap, in GET one and in
  // the list.
  const [held] = await keel.store.claimRuns({
    owner: 'busy-worker',
    limit: 1,
    leaseMs: 60_000,
    served: ['quick@1', 'asker@1'],
  });
  assert.equal(held?.id, queued.id);
  const more = (await keel.request('POST', '/v1/runs', { agent: 'quick' }, key)).body;
  assert.equal((await get(keel, more.id, key)).waitingReason, 'tenant_concurrency_cap');
  const list = (await keel.request('GET', '/v1/runs', undefined, key)).body.runs;
  assert.deepEqual(
    list.map((r: any) => [r.id, r.status, r.waitingReason]),
    [
      [more.id, 'queued', 'tenant_concurrency_cap'],
      [queued.id, 'running', null],
    ],
  );
  assert.equal(list[0].waitingSince, more.createdAt);
  await keel.store.releaseLeases('busy-worker', [queued.id]);
  await keel.store.updateTenant(body.tenant.id, { maxConcurrentRuns: null });

  // Human input: the run parks with reason input and since; answering resumes it.
  keel.orchestrator.start();
  const asking = (await keel.request('POST', '/v1/runs', { agent: 'asker' }, key)).body;
  await waitFor(async () => (await get(keel, asking.id, key)).status === 'waiting');
  seen = await get(keel, asking.id, key);
  assert.equal(seen.waitingReason, 'input');
  assert.ok(seen.waitingSince !== null);
  await keel.request('POST', `/v1/runs/${asking.id}/input`, { key: 'answer', value: 42 }, key);
  await waitFor(async () => (await get(keel, asking.id, key)).status === 'succeeded');
  const log = await events(keel, asking.id, key);
  const waiting = log.find((e) => e.type === 'run.waiting');
  const resumed = log.find((e) => e.type === 'run.resumed');
  assert.deepEqual(
    [waiting?.data.reason, typeof waiting?.data.since, typeof waiting?.data.detail],
    ['input', 'string', 'string'],
  );
  assert.equal(resumed?.data.reason, 'input');
  assert.ok(
    Math.abs(Date.parse(resumed.data.since) - Date.parse(waiting.data.since)) < 1_000,
    'resumed says since when the run waited',
  );
  assert.ok(resumed.seq > waiting.seq);
});

test("schedule fires over the tenant's max queued runs are recorded as skipped with reason tenant_queue_full, never queued over it", async (t) => {
  const keel = await startSchedulesKeel({ agents: scheduleAgents, start: '2026-01-01T00:00:30Z' });
  t.after(() => keel.close());
  const tenant = (await keel.store.listTenants()).find((x) => x.name === 'test')!;
  await keel.store.updateTenant(tenant.id, { maxQueuedRuns: 1 });
  const created = await keel.request('POST', '/v1/schedules', {
    timeZone: 'UTC',
    cron: '* * * * *',
    overlap: 'allow',
    template: { agent: 'quick' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // One pass decides three due fires: room for one run in the queue, the other two are skipped.
  await keel.tickAt('2026-01-01T00:03:00Z');
  const fires = await keel.fires(created.body.id);
  assert.deepEqual(
    fires.map((f) => [f.logicalTime.slice(11, 16), f.status, f.detail?.reason ?? null]),
    [
      ['00:01', 'started', null],
      ['00:02', 'skipped', 'tenant_queue_full'],
      ['00:03', 'skipped', 'tenant_queue_full'],
    ],
  );
  assert.equal((await keel.request('GET', '/v1/runs?limit=100')).body.runs.length, 1);
  // With room again, the next fire starts; skipped fires can be backfilled by an operator like any
  // other.
  await keel.store.updateTenant(tenant.id, { maxQueuedRuns: null });
  await keel.tickAt('2026-01-01T00:04:00Z');
  assert.equal((await keel.fires(created.body.id)).at(-1).status, 'started');
});

const spawner = defineAgent({
  name: 'spawner',
  version: '1',
  async run(ctx) {
    await ctx.waitForInput('go');
    return ctx.child(quick, {});
  },
});

test("child runs over the tenant's max queued runs: the parent waits (tenant_queue_full) and spawns the child once there is room", async (t) => {
  const keel = await start(t, [quick, spawner]);
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'fanout', maxQueuedRuns: 1 },
    keel.adminKey,
  );
  const key = body.apiKey;
  const parent = (await keel.request('POST', '/v1/runs', { agent: 'spawner' }, key)).body;
  await waitFor(async () => (await get(keel, parent.id, key)).waitingReason === 'input');
  // A run no worker here serves fills the tenant's queue and stays there.
  const { run: filler } = await keel.store.createRun({
    id: 'run_filler',
    tenantId: body.tenant.id,
    agent: 'ghost',
    agentVersion: '1',
    input: null,
    priority: 'batch',
    budget: {},
    metadata: null,
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
  });
  assert.equal(filler.status, 'queued');
  await keel.request('POST', `/v1/runs/${parent.id}/input`, { key: 'go', value: true }, key);
  await waitFor(
    async () => (await get(keel, parent.id, key)).waitingReason === 'tenant_queue_full',
  );
  const seen = await get(keel, parent.id, key);
  assert.equal(seen.status, 'waiting');
  assert.ok(
    seen.wakeAt !== null && Date.parse(seen.wakeAt) > Date.now() - 1_000,
    'it tries again soon',
  );
  const runs = (await keel.request('GET', '/v1/runs', undefined, key)).body.runs;
  assert.equal(
    runs.filter((r: any) => r.parentRunId === parent.id).length,
    0,
    'no child was queued over the limit',
  );
  const waiting = (await events(keel, parent.id, key))
    .filter((e) => e.type === 'run.waiting')
    .at(-1);
  assert.equal(waiting.data.reason, 'tenant_queue_full');

  await keel.store.updateTenant(body.tenant.id, { maxQueuedRuns: null });
  await waitFor(async () => (await get(keel, parent.id, key)).status === 'succeeded', 20_000);
  const log = await events(keel, parent.id, key);
  assert.ok(
    log.some((e) => e.type === 'run.resumed' && e.data.reason === 'tenant_queue_full'),
    JSON.stringify(log.map((e) => [e.type, e.data.reason])),
  );
  assert.equal(
    (await keel.request('GET', '/v1/runs', undefined, key)).body.runs.filter(
      (r: any) => r.parentRunId === parent.id,
    ).length,
    1,
  );
});

const sleeper = defineAgent({
  name: 'sleeper',
  version: '1',
  async run(ctx) {
    await ctx.sleep(300);
    return 'rested';
  },
});

test('explainable waiting: a timer wait is reason timer with since and wakeAt; run.waiting then run.resumed', async (t) => {
  const keel = await start(t, [sleeper]);
  const run = (await keel.request('POST', '/v1/runs', { agent: 'sleeper' })).body;
  const waiting = await keel.waitForRun(run.id, (r) => r.status === 'waiting');
  assert.equal(waiting.waitingReason, 'timer');
  assert.ok(
    waiting.waitingSince !== null &&
      waiting.wakeAt !== null &&
      waiting.wakeAt >= waiting.waitingSince,
  );
  await keel.waitForRun(run.id, (r) => r.status === 'succeeded');
  const log = await events(keel, run.id);
  const types = log.map((e) => e.type);
  assert.ok(types.indexOf('run.waiting') < types.indexOf('run.resumed'), types.join(' '));
  assert.equal(log.find((e) => e.type === 'run.waiting').data.reason, 'timer');
  assert.equal(log.find((e) => e.type === 'run.resumed').data.reason, 'timer');
  assert.ok(log.find((e) => e.type === 'run.resumed').data.waitedMs >= 0);
});

const fanout = defineAgent({
  name: 'fanout',
  version: '1',
  async run(ctx) {
    const results = await Promise.all([1, 2, 3].map((n) => ctx.child(quick, { n })));
    return results.length;
  },
});

test('a fan-out of children with room for one queued run: they are spawned a few at a time, never over the limit, and the parent finishes', async (t) => {
  const keel = await start(t, [quick, fanout]);
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'fan', maxQueuedRuns: 1 },
    keel.adminKey,
  );
  const key = body.apiKey;
  const parent = (await keel.request('POST', '/v1/runs', { agent: 'fanout' }, key)).body;
  await waitFor(async () => (await get(keel, parent.id, key)).status === 'succeeded', 30_000);
  assert.equal((await get(keel, parent.id, key)).result, 3);
  const children = (await keel.request('GET', '/v1/runs', undefined, key)).body.runs.filter(
    (r: any) => r.parentRunId === parent.id,
  );
  assert.equal(children.length, 3);
  const log = await events(keel, parent.id, key);
  assert.ok(
    log.some((e) => e.type === 'run.waiting' && e.data.reason === 'tenant_queue_full'),
    'two of the three waited for room',
  );
  // The first park spawned exactly one child: the others waited (effect.started events before the
  // first park).
  const firstPark = log.findIndex((e) => e.type === 'run.waiting');
  assert.equal(log.slice(0, firstPark).filter((e) => e.type === 'effect.started').length, 1);
});

test('explainable waiting: a model-plane reason left by a worker that handed the run back no longer applies once queued', async (t) => {
  const keel = await start(t);
  await keel.orchestrator.stop();
  const run = (await keel.request('POST', '/v1/runs', { agent: 'quick' })).body;
  const [held] = await keel.store.claimRuns({
    owner: 'w',
    limit: 1,
    leaseMs: 60_000,
    served: ['quick@1'],
  });
  assert.ok(held !== undefined && held.id === run.id);
  await keel.store.commit({
    runId: held.id,
    leaseToken: held.leaseToken,
    expectedStateVersion: held.stateVersion,
    run: { waitingReason: 'rate_limited' },
  });
  assert.equal((await get(keel, run.id)).waitingReason, 'rate_limited');
  await keel.store.releaseLeases('w', [run.id]);
  const seen = await get(keel, run.id);
  assert.deepEqual(
    [seen.status, seen.waitingReason, seen.waitingSince],
    ['queued', 'awaiting_worker', seen.updatedAt],
  );
});
