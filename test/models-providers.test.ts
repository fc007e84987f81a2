// Done-when: an agent using an OpenAI-compatible model and an Anthropic model completes through
// real HTTP fake provider servers (driven by the official SDKs), with tool calls and streaming,
// over Keel's HTTP API; deltas reach SSE followers as ephemeral `model.delta` events while each
// final message commits once; keys never leak.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent, defineModel, defineTool } from '../src/sdk/define.ts';
import { defineLoopAgent } from '../src/sdk/loop-agent.ts';
import type { FakeBehaviour } from './support/fake-provider-core.ts';
import { startFakeAnthropic } from './support/fake-anthropic-server.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { TERMINAL, startKeel } from './support/keel-server.ts';
import { followEvents } from './support/sse-reader.ts';

const OPENAI_KEY = 'sk-fake-openai-key-0123456789';
const ANTHROPIC_KEY = 'sk-ant-fake-key-0123456789';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  effect: 'read',
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => ({ sum: a + b }),
});

/**
 * First turn: ask for the tool. Second turn (a tool result is present): answer with the sum,
 * streamed in pieces.
 */
function toolThenAnswer(resultOf: (body: any) => string | undefined): (body: any) => FakeBehaviour {
  return (body) => {
    const result = resultOf(body);
    if (result === undefined)
      return {
        kind: 'reply',
        text: 'Let me add.',
        toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }],
      };
    return {
      kind: 'reply',
      text: `The sum is ${JSON.parse(result).sum}, computed with care.`,
      chunkChars: 5,
    };
  };
}

function agentsFor(model: string) {
  const loop = defineLoopAgent({
    name: `loop-${model}`,
    version: '1',
    model,
    system: 'You add numbers.',
    tools: [add],
    maxSteps: 4,
  });
  // Waits for 'go' first, so the test's SSE follower is connected before any token streams.
  return defineAgent({
    name: `adder-${model}`,
    version: '1',
    async run(ctx, input: string) {
      await ctx.waitForInput('go');
      return loop.run(ctx, input);
    },
  });
}

for (const kind of ['openai', 'anthropic'] as const) {
  test(`an agent on the ${kind} provider completes with a tool call and streaming over the HTTP API`, async (t) => {
    const fake =
      kind === 'openai'
        ? await startFakeOpenAi(
            toolThenAnswer((body) => body.messages.find((m: any) => m.role === 'tool')?.content),
          )
        : await startFakeAnthropic(
            toolThenAnswer((body) => {
              const block = body.messages
                .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
                .find((b: any) => b.type === 'tool_result');
              return block?.content;
            }),
          );
    t.after(() => fake.close());
    const model = defineModel({
      name: kind,
      provider: kind,
      providerModel: `${kind}-test-model`,
      version: '2026-01',
      baseUrl: kind === 'openai' ? `${fake.url}/v1` : fake.url,
      apiKeyEnv: kind === 'openai' ? 'FAKE_OPENAI_KEY' : 'FAKE_ANTHROPIC_KEY',
      price: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 1 },
    });
    const gateway = new ModelGateway([model], {
      secret: (name) =>
        name === 'FAKE_OPENAI_KEY'
          ? OPENAI_KEY
          : name === 'FAKE_ANTHROPIC_KEY'
            ? ANTHROPIC_KEY
            : undefined,
    });
    const keel = await startKeel({ agents: [agentsFor(kind)], gateway });
    t.after(() => keel.close());

    const created = await keel.request('POST', '/v1/runs', {
      agent: `adder-${kind}`,
      input: 'What is 2 + 3?',
    });
    assert.equal(created.status, 201);
    const id = created.body.id;
    await keel.waitForRun(id, (r) => r.status === 'waiting');
    const follower = followEvents(keel.url, id, keel.apiKey);
    t.after(() => follower.close());
    await follower.connected;
    assert.equal(
      (await keel.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: true })).status,
      202,
    );
    const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
    await follower.done;

    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.deepEqual(run.result, { text: 'The sum is 5, computed with care.', steps: 2 });
    // Two model calls, each committed once; tokens and cost on the run's counters.
    const completed = follower.events.filter(
      (e) => e.event === 'effect.completed' && e.data.data.kind === 'model',
    );
    assert.equal(completed.length, 2);
    assert.ok(
      completed.every((e) => e.id !== undefined && e.data.data.model === `${kind}@2026-01`),
    );
    assert.ok(
      run.counters.inputTokens > 0 && run.counters.outputTokens > 0 && run.counters.costUsd > 0,
    );
    // Streaming: the second answer arrived as ephemeral deltas (no `id:`) that add up to the
    // committed text.
    const deltas = follower.events.filter((e) => e.event === 'model.delta');
    assert.ok(deltas.length >= 5, `expected streamed deltas, got ${deltas.length}`);
    assert.ok(deltas.every((e) => e.id === undefined && e.data.attempt === 1));
    const secondSeq = completed[1]!.data.data.seq;
    assert.equal(
      deltas
        .filter((e) => e.data.seq === secondSeq)
        .map((e) => e.data.text)
        .join(''),
      'The sum is 5, computed with care.',
    );
    // The provider saw the tool result, the key in its own header, and a streamed request.
    assert.equal(fake.requests.length, 2);
    assert.ok(fake.requests.every((r) => r.body.stream === true));
    assert.equal(fake.requests[0]!.body.model, `${kind}-test-model`);
    if (kind === 'openai')
      assert.equal(fake.requests[0]!.headers.authorization, `Bearer ${OPENAI_KEY}`);
    // This SDK version sends the key as a bearer token; older ones used x-api-key.
    else
      assert.ok(
        [fake.requests[0]!.headers['x-api-key'], fake.requests[0]!.headers.authorization].some(
          (v) => v === ANTHROPIC_KEY || v === `Bearer ${ANTHROPIC_KEY}`,
        ),
      );
    // Keys never reach events or the journal.
    const steps = await keel.request('GET', `/v1/runs/${id}/steps`);
    for (const text of [follower.raw(), JSON.stringify(steps.body), JSON.stringify(run)]) {
      assert.ok(!text.includes(OPENAI_KEY) && !text.includes(ANTHROPIC_KEY));
    }
  });
}

test('one agent uses both providers in one run: Anthropic asks for a tool, OpenAI writes the answer, both streamed', async (t) => {
  const anthropic = await startFakeAnthropic(() => ({
    kind: 'reply',
    text: 'I will add them.',
    toolCalls: [{ name: 'add', args: { a: 40, b: 2 } }],
  }));
  const openai = await startFakeOpenAi((body) => ({
    kind: 'reply',
    text: `Final: ${body.messages.at(-1).content}`,
  }));
  t.after(() => anthropic.close());
  t.after(() => openai.close());
  const models = [
    defineModel({
      name: 'claude',
      provider: 'anthropic',
      baseUrl: anthropic.url,
      apiKeyEnv: 'FAKE_ANTHROPIC_KEY',
    }),
    defineModel({
      name: 'gpt',
      provider: 'openai',
      baseUrl: `${openai.url}/v1`,
      apiKeyEnv: 'FAKE_OPENAI_KEY',
    }),
  ];
  const both = defineAgent({
    name: 'both',
    version: '1',
    async run(ctx, input: string) {
      const plan = await ctx.model({
        model: 'claude',
        messages: [{ role: 'user', content: input }],
        tools: [add],
      });
      const call = plan.toolCalls[0]!;
      const sum = await ctx.tool(add, call.args as { a: number; b: number });
      const answer = await ctx.model({
        model: 'gpt',
        messages: [{ role: 'user', content: `the sum is ${sum.sum}` }],
      });
      return { planner: plan.model, writer: answer.model, text: answer.text };
    },
  });
  const gateway = new ModelGateway(models, {
    secret: (name) => (name === 'FAKE_OPENAI_KEY' ? OPENAI_KEY : ANTHROPIC_KEY),
  });
  const keel = await startKeel({ agents: [both], gateway });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'both', input: 'add 40 and 2' })).body
    .id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.deepEqual(run.result, {
    planner: 'claude@1',
    writer: 'gpt@1',
    text: 'Final: the sum is 42',
  });
  assert.equal(anthropic.requests[0]!.body.tools[0].name, 'add');
  assert.equal(anthropic.requests[0]!.body.stream, true);
  assert.equal(openai.requests[0]!.body.stream, true);
  assert.equal(run.counters.steps, 3);
  // Per-tenant accounting: the tenant's usage is the sum of its runs' committed counters.
  const usage = await keel.request('GET', '/v1/usage');
  assert.equal(usage.status, 200);
  assert.deepEqual(
    {
      runs: usage.body.runs,
      inputTokens: usage.body.inputTokens,
      outputTokens: usage.body.outputTokens,
    },
    { runs: 1, inputTokens: run.counters.inputTokens, outputTokens: run.counters.outputTokens },
  );
  assert.ok(usage.body.inputTokens > 0);
});
