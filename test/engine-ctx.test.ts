// Every ctx method through the real engine and HTTP API: results, replay after parking (completed
// effects are not re-executed; now/random/uuid are stable), SSE resume from any Last-Event-ID
// without gaps or duplicates.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineAgent, defineModel, defineTool, defineLoopAgent } from '../src/index.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

const executions = new Map<string, number>();
const bump = (key: string) => executions.set(key, (executions.get(key) ?? 0) + 1);

const add = defineTool({
  name: 'add',
  description: 'Adds',
  input: z.object({ a: z.number(), b: z.number() }),
  effect: 'read',
  run: ({ a, b }) => {
    bump(`add ${a}+${b}`);
    return { sum: a + b };
  },
});

const helper = defineAgent({
  name: 'helper',
  version: '1',
  async run(ctx, input: { n: number }) {
    return ctx.step('double', () => input.n * 2);
  },
});

const everything = defineAgent({
  name: 'everything',
  version: '1',
  async run(ctx, input: { tag: string }) {
    const greeting = await ctx.step('greet', () => {
      bump(`greet ${input.tag}`);
      return `hello ${input.tag}`;
    });
    const reply = await ctx.model({
      model: 'mock',
      messages: [{ role: 'user', content: greeting }],
    });
    const [x, y] = await Promise.all([
      ctx.tool(add, { a: 2, b: 3 }),
      ctx.tool(add, { a: 10, b: 20 }),
    ]);
    const t0 = ctx.now();
    const r = ctx.random();
    const id = ctx.uuid();
    const before = await ctx.step('capture', () => ({ t0, r, id }));
    const answer = await ctx.waitForInput<string>('approve', { timeoutMs: 60_000 });
    await ctx.sleep(50);
    const doubled = await ctx.child<number>('helper', { n: 21 });
    return {
      greeting,
      text: reply.text,
      sums: [x.sum, y.sum],
      answer,
      doubled,
      stable: before.t0 === t0 && before.r === r && before.id === id,
      id,
    };
  },
});

test('an agent using every ctx method completes over HTTP, and replay re-executes nothing', async (t) => {
  const keel = await startKeel({ agents: [everything, helper] });
  t.after(() => keel.close());
  const created = await keel.request('POST', '/v1/runs', {
    agent: 'everything',
    input: { tag: 'ann' },
  });
  assert.equal(created.status, 201);
  const id = created.body.id;
  const waiting = await keel.waitForRun(id, (r) => r.status === 'waiting');
  assert.equal(waiting.waitingReason, 'input');
  assert.equal(
    keel.orchestrator.activeRuns,
    0,
    'a run waiting for a human holds no memory in the orchestrator',
  );
  assert.equal(
    (await keel.request('POST', `/v1/runs/${id}/input`, { key: 'approve', value: 'yes' })).status,
    202,
  );
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.deepEqual(
    { ...done.result, id: undefined },
    {
      greeting: 'hello ann',
      text: 'hello ann',
      sums: [5, 30],
      answer: 'yes',
      doubled: 42,
      stable: true,
      id: undefined,
    },
  );
  assert.match(done.result.id, /^[0-9a-f-]{36}$/);
  assert.equal(
    executions.get('greet ann'),
    1,
    'the step ran once although the run was replayed after each wait',
  );
  assert.equal(executions.get('add 2+3'), 1);
  assert.equal(
    done.counters.steps,
    5,
    'greet, model, two tools, capture: the counted effects of this run (the child counts its own)',
  );

  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.deepEqual(
    steps.map((s: any) => s.kind),
    ['step', 'model', 'tool', 'tool', 'now', 'step', 'input', 'sleep', 'child'],
  );
  assert.ok(steps.every((s: any) => s.status === 'succeeded'));
  assert.ok(
    steps
      .filter((s: any) => s.kind === 'tool')
      .every((s: any) => s.executionId && s.effectClass === 'read'),
  );
  const model = steps.find((s: any) => s.kind === 'model');
  assert.ok(
    model.queuedAt <= model.startedAt && model.startedAt <= model.endedAt,
    'a model call shows when it got a slot',
  );
});

test('SSE resumes from any Last-Event-ID without gaps or duplicates, and ends after the terminal event', async (t) => {
  const keel = await startKeel({ agents: [everything, helper] });
  t.after(() => keel.close());
  const id = (
    await keel.request('POST', '/v1/runs', { agent: 'everything', input: { tag: 'sse' } })
  ).body.id;
  // Start a live stream before the run finishes; it must deliver every event and then end by
  // itself.
  const live = fetch(`${keel.url}/v1/runs/${id}/events`, {
    headers: { authorization: `Bearer ${keel.apiKey}`, accept: 'text/event-stream' },
  }).then((r) => r.text());
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  await keel.request('POST', `/v1/runs/${id}/input`, { key: 'approve', value: 'ok' });
  await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  const all = (await keel.request('GET', `/v1/runs/${id}/events?format=json&after=0`))
    .body as Array<{ seq: number; type: string }>;
  const n = all.length;
  assert.deepEqual(
    all.map((e) => e.seq),
    Array.from({ length: n }, (_, i) => i + 1),
  );
  assert.equal(all.at(-1)!.type, 'run.succeeded');
  const liveIds = [...(await live).matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  assert.deepEqual(
    liveIds,
    all.map((e) => e.seq),
    'the live stream saw every event once, in order',
  );
  for (let k = 0; k <= n; k++) {
    const res = await fetch(`${keel.url}/v1/runs/${id}/events`, {
      headers: { authorization: `Bearer ${keel.apiKey}`, 'last-event-id': String(k) },
    });
    const ids = [...(await res.text()).matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    assert.deepEqual(
      ids,
      all.slice(k).map((e) => e.seq),
      `resume after ${k}`,
    );
    const viaQuery = (
      await keel.request('GET', `/v1/runs/${id}/events?format=json&after=${k}`)
    ).body.map((e: any) => e.seq);
    assert.deepEqual(
      viaQuery,
      all.slice(k).map((e) => e.seq),
    );
  }
});

test('the loop agent calls tools through a scripted mock model and answers', async (t) => {
  const scripted = defineModel({
    name: 'scripted',
    provider: 'mock',
    options: {
      script: [
        {
          toolCalls: [
            { name: 'add', args: { a: 1, b: 2 } },
            { name: 'add', args: { a: 3, b: 4 } },
          ],
        },
        { text: 'done' },
      ],
    },
  });
  const loop = defineLoopAgent({
    name: 'loop',
    version: '1',
    model: 'scripted',
    system: 'add things',
    tools: [add],
    maxSteps: 4,
  });
  const keel = await startKeel({ agents: [loop], models: [scripted] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'loop', input: 'please add' })).body
    .id;
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.result.text, 'done');
  const kinds = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps.map(
    (s: any) => `${s.kind}:${s.name}`,
  );
  assert.deepEqual(kinds, ['model:scripted', 'tool:add', 'tool:add', 'model:scripted']);
});

test('replay that diverges from the journal fails the run with non_determinism naming the position', async (t) => {
  let flip = false;
  const fickle = defineAgent({
    name: 'fickle',
    version: '1',
    async run(ctx) {
      await ctx.step('first', () => 1);
      if (flip) await ctx.step('other', () => 2); // on replay the code asks for a different effect at position 2
      await ctx.waitForInput('go');
      return 'ok';
    },
  });
  const keel = await startKeel({ agents: [fickle] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'fickle', input: null })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  flip = true;
  // position 2 is the input wait in the journal; the replayed code now asks for step "other" there
  await keel.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: 1 });
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'failed');
  assert.equal(done.error.code, 'non_determinism');
  assert.match(done.error.message, /position 2/);
  assert.match(done.error.message, /input "go"/);
  assert.match(done.error.message, /step "other"/);
});

test('a failing step is journaled: the agent can catch it, and it is not retried on replay', async (t) => {
  let calls = 0;
  const flaky = defineAgent({
    name: 'flaky',
    version: '1',
    async run(ctx) {
      const caught = await ctx
        .step('boom', () => {
          calls++;
          throw new Error('nope');
        })
        .catch((e: { code: string; message: string }) => `${e.code}: ${e.message}`);
      await ctx.waitForInput('go');
      return caught;
    },
  });
  const keel = await startKeel({ agents: [flaky] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'flaky' })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  await keel.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: 1 });
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.result, 'step_failed: nope');
  assert.equal(calls, 1);
});
