// Model tiering, spend admission and platform caps through the real engine, API and gateway, with
// models served by a fake OpenAI-compatible server over real HTTP (it sees which model each call
// went to): a low tenant budget and a long backlog route `large` to `small`, a hinted call is
// escalated, the decision is journaled so a resume or replay under changed conditions calls the same
// model, a run whose estimate exceeds the budget left is parked or refused, and a spent platform cap
// is a typed error for a direct call and a park for a run.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { isKeelError } from '../src/domain/keel-error.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { PlatformCaps } from '../src/models/platform-caps.ts';
import type { TieringRule } from '../src/models/tiering.ts';
import { telemetry } from '../src/telemetry/telemetry.ts';
import { defineAgent, defineModel } from '../src/sdk/define.ts';
import { startFakeOpenAi, type FakeProviderServer } from './support/fake-openai-server.ts';
import { TERMINAL, startKeel, type TestKeel } from './support/keel-server.ts';

/** 2,000 characters: about 500 input tokens per call at the fake's 4 characters per token. */
const PROMPT = 'x'.repeat(2_000);

const models = (fake: FakeProviderServer, largeConcurrency = 8) => [
  defineModel({
    name: 'large',
    provider: 'openai',
    providerModel: 'gpt-large',
    baseUrl: `${fake.url}/v1`,
    maxConcurrency: largeConcurrency,
    price: { inputPerMTok: 10, outputPerMTok: 30 },
  }),
  defineModel({
    name: 'small',
    provider: 'openai',
    providerModel: 'gpt-small',
    baseUrl: `${fake.url}/v1`,
    price: { inputPerMTok: 1, outputPerMTok: 3 },
  }),
];

const asker = defineAgent({
  name: 'asker',
  version: '1',
  async run(ctx, input: { model?: string; hint?: 'risky' } | null) {
    const reply = await ctx.model({
      model: input?.model ?? 'large',
      messages: [{ role: 'user', content: PROMPT }],
      ...(input?.hint === undefined ? {} : { hint: input.hint }),
    });
    return reply.model;
  },
});

const BUDGET_RULE: TieringRule = {
  when: { budgetRemainingBelow: 0.5 },
  route: { from: 'large', to: 'small' },
};

async function tenantId(keel: TestKeel): Promise<string> {
  const tenant = (await keel.store.listTenants()).find((t) => t.name === 'test');
  assert.ok(tenant !== undefined);
  return tenant.id;
}

async function patchTenant(keel: TestKeel, patch: object): Promise<void> {
  const id = await tenantId(keel);
  const answer = await keel.request('PATCH', `/v1/admin/tenants/${id}`, patch, keel.adminKey);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

async function finish(keel: TestKeel, agent: string, input: unknown): Promise<any> {
  const created = await keel.request('POST', '/v1/runs', { agent, input });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return keel.waitForRun(created.body.id, (r) => TERMINAL.has(r.status));
}

const sentModels = (fake: FakeProviderServer) => fake.requests.map((r) => r.body.model);

test('a low tenant budget routes large to small; the decision is on the effect and in a model.tiered event', async (t) => {
  const fake = await startFakeOpenAi(() => ({ kind: 'reply', text: 'ok' }));
  t.after(() => fake.close());
  const gateway = new ModelGateway(models(fake), { tiering: [BUDGET_RULE] });
  const keel = await startKeel({ agents: [asker], gateway });
  t.after(() => keel.close());
  await patchTenant(keel, { dailyTokenBudget: 1_000 });

  const first = await finish(keel, 'asker', null);
  assert.equal(first.result, 'large@1', 'the whole budget is left: no rule applies');
  // About 500 of 1,000 tokens are spent: less than half is left.
  const second = await finish(keel, 'asker', null);
  assert.equal(second.status, 'succeeded', JSON.stringify(second.error));
  assert.equal(second.result, 'small@1');
  assert.deepEqual(sentModels(fake), ['gpt-large', 'gpt-small']);

  const events = (await keel.request('GET', `/v1/runs/${second.id}/events?format=json`)).body;
  const list = (events.events ?? events) as Array<{ type: string; data: any }>;
  const tiered = list.find((e) => e.type === 'model.tiered');
  assert.ok(tiered !== undefined, JSON.stringify(list.map((e) => e.type)));
  assert.deepEqual(
    [tiered.data.requested, tiered.data.model, tiered.data.rule, tiered.data.reason],
    ['large', 'small', 0, 'budget'],
  );
  assert.match(tiered.data.detail, /of its daily budget left \(below 50%\)/);
  const completed = list.find((e) => e.type === 'effect.completed' && e.data.kind === 'model');
  assert.equal(completed?.data.attributes.tiering.model, 'small');
});

test('a hinted call is escalated; a backlog past the limit routes new calls to the cheaper model', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const fake = await startFakeOpenAi((_body, index) =>
    index === 1
      ? { kind: 'reply', text: 'held answer', hold: { afterPieces: 1, until: held } }
      : { kind: 'reply', text: 'ok' },
  );
  t.after(() => fake.close());
  const gateway = new ModelGateway(models(fake, 1), {
    tiering: [
      { when: { hint: 'risky' }, escalate: { to: 'large' } },
      {
        when: { poolBacklogAbove: { pool: 'model:large', queued: 0 } },
        route: { from: 'large', to: 'small' },
      },
    ],
  });
  const keel = await startKeel({ agents: [asker], gateway });
  t.after(async () => {
    release();
    await keel.close();
  });

  const risky = await finish(keel, 'asker', { model: 'small', hint: 'risky' });
  assert.equal(risky.result, 'large@1');
  assert.deepEqual(sentModels(fake), ['gpt-large']);

  // One call holds large's only slot, a second queues behind it: the third sees a backlog of 1.
  const submit = async () =>
    (await keel.request('POST', '/v1/runs', { agent: 'asker', input: null })).body.id;
  const holder = await submit();
  await waitFor(() => fake.requests.length === 2, 'the holder reaches the provider');
  const queued = await submit();
  await keel.waitForRun(queued, (r) => r.waitingReason === 'pool_saturated');
  const routed = await submit();
  const done = await keel.waitForRun(routed, (r) => TERMINAL.has(r.status));
  assert.equal(done.result, 'small@1');
  assert.deepEqual(sentModels(fake), ['gpt-large', 'gpt-large', 'gpt-small']);
  release();
  for (const id of [holder, queued])
    assert.equal((await keel.waitForRun(id, (r) => TERMINAL.has(r.status))).result, 'large@1');
});

test('the journaled decision holds: a call interrupted by a restart, and a replay, keep the routed model after the budget is raised', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const fake = await startFakeOpenAi((_body, index) =>
    index === 1
      ? { kind: 'reply', text: 'never finished', hold: { afterPieces: 1, until: held } }
      : { kind: 'reply', text: 'ok' },
  );
  t.after(() => {
    release();
    return fake.close();
  });
  const twice = defineAgent({
    name: 'twice',
    version: '1',
    async run(ctx) {
      const first = await ctx.model({
        model: 'large',
        messages: [{ role: 'user', content: 'one' }],
      });
      await ctx.waitForInput('go');
      const second = await ctx.model({
        model: 'large',
        messages: [{ role: 'user', content: 'two' }],
      });
      return [first.model, second.model];
    },
  });
  const before = await startKeel({
    agents: [asker, twice],
    gateway: new ModelGateway(models(fake), { tiering: [BUDGET_RULE] }),
  });
  let stopped = false;
  t.after(() => (stopped ? undefined : before.close()));
  // About half of a 1,000-token budget is spent: the next call of large is routed to small.
  await patchTenant(before, { dailyTokenBudget: 1_000 });
  assert.equal((await finish(before, 'asker', null)).result, 'large@1');
  const id = (await before.request('POST', '/v1/runs', { agent: 'twice', input: null })).body.id;
  await waitFor(() => fake.requests.length === 2, 'the first call reaches the provider');
  assert.equal(fake.requests[1]!.body.model, 'gpt-small');
  const interrupted = (await before.request('GET', `/v1/runs/${id}/steps`)).body;
  await before.stop(); // the call is cut off mid-answer; its decision is journaled `running`
  stopped = true;
  assert.equal(
    JSON.stringify(interrupted).includes('"running"'),
    true,
    JSON.stringify(interrupted),
  );

  // The budget is raised and the process comes back: the interrupted call still goes to small.
  const after = await startKeel({
    agents: [asker, twice],
    gateway: new ModelGateway(models(fake), { tiering: [BUDGET_RULE] }),
    dir: before.dir,
  });
  t.after(async () => {
    await after.close();
    rmSync(before.dir, { recursive: true, force: true });
  });
  await patchTenant(after, { dailyTokenBudget: 1_000_000 });
  await after.waitForRun(id, (r) => r.status === 'waiting' && r.waitingReason === 'input');
  assert.deepEqual(sentModels(fake), ['gpt-large', 'gpt-small', 'gpt-small']);
  await after.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: true });
  const done = await after.waitForRun(id, (r) => TERMINAL.has(r.status));
  // Replayed, the first call answers small (journaled); the second is decided now: large.
  assert.deepEqual(done.result, ['small@1', 'large@1']);
  assert.deepEqual(sentModels(fake), ['gpt-large', 'gpt-small', 'gpt-small', 'gpt-large']);
});

test("spend admission: a run whose estimate (declared, or its agent's recent average) exceeds the budget left is parked (and resumes on a raise) or refused", async (t) => {
  const fake = await startFakeOpenAi(() => ({ kind: 'reply', text: 'ok' }));
  t.after(() => fake.close());
  const estimate = {
    model: 'large',
    modelCalls: 2,
    inputTokensPerCall: 1_000,
    outputTokensPerCall: 0,
  };
  const parker = defineAgent({ ...asker, name: 'parker', estimate });
  const refuser = defineAgent({ ...asker, name: 'refuser', estimate, whenOverBudget: 'refuse' });
  // No declared estimate: the average of its latest successful runs stands in, once there are 3.
  const learner = defineAgent({ ...asker, name: 'learner', whenOverBudget: 'refuse' });
  const keel = await startKeel({
    agents: [asker, parker, refuser, learner],
    gateway: new ModelGateway(models(fake)),
  });
  t.after(() => keel.close());
  await patchTenant(keel, { dailyTokenBudget: 1_500 });

  const refused = await keel.request('POST', '/v1/runs', { agent: 'refuser', input: null });
  assert.equal(refused.status, 429, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, 'budget_insufficient');
  assert.equal(refused.body.error.details.expectedTokens, 2_000);
  assert.equal(refused.body.error.details.tokensLeft, 1_500);
  assert.equal((await keel.request('GET', '/v1/runs?agent=refuser')).body.runs.length, 0);

  const parked = await keel.request('POST', '/v1/runs', { agent: 'parker', input: null });
  assert.equal(parked.status, 201);
  assert.deepEqual(
    [parked.body.status, parked.body.waitingReason],
    ['waiting', 'tenant_budget_exhausted'],
  );
  assert.equal(fake.requests.length, 0);
  await patchTenant(keel, { dailyTokenBudget: 100_000 });
  const resumed = await keel.waitForRun(parked.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(resumed.status, 'succeeded');
  // An agent without an estimate is never checked here.
  assert.equal((await finish(keel, 'asker', null)).status, 'succeeded');

  for (let i = 0; i < 3; i++)
    assert.equal((await finish(keel, 'learner', null)).status, 'succeeded');
  const sample = await keel.store.agentSpendSample('learner', 20);
  assert.equal(sample.runs, 3);
  assert.ok(sample.tokens > 400, JSON.stringify(sample));
  const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const used = (await keel.store.tenantUsageSince(await tenantId(keel), dayStart)).tokens;
  await patchTenant(keel, { dailyTokenBudget: used + 100 });
  const learned = await keel.request('POST', '/v1/runs', { agent: 'learner', input: null });
  assert.equal(learned.status, 429, JSON.stringify(learned.body));
  assert.equal(learned.body.error.details.estimate, 'recent_runs');
  assert.equal(learned.body.error.details.expectedTokens, sample.tokens);
});

test('a spent platform-wide cap: a direct call fails platform_cap_reached, a run parks on it; /metrics shows it', async (t) => {
  const fake = await startFakeOpenAi(() => ({ kind: 'reply', text: 'ok' }));
  t.after(() => fake.close());
  const gateway = new ModelGateway(models(fake));
  const keel = await startKeel({ agents: [asker], gateway });
  t.after(() => keel.close());
  const caps = new PlatformCaps(keel.store, { tokensPerDay: 400 });
  gateway.usePlatformCaps(caps);
  t.after(telemetry.attachPlatformCaps(caps));

  const first = await finish(keel, 'asker', null);
  assert.equal(first.status, 'succeeded', 'under the cap');
  const parked = await keel.waitForRun(
    (await keel.request('POST', '/v1/runs', { agent: 'asker', input: null })).body.id,
    (r) => r.status === 'waiting',
  );
  assert.equal(parked.waitingReason, 'platform_cap_reached');
  await assert.rejects(
    gateway.call(
      { model: 'small', messages: [{ role: 'user', content: 'hi' }] },
      { signal: AbortSignal.timeout(10_000) },
    ),
    (error: unknown) =>
      isKeelError(error) &&
      error.code === 'platform_cap_reached' &&
      (error.details as { cap?: string }).cap === 'platformTokenCapPerDay' &&
      error.retryAfterMs !== undefined,
  );
  assert.equal(fake.requests.length, 1, 'nothing past the cap reached the provider');
  const used = (await caps.usage()).tokens;
  assert.ok(used >= 400);
  const metrics = (await telemetry.render()).body;
  assert.match(metrics, /keel_platform_model_cap\{type="tokens"\} 400/);
  assert.ok(metrics.includes(`keel_platform_model_usage{type="tokens"} ${used}`), metrics);
});

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!predicate()) {
    assert.ok(Date.now() < deadline, `timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
