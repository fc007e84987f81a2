// Agent contracts over real HTTP: an agent's input schema refuses a wrong-shaped input at submit
// (POST /v1/runs, schedules, ctx.child) with 400 agent_input_invalid and the zod issues, and the
// agent receives the parsed input; its output schema fails a run whose result breaks it. And Keel's
// own TypeError during a model call is an internal_error with a correlation id that the log line
// carries too, never model_unavailable (which the same input used to produce).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent, defineModel } from '../src/sdk/define.ts';
import type { Json } from '../src/sdk/types.ts';
import { assertError } from './support/assert-error.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { TERMINAL, startKeel } from './support/keel-server.ts';
import { startSchedulesKeel } from './support/schedules-keel.ts';

const typed = defineAgent({
  name: 'typed',
  version: '1',
  input: z.object({ city: z.string().min(1), days: z.number().int().positive().default(3) }),
  output: z.object({ forecast: z.string() }),
  async run(_ctx, input) {
    // The parsed input: `days` has its default although the client did not send it.
    return { forecast: `${input.city} for ${input.days} days` };
  },
});

const liar = defineAgent({
  name: 'liar',
  version: '1',
  output: z.object({ forecast: z.string() }),
  async run() {
    return { forecast: 42 } as unknown as { forecast: string };
  },
});

const parent = defineAgent({
  name: 'parent',
  version: '1',
  async run(ctx, input: Json) {
    try {
      return await ctx.child('typed', input);
    } catch (error) {
      const e = error as { code: string; details?: { issues?: Json } };
      return { refused: e.code, issues: e.details?.issues ?? null };
    }
  },
});

test('POST /v1/runs: a wrong-shaped input is 400 agent_input_invalid with the issues, and no run is created', async (t) => {
  const keel = await startKeel({ agents: [typed, liar, parent] });
  t.after(() => keel.close());

  const bad = await keel.request('POST', '/v1/runs', { agent: 'typed', input: { days: 0 } });
  assertError(bad, 400, 'agent_input_invalid');
  assert.equal(bad.body.error.details.agent, 'typed@1');
  const paths = bad.body.error.details.issues.map((i: any) => i.path.join('.')).sort();
  assert.deepEqual(paths, ['city', 'days']);
  assert.ok(bad.body.error.details.issues.every((i: any) => typeof i.message === 'string'));
  assertError(
    await keel.request('POST', '/v1/runs', { agent: 'typed', input: 'Paris' }),
    400,
    'agent_input_invalid',
  );
  assertError(
    await keel.request('POST', '/v1/runs', { agent: 'typed' }),
    400,
    'agent_input_invalid',
  );
  assert.equal((await keel.request('GET', '/v1/runs')).body.runs.length, 0);

  const good = await keel.request('POST', '/v1/runs', { agent: 'typed', input: { city: 'Oslo' } });
  assert.equal(good.status, 201, JSON.stringify(good.body));
  const run = await keel.waitForRun(good.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.deepEqual(run.result, { forecast: 'Oslo for 3 days' });
  assert.deepEqual(run.input, { city: 'Oslo' }, 'the stored input is what the client sent');
});

test('a result that breaks the output schema fails the run with agent_output_invalid and the issues', async (t) => {
  const keel = await startKeel({ agents: [liar] });
  t.after(() => keel.close());
  const created = await keel.request('POST', '/v1/runs', { agent: 'liar', input: null });
  assert.equal(created.status, 201);
  const run = await keel.waitForRun(created.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'failed');
  assert.equal(run.result ?? null, null);
  assert.equal(run.error.code, 'agent_output_invalid', JSON.stringify(run.error));
  assert.deepEqual(run.error.details.issues[0].path, ['forecast']);
});

test('ctx.child with a wrong-shaped input rejects with agent_input_invalid and creates no child run', async (t) => {
  const keel = await startKeel({ agents: [typed, parent] });
  t.after(() => keel.close());
  const created = await keel.request('POST', '/v1/runs', {
    agent: 'parent',
    input: { city: 7 },
  });
  const run = await keel.waitForRun(created.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.equal(run.result.refused, 'agent_input_invalid');
  assert.deepEqual(run.result.issues[0].path, ['city']);
  const runs = (await keel.request('GET', '/v1/runs')).body.runs;
  assert.deepEqual(
    runs.map((r: any) => r.agent),
    ['parent'],
  );
  // A good input makes a child as before.
  const ok = await keel.request('POST', '/v1/runs', { agent: 'parent', input: { city: 'Rome' } });
  const done = await keel.waitForRun(ok.body.id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(done.result, { forecast: 'Rome for 3 days' });
});

test('schedules: a template input that breaks the schema is 400 at create; a fire of a schedule made before the schema is skipped with the issues', async (t) => {
  const untyped = defineAgent({
    name: 'typed',
    version: '0',
    async run(_ctx, input: Json) {
      return input;
    },
  });
  const before = await startSchedulesKeel({ agents: [untyped], start: '2026-01-01T00:00:00Z' });
  t.after(() => before.close());
  const created = await before.request('POST', '/v1/schedules', {
    timeZone: 'UTC',
    cron: '* * * * *',
    template: { agent: 'typed', input: { town: 'Lima' } },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));

  // Another process on the same database now serves typed@1, whose schema wants `city`.
  const after = await startSchedulesKeel({
    agents: [typed],
    start: '2026-01-01T00:00:00Z',
    shareStoreOf: before,
    apiKey: before.apiKey,
  });
  t.after(() => after.close());
  assertError(
    await after.request('POST', '/v1/schedules', {
      timeZone: 'UTC',
      cron: '* * * * *',
      template: { agent: 'typed', input: { town: 'Lima' } },
    }),
    400,
    'agent_input_invalid',
  );
  await after.tickAt('2026-01-01T00:01:00Z');
  const [fire] = await after.fires(created.body.id);
  assert.equal(fire.status, 'skipped');
  assert.equal(fire.runId, null);
  assert.equal(fire.detail.reason, 'agent_input_invalid');
  assert.deepEqual(fire.detail.issues[0].path, ['city']);
});

test('a TypeError inside Keel during a model call is internal_error with a correlation id in the error and the log, not model_unavailable', async (t) => {
  const fake = await startFakeOpenAi(() => ({ kind: 'reply', text: 'hello' }));
  t.after(() => fake.close());
  const gateway = new ModelGateway(
    [
      defineModel({
        name: 'gpt',
        provider: 'openai',
        baseUrl: `${fake.url}/v1`,
        apiKeyEnv: 'FAKE_OPENAI_KEY',
      }),
    ],
    { secret: () => 'sk-fake' },
  );
  // The input the issue reported: no `prompt`, so the message's content is undefined and the
  // gateway's token estimate reads `.length` of it.
  const chat = defineAgent({
    name: 'chat',
    version: '1',
    async run(ctx, input: { prompt: string }) {
      const answer = await ctx.model({
        model: 'gpt',
        messages: [{ role: 'user', content: input.prompt }],
      });
      return answer.text;
    },
  });
  const lines: Array<{ message: string; fields: Record<string, unknown> | undefined }> = [];
  const keel = await startKeel({
    agents: [chat],
    gateway,
    orchestrator: { log: (_level, message, fields) => lines.push({ message, fields }) },
  });
  t.after(() => keel.close());
  const created = await keel.request('POST', '/v1/runs', { agent: 'chat', input: {} });
  const run = await keel.waitForRun(created.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'failed');
  assert.equal(run.error.code, 'internal_error', JSON.stringify(run.error));
  const correlationId = run.error.details.correlationId;
  assert.match(correlationId, /^err_[0-9a-f-]{36}$/);
  assert.match(run.error.message, /TypeError/);
  const logged = lines.find((l) => l.fields?.correlationId === correlationId);
  assert.ok(logged, `no log line carries ${correlationId}: ${JSON.stringify(lines)}`);
  assert.equal(logged.fields?.runId, created.body.id);
  assert.ok(logged.fields?.err instanceof TypeError, 'the log line carries the stack');
  assert.equal(fake.requests.length, 0, 'the provider was never called');
  // The step says the same.
  const steps = (await keel.request('GET', `/v1/runs/${created.body.id}/steps`)).body.steps;
  assert.equal(steps.find((s: any) => s.kind === 'model')?.error?.code, 'internal_error');
});
