// Done-when: during a model-provider outage (every request hangs), runs that only use inline tools
// keep completing at about their normal rate, over the HTTP API: model calls wait on their own
// pool, breaker and timeouts, never on the tool pool or the orchestrator. Rates are compared within
// a generous factor (the machine is shared).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent, defineModel, defineTool } from '../src/sdk/define.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { TERMINAL, startKeel, type TestKeel } from './support/keel-server.ts';

const double = defineTool({
  name: 'double',
  description: 'Doubles',
  effect: 'read',
  input: z.object({ n: z.number() }),
  run: ({ n }) => ({ n: n * 2 }),
});

const toolsOnly = defineAgent({
  name: 'tools-only',
  version: '1',
  async run(ctx, input: number) {
    const [a, b] = await Promise.all([
      ctx.tool(double, { n: input }),
      ctx.tool(double, { n: input + 1 }),
    ]);
    const c = await ctx.tool(double, { n: a.n + b.n });
    return c.n;
  },
});

const modelUser = defineAgent({
  name: 'model-user',
  version: '1',
  async run(ctx) {
    return (
      await ctx.model({ model: 'down', messages: [{ role: 'user', content: 'anyone there?' }] })
    ).text;
  },
});

async function runBatch(keel: TestKeel, count: number): Promise<number> {
  const started = performance.now();
  const ids = await Promise.all(
    Array.from(
      { length: count },
      async (_, i) =>
        (await keel.request('POST', '/v1/runs', { agent: 'tools-only', input: i })).body
          .id as string,
    ),
  );
  for (const [i, id] of ids.entries()) {
    const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), 30_000);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.result, (4 * i + 2) * 2);
  }
  return performance.now() - started;
}

test('inline-tool runs keep completing at their normal rate while the model provider hangs', async (t) => {
  const fake = await startFakeOpenAi(() => ({ kind: 'hang' }));
  t.after(() => fake.close());
  const down = defineModel({
    name: 'down',
    provider: 'openai',
    baseUrl: `${fake.url}/v1`,
    maxAttempts: 3,
    timeouts: { attemptMs: 300, callMs: 1_500 },
  });
  const gateway = new ModelGateway([down], { breaker: { consecutiveFailures: 3, openMs: 2_000 } });
  const keel = await startKeel({ agents: [toolsOnly, modelUser], gateway });
  t.after(() => keel.close());

  await runBatch(keel, 5); // warm-up
  const baselineMs = await runBatch(keel, 30);

  const modelRuns = await Promise.all(
    Array.from(
      { length: 40 },
      async () =>
        (await keel.request('POST', '/v1/runs', { agent: 'model-user', input: null })).body
          .id as string,
    ),
  );
  const deadline = Date.now() + 5_000;
  while (fake.requests.length < 3 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  assert.ok(fake.requests.length >= 3, 'model calls are in flight against the hung provider');
  const outageMs = await runBatch(keel, 30);
  t.diagnostic(
    `30 inline-tool runs: ${baselineMs.toFixed(0)} ms before, ${outageMs.toFixed(0)} ms during the outage`,
  );
  assert.ok(
    outageMs <= baselineMs * 5 + 1_000,
    `inline-tool runs slowed from ${baselineMs} ms to ${outageMs} ms`,
  );

  // The model runs end with a typed provider failure (attempts timed out, then the open breaker
  // outlasted the call).
  for (const id of modelRuns) {
    const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), 30_000);
    assert.equal(run.status, 'failed');
    assert.ok(
      ['model_unavailable', 'model_timeout', 'provider_unavailable'].includes(run.error.code),
      run.error.code,
    );
  }
  // The breaker kept the hung provider from seeing 40 × 3 attempts.
  t.diagnostic(`requests to the hung provider: ${fake.requests.length} for 40 runs`);
  assert.ok(fake.requests.length < 40 * 3);
});

test('a run whose model call waits on open breakers says so (waitingReason provider_unavailable) and resumes on recovery', async (t) => {
  const fake = await startFakeOpenAi(() => ({ kind: 'status', status: 500 }));
  t.after(() => fake.close());
  const down = defineModel({
    name: 'down',
    provider: 'openai',
    baseUrl: `${fake.url}/v1`,
    maxAttempts: 1,
    timeouts: { callMs: 20_000 },
  });
  const gateway = new ModelGateway([down], { breaker: { consecutiveFailures: 2, openMs: 1_500 } });
  const keel = await startKeel({ agents: [modelUser], gateway });
  t.after(() => keel.close());
  for (let i = 0; i < 2; i += 1) {
    const id = (await keel.request('POST', '/v1/runs', { agent: 'model-user', input: null })).body
      .id;
    const failed = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
    assert.equal(failed.error.code, 'model_unavailable');
  }
  assert.equal(gateway.stats().breakers['down/default'], 'open');
  const id = (await keel.request('POST', '/v1/runs', { agent: 'model-user', input: null })).body.id;
  const waiting = await keel.waitForRun(id, (r) => r.waitingReason === 'provider_unavailable');
  assert.equal(waiting.status, 'running', 'it waits in the model plane, still claimed');
  const sent = fake.requests.length;
  fake.setDefault(() => ({ kind: 'reply', text: 'recovered' }));
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded');
  assert.equal(done.result, 'recovered');
  assert.equal(done.waitingReason, null);
  assert.equal(fake.requests.length, sent + 1, 'one probe, no hammering');
  const events = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body as any[];
  assert.ok(
    events.some((e) => e.type === 'model.waiting' && e.data.reason === 'provider_unavailable'),
  );
  // Explainable waiting: the run says when it started and stopped waiting, and why.
  const waited = events.find((e) => e.type === 'run.waiting');
  const resumed = events.find((e) => e.type === 'run.resumed');
  assert.deepEqual(
    [waited?.data.reason, resumed?.data.reason],
    ['provider_unavailable', 'provider_unavailable'],
  );
  assert.match(waited.data.detail, /open circuit breaker/);
  assert.ok(resumed.seq > waited.seq && resumed.data.waitedMs >= 0);
});
