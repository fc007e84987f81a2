// Token and cost budgets are enforced before dispatch (the call's estimate must fit what the run
// has left; the provider never sees a call that cannot), output is capped to the tokens left, and a
// run stays pinned to the model version it first used, across a restart with a changed models
// configuration.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent, defineModel } from '../src/sdk/define.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { TERMINAL, startKeel } from './support/keel-server.ts';

const asker = defineAgent({
  name: 'asker',
  version: '1',
  async run(ctx, input: { chars: number }) {
    return (
      await ctx.model({
        model: 'gpt',
        messages: [{ role: 'user', content: 'x'.repeat(input.chars) }],
      })
    ).text.length;
  },
});

test('token and cost budgets stop a call before dispatch when its estimate cannot fit; output is capped to what is left', async (t) => {
  const fake = await startFakeOpenAi(() => ({ kind: 'reply', text: 'ok' }));
  t.after(() => fake.close());
  const gpt = defineModel({
    name: 'gpt',
    provider: 'openai',
    baseUrl: `${fake.url}/v1`,
    price: { inputPerMTok: 1_000, outputPerMTok: 1_000 },
  });
  const keel = await startKeel({ agents: [asker], gateway: new ModelGateway([gpt]) });
  t.after(() => keel.close());
  const cases: Array<[object, object, string]> = [
    [{ chars: 4_000 }, { maxTokens: 500 }, 'maxTokens'], // ≈ 1000 input tokens > 500
    [{ chars: 4_000 }, { maxCostUsd: 0.5 }, 'maxCostUsd'], // ≈ 1000 tokens × $1000/MTok = $1 > $0.5
  ];
  for (const [input, budget, which] of cases) {
    const id = (await keel.request('POST', '/v1/runs', { agent: 'asker', input, budget })).body.id;
    const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
    assert.equal(run.status, 'failed');
    assert.equal(run.error.code, 'budget_exceeded');
    assert.equal(run.error.details.budget, which);
  }
  assert.equal(fake.requests.length, 0, 'the provider never saw a call that could not fit');

  const id = (
    await keel.request('POST', '/v1/runs', {
      agent: 'asker',
      input: { chars: 400 },
      budget: { maxTokens: 300 },
    })
  ).body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded');
  assert.ok(
    fake.requests[0]!.body.max_tokens > 0 && fake.requests[0]!.body.max_tokens <= 200,
    `max_tokens ${fake.requests[0]!.body.max_tokens}`,
  );
});

test('a run stays pinned to the model version it used first, across a restart with a new version configured', async (t) => {
  const fake = await startFakeOpenAi();
  t.after(() => fake.close());
  const twice = defineAgent({
    name: 'twice',
    version: '1',
    async run(ctx) {
      const first = await ctx.model({ model: 'gpt', messages: [{ role: 'user', content: 'one' }] });
      await ctx.waitForInput('go');
      const second = await ctx.model({
        model: 'gpt',
        messages: [{ role: 'user', content: 'two' }],
      });
      return [first.model, second.model];
    },
  });
  const gptAt = (version: string) =>
    new ModelGateway([
      defineModel({ name: 'gpt', provider: 'openai', version, baseUrl: `${fake.url}/v1` }),
    ]);
  const before = await startKeel({ agents: [twice], gateway: gptAt('2025-01') });
  const id = (await before.request('POST', '/v1/runs', { agent: 'twice', input: null })).body.id;
  await before.waitForRun(id, (r) => r.status === 'waiting');
  await before.stop();

  const after = await startKeel({ agents: [twice], gateway: gptAt('2026-01'), dir: before.dir });
  t.after(async () => {
    await after.close();
    rmSync(before.dir, { recursive: true, force: true });
  });
  await after.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: true });
  const pinned = await after.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(pinned.status, 'failed');
  assert.equal(pinned.error.code, 'model_version_unavailable');
  assert.deepEqual(pinned.error.details, { model: 'gpt', pinned: '2025-01', served: '2026-01' });

  const fresh = (await after.request('POST', '/v1/runs', { agent: 'twice', input: null })).body.id;
  await after.waitForRun(fresh, (r) => r.status === 'waiting');
  await after.request('POST', `/v1/runs/${fresh}/input`, { key: 'go', value: true });
  const done = await after.waitForRun(fresh, (r) => TERMINAL.has(r.status));
  assert.deepEqual(done.result, ['gpt@2026-01', 'gpt@2026-01']);
});
