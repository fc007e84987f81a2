// The SDK adapters through the real engine and HTTP API (in-process, SQLite file, scripted mock
// models): the AI SDK's streamText with two tool calls in one step, one of them failing (the
// failure is journaled and fed back to the model, as the SDK does); content the gateway cannot
// carry refused with a typed error; Keel's retry policy applied to an Agents SDK durable tool; a
// streamed Agents SDK run over KeelModelProvider; a failed model call reaching generateText once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent, Runner, addTraceProcessor } from '@openai/agents';
import { stepCountIs, streamText, generateText, tool } from 'ai';
import { z } from 'zod';
import { durableTools, keelAiSdk } from '../src/adapters/ai-sdk/index.ts';
import { KeelModelProvider, durableTool, runAgent } from '../src/adapters/openai-agents/index.ts';
import { defineAgent, defineModel } from '../src/index.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

const calls = new Map<string, number>();
const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);

const tools = durableTools(
  {
    lookup: tool({
      description: 'Looks a word up',
      inputSchema: z.object({ word: z.string() }),
      execute: async ({ word }) => {
        count(`lookup ${word}`);
        return { word, meaning: `the meaning of ${word}` };
      },
    }),
    broken: tool({
      description: 'Always fails',
      inputSchema: z.object({}),
      execute: async (): Promise<{ ok: boolean }> => {
        count('broken');
        throw new Error('the dictionary is closed');
      },
    }),
  },
  { prefix: 'adapters-test-', tools: { lookup: { effect: 'read' } } },
);

const twoTools = defineModel({
  name: 'two-tools',
  provider: 'mock',
  options: {
    script: [
      {
        text: 'Looking.',
        toolCalls: [
          { name: 'lookup', args: { word: 'keel' } },
          { name: 'broken', args: {} },
        ],
      },
      { text: 'A keel is the spine of a boat.' },
    ],
  },
});

const streaming = defineAgent({
  name: 'ai-sdk-streaming',
  version: '1',
  async run(ctx) {
    const result = streamText({
      model: keelAiSdk(ctx).model('two-tools'),
      prompt: 'What is a keel?',
      tools: tools.bind(ctx),
      stopWhen: stepCountIs(3),
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    const steps = await result.steps;
    const errors = steps.flatMap((step) =>
      step.content.filter((part) => part.type === 'tool-error').map((part) => String(part.error)),
    );
    return { text, steps: steps.length, errors };
  },
});

const withImage = defineAgent({
  name: 'ai-sdk-image',
  version: '1',
  async run(ctx) {
    await generateText({
      model: keelAiSdk(ctx).model('mock'),
      messages: [
        {
          role: 'user',
          content: [{ type: 'image', image: new Uint8Array([1, 2, 3]), mediaType: 'image/png' }],
        },
      ],
    });
    return null;
  },
});

let flaky = 0;
const flakyTool = durableTool({
  name: 'adapters_test_flaky',
  description: 'Fails on its first attempt',
  parameters: z.object({ n: z.number() }),
  execute: async ({ n }) => {
    flaky += 1;
    if (flaky === 1) throw new Error('first attempt fails');
    return `n is ${n}`;
  },
  effect: 'idempotent',
  maxAttempts: 2,
  retry: { initialDelayMs: 1, maxDelayMs: 1 },
});

const flakyModel = defineModel({
  name: 'flaky-model',
  provider: 'mock',
  options: {
    script: [{ toolCalls: [{ name: 'adapters_test_flaky', args: { n: 7 } }] }, { text: 'done' }],
  },
});

const retrying = defineAgent({
  name: 'agents-sdk-retry',
  version: '1',
  async run(ctx) {
    const agent = new Agent({ name: 'Flaky', instructions: 'Call the tool.', tools: [flakyTool] });
    const result = await runAgent(ctx, agent, 'go', { model: 'flaky-model' });
    return String(result.finalOutput);
  },
});

test('AI SDK streamText: two tool calls of one step are journaled, a failing one is fed back to the model', async (t) => {
  const keel = await startKeel({ agents: [streaming], models: [twoTools] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'ai-sdk-streaming', input: null }))
    .body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.equal(run.result.text, 'Looking.A keel is the spine of a boat.');
  assert.equal(run.result.steps, 2);
  assert.equal(run.result.errors.length, 1);
  assert.match(run.result.errors[0], /the dictionary is closed/);
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps as any[];
  assert.deepEqual(
    steps.map((s) => `${s.kind}:${s.name}:${s.status}`),
    [
      'model:two-tools:succeeded',
      'tool:adapters-test-lookup:succeeded',
      'tool:adapters-test-broken:failed',
      'model:two-tools:succeeded',
    ],
  );
  assert.equal(calls.get('lookup keel'), 1);
  assert.equal(calls.get('broken'), 1);
  // The second model call saw both tool results, the failure as its message.
  const second = (await keel.request('GET', `/v1/runs/${id}/steps/${steps[3].seq}`)).body;
  const toolMessages = second.step.input.messages.filter((m: any) => m.role === 'tool');
  assert.deepEqual(JSON.parse(toolMessages[0].content), {
    word: 'keel',
    meaning: 'the meaning of keel',
  });
  assert.match(toolMessages[1].content, /the dictionary is closed/);
});

test('AI SDK: an image in the prompt fails the run with model_content_unsupported, before any model call', async (t) => {
  const keel = await startKeel({ agents: [withImage] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'ai-sdk-image', input: null })).body
    .id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'failed');
  assert.equal(run.error.code, 'model_content_unsupported', JSON.stringify(run.error));
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps as any[];
  assert.deepEqual(steps, []);
});

test('Agents SDK: a durable tool gets Keel’s retry policy (the failed attempt is retried, not fed to the model)', async (t) => {
  // The SDK's tracing is off: its default exporter would post the run's traces to api.openai.com.
  const traced: string[] = [];
  const record = async (what: string) => void traced.push(what);
  addTraceProcessor({
    onTraceStart: () => record('trace'),
    onTraceEnd: () => record('trace end'),
    onSpanStart: () => record('span'),
    onSpanEnd: () => record('span end'),
    shutdown: async () => {},
    forceFlush: async () => {},
  });
  const keel = await startKeel({ agents: [retrying], models: [flakyModel] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'agents-sdk-retry', input: null }))
    .body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.equal(run.result, 'done');
  assert.equal(flaky, 2);
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps as any[];
  const toolStep = steps.find((s) => s.kind === 'tool');
  assert.equal(toolStep.status, 'succeeded');
  assert.equal(toolStep.attempts, 2);
  const second = (await keel.request('GET', `/v1/runs/${id}/steps/${steps.at(-1).seq}`)).body;
  const toolMessage = second.step.input.messages.find((m: any) => m.role === 'tool');
  assert.equal(toolMessage.content, 'n is 7');
  assert.deepEqual(traced, [], 'the Agents SDK recorded no trace and no span');
});

const streamedRun = defineAgent({
  name: 'agents-sdk-streamed',
  version: '1',
  async run(ctx) {
    const runner = new Runner({
      modelProvider: new KeelModelProvider(ctx, 'mock'),
      tracingDisabled: true,
    });
    const agent = new Agent({ name: 'Echo', instructions: 'Echo the user.' });
    const result = await runner.run(agent, 'hello stream', { stream: true });
    let text = '';
    for await (const delta of result.toTextStream()) text += delta;
    await result.completed;
    return { text, final: String(result.finalOutput) };
  },
});

test('Agents SDK: a streamed run through KeelModelProvider gets the journaled answer as its stream', async (t) => {
  const keel = await startKeel({ agents: [streamedRun] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'agents-sdk-streamed', input: null }))
    .body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.deepEqual(run.result, { text: 'hello stream', final: 'hello stream' });
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps as any[];
  assert.deepEqual(
    steps.map((s) => `${s.kind}:${s.name}`),
    ['model:mock'],
  );
});

const alwaysFails = defineModel({
  name: 'always-fails',
  provider: 'mock',
  maxAttempts: 1,
  options: { failureRate: 1 },
});

const failingModel = defineAgent({
  name: 'ai-sdk-failing-model',
  version: '1',
  async run(ctx) {
    try {
      await generateText({ model: keelAiSdk(ctx).model('always-fails'), prompt: 'hi' });
      return 'answered';
    } catch (error) {
      return { caught: (error as { code?: string }).code ?? String(error) };
    }
  },
});

test('AI SDK: a failed model call is journaled once and reaches generateText as the KeelError, not retried by the SDK', async (t) => {
  const keel = await startKeel({ agents: [failingModel], models: [alwaysFails] });
  t.after(() => keel.close());
  const id = (
    await keel.request('POST', '/v1/runs', { agent: 'ai-sdk-failing-model', input: null })
  ).body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.deepEqual(run.result, { caught: 'model_unavailable' });
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps as any[];
  assert.deepEqual(
    steps.map((s) => `${s.kind}:${s.name}:${s.status}`),
    ['model:always-fails:failed'],
  );
});
