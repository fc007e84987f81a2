// Control over runs through the HTTP API: cancellation (queued, waiting, mid-step, after side
// effects), inputs (early, late, timed out), durable timers that release the worker, budgets with
// typed reasons, and child runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineAgent, defineModel, defineTool } from '../src/index.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

test('cancel: a waiting run ends cancelled with no side effects', async (t) => {
  const waiter = defineAgent({
    name: 'waiter',
    version: '1',
    async run(ctx) {
      return ctx.waitForInput('never');
    },
  });
  const keel = await startKeel({ agents: [waiter] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'waiter' })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  const res = await keel.request('POST', `/v1/runs/${id}/cancel`);
  assert.equal(res.status, 202);
  assert.equal(res.body.status, 'cancelling', 'cancelling is persisted first');
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'cancelled');
  assert.equal(done.outcome, 'no_side_effects');
  assert.equal(
    (await keel.request('POST', `/v1/runs/${id}/cancel`)).body.error.code,
    'run_terminal',
  );
  const types = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body.map(
    (e: any) => e.type,
  );
  assert.ok(types.includes('run.cancelling') && types.at(-1) === 'run.cancelled');
});

test('cancel: a run mid-step is stopped, the finished step is recorded, and the outcome says work happened', async (t) => {
  const g = gate();
  const slow = defineAgent({
    name: 'slow',
    version: '1',
    async run(ctx) {
      await ctx.step('long', async () => {
        await g.opened;
        return 'done';
      });
      await ctx.step('never', () => 'x');
      return 'finished';
    },
  });
  const keel = await startKeel({ agents: [slow] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'slow' })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'running');
  assert.equal((await keel.request('POST', `/v1/runs/${id}/cancel`)).status, 202);
  g.open();
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'cancelled');
  assert.equal(done.outcome, 'after_partial_work');
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.deepEqual(
    steps.map((s: any) => `${s.name}:${s.status}`),
    ['long:succeeded'],
    'no new effect was dispatched after the cancel',
  );
});

test('cancel: a queued run never starts', async (t) => {
  const ran: string[] = [];
  const quick = defineAgent({
    name: 'quick',
    version: '1',
    async run(ctx) {
      return ctx.step('s', () => {
        ran.push('s');
        return 1;
      });
    },
  });
  const keel = await startKeel({ agents: [quick], orchestrator: { maxActiveRuns: 1 } });
  t.after(() => keel.close());
  await keel.orchestrator.stop(); // nothing claims: the run stays queued
  const id = (await keel.request('POST', '/v1/runs', { agent: 'quick' })).body.id;
  await keel.request('POST', `/v1/runs/${id}/cancel`);
  keel.orchestrator.start();
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'cancelled');
  assert.equal(done.outcome, 'no_side_effects');
  assert.deepEqual(ran, []);
});

test('input: a value posted before the wait is used; a wait with a timeout throws input_timeout', async (t) => {
  const g = gate();
  const early = defineAgent({
    name: 'early',
    version: '1',
    async run(ctx) {
      await ctx.step('hold', async () => {
        await g.opened;
        return 1;
      });
      const v = await ctx.waitForInput<number>('x');
      const late = await ctx
        .waitForInput('y', { timeoutMs: 150 })
        .catch((e: { code: string }) => e.code);
      return { v, late };
    },
  });
  const keel = await startKeel({ agents: [early] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'early' })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'running');
  assert.equal(
    (await keel.request('POST', `/v1/runs/${id}/input`, { key: 'x', value: 7 })).status,
    202,
  );
  assert.equal(
    (await keel.request('POST', `/v1/runs/${id}/input`, { key: 'x', value: 8 })).body.error.code,
    'input_already_provided',
  );
  g.open();
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(done.result, { v: 7, late: 'input_timeout' });
});

test('timers: ctx.sleep parks the run (no memory held) and resumes when due', async (t) => {
  const sleeper = defineAgent({
    name: 'sleeper',
    version: '1',
    async run(ctx) {
      const t0 = ctx.now();
      await ctx.sleep(300);
      return { elapsedAtLeast: ctx.now() - t0 >= 300 };
    },
  });
  const keel = await startKeel({ agents: [sleeper] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'sleeper' })).body.id;
  const waiting = await keel.waitForRun(id, (r) => r.status === 'waiting');
  assert.equal(waiting.waitingReason, 'timer');
  assert.ok(waiting.wakeAt !== null);
  assert.equal(keel.orchestrator.activeRuns, 0);
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(done.result, { elapsedAtLeast: true });
});

test('budgets: maxSteps, maxTokens, maxCostUsd and deadlineMs each end the run with a typed reason', async (t) => {
  const looper = defineAgent({
    name: 'looper',
    version: '1',
    async run(ctx, input: { model?: string; sleep?: number }) {
      if (input.sleep !== undefined) await ctx.sleep(input.sleep);
      for (let i = 0; i < 100; i++) {
        if (input.model !== undefined)
          await ctx.model({
            model: input.model,
            messages: [{ role: 'user', content: 'a fairly long message to spend tokens on' }],
          });
        else await ctx.step(`s${i}`, () => i);
      }
      return 'never';
    },
  });
  const priced = defineModel({
    name: 'priced',
    provider: 'mock',
    price: { inputPerMTok: 1_000, outputPerMTok: 1_000 },
  });
  const keel = await startKeel({ agents: [looper], models: [priced] });
  t.after(() => keel.close());
  const cases: Array<[unknown, object, string]> = [
    [{}, { maxSteps: 3 }, 'maxSteps'],
    [{ model: 'mock' }, { maxTokens: 50 }, 'maxTokens'],
    [{ model: 'priced' }, { maxCostUsd: 0.05 }, 'maxCostUsd'],
    [{ sleep: 5_000 }, { deadlineMs: 200 }, 'deadlineMs'],
  ];
  for (const [input, budget, reason] of cases) {
    const id = (await keel.request('POST', '/v1/runs', { agent: 'looper', input, budget })).body.id;
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
    assert.equal(done.status, 'failed', reason);
    assert.equal(done.error.code, 'budget_exceeded', reason);
    assert.equal(done.error.details.budget, reason);
    if (reason === 'maxSteps') assert.equal(done.counters.steps, 3);
  }
});

test('child runs: the parent waits without holding a worker and gets the result or a child_failed error', async (t) => {
  const kid = defineAgent({
    name: 'kid',
    version: '1',
    async run(ctx, input: { fail: boolean }) {
      await ctx.sleep(50);
      if (input.fail) throw new Error('kid broke');
      return 'kid ok';
    },
  });
  const parent = defineAgent({
    name: 'parent',
    version: '1',
    async run(ctx) {
      const ok = await ctx.child<string>('kid', { fail: false });
      const bad = await ctx.child('kid', { fail: true }).catch((e: { code: string }) => e.code);
      return { ok, bad };
    },
  });
  const keel = await startKeel({ agents: [kid, parent] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'parent' })).body.id;
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(done.result, { ok: 'kid ok', bad: 'child_failed' });
  const children = (await keel.request('GET', '/v1/runs?agent=kid')).body.runs;
  assert.equal(children.length, 2);
  assert.ok(children.every((c: any) => c.parentRunId === id));
});

test('side-effect tools: intent is journaled before the call; a tool error is typed and journaled once', async (t) => {
  let calls = 0;
  const pay = defineTool({
    name: 'pay',
    description: 'pays',
    input: z.object({ cents: z.number().int() }),
    effect: 'side-effect',
    run: ({ cents }, toolCtx) => {
      calls++;
      if (cents < 0) throw new Error('negative');
      return { paid: cents, executionId: toolCtx.executionId };
    },
  });
  const buyer = defineAgent({
    name: 'buyer',
    version: '1',
    async run(ctx) {
      const ok = await ctx.tool(pay, { cents: 5 });
      const bad = await ctx.tool(pay, { cents: -1 }).catch((e: { code: string }) => e.code);
      const invalid = await ctx.tool(pay, { cents: 1.5 }).catch((e: { code: string }) => e.code);
      return { ok, bad, invalid };
    },
  });
  const keel = await startKeel({ agents: [buyer] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'buyer' })).body.id;
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.result.ok.paid, 5);
  assert.equal(done.result.ok.executionId, `${id}.1`);
  assert.equal(done.result.bad, 'tool_failed');
  assert.equal(done.result.invalid, 'tool_input_invalid');
  assert.equal(calls, 2);
  const events = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body.map(
    (e: any) => e.type,
  );
  assert.equal(
    events.filter((e: string) => e === 'effect.started').length,
    2,
    'each side effect journaled its intent first',
  );
});

test('leases: a run working longer than its lease TTL keeps its lease through heartbeats and runs once', async (t) => {
  let executions = 0;
  const long = defineAgent({
    name: 'long',
    version: '1',
    async run(ctx) {
      return ctx.step('long', async () => {
        executions++;
        await new Promise((r) => setTimeout(r, 2_000));
        return 'ok';
      });
    },
  });
  const keel = await startKeel({ agents: [long], orchestrator: { leaseTtlMs: 600 } });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'long' })).body.id;
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded');
  assert.equal(executions, 1);
  assert.equal(done.attempts, 1, 'claimed once: the lease never expired');
});

test('cancel propagates to child runs', async (t) => {
  const stuck = defineAgent({
    name: 'stuck',
    version: '1',
    async run(ctx) {
      return ctx.waitForInput('never');
    },
  });
  const boss = defineAgent({
    name: 'boss',
    version: '1',
    async run(ctx) {
      const [a, b] = await Promise.all([ctx.child('stuck', {}), ctx.child('stuck', {})]);
      return { a, b };
    },
  });
  const keel = await startKeel({ agents: [stuck, boss] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'boss' })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting' && r.waitingReason === 'child');
  let children: any[] = [];
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
    children = (await keel.request('GET', '/v1/runs?agent=stuck')).body.runs;
    if (children.length === 2 && children.every((c) => c.status === 'waiting')) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  await keel.request('POST', `/v1/runs/${id}/cancel`);
  assert.equal((await keel.waitForRun(id, (r) => TERMINAL.has(r.status))).status, 'cancelled');
  for (const child of children) {
    const done = await keel.waitForRun(child.id, (r) => TERMINAL.has(r.status));
    assert.equal(done.status, 'cancelled');
    assert.equal(done.outcome, 'no_side_effects');
  }
});

test('versions are pinned: a run keeps the agent version it started with', async (t) => {
  const v1 = defineAgent({
    name: 'versioned',
    version: '1',
    async run(ctx) {
      await ctx.waitForInput('go');
      return 'v1';
    },
  });
  const v2 = defineAgent({
    name: 'versioned',
    version: '2',
    async run(ctx) {
      await ctx.waitForInput('go');
      return 'v2';
    },
  });
  const keel = await startKeel({ agents: [v1, v2] });
  t.after(() => keel.close());
  const latest = (await keel.request('POST', '/v1/runs', { agent: 'versioned' })).body;
  const pinned = (await keel.request('POST', '/v1/runs', { agent: 'versioned@1' })).body;
  assert.equal(latest.agentVersion, '2');
  assert.equal(pinned.agentVersion, '1');
  assert.equal(
    (await keel.request('POST', '/v1/runs', { agent: 'versioned@3' })).body.error.code,
    'agent_not_found',
  );
  for (const run of [latest, pinned]) {
    await keel.waitForRun(run.id, (r) => r.status === 'waiting');
    await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'go', value: 1 });
  }
  assert.equal((await keel.waitForRun(latest.id, (r) => TERMINAL.has(r.status))).result, 'v2');
  assert.equal(
    (await keel.waitForRun(pinned.id, (r) => TERMINAL.has(r.status))).result,
    'v1',
    'replayed with the version it started with',
  );
});

test('a run pinned to a version nobody serves stays queued and says why', async (t) => {
  const old = defineAgent({
    name: 'evolving',
    version: '1',
    async run() {
      return 'old';
    },
  });
  const next = defineAgent({
    name: 'evolving',
    version: '2',
    async run() {
      return 'new';
    },
  });
  const first = await startKeel({ agents: [old] });
  await first.orchestrator.stop();
  const id = (await first.request('POST', '/v1/runs', { agent: 'evolving' })).body.id;
  await first.stop();
  const second = await startKeel({ agents: [next], dir: first.dir });
  t.after(async () => {
    await second.close();
    await first.close();
  });
  // Asserting that something does not happen needs a bounded wait: several claim polls (50 ms
  // apart) go by.
  await new Promise((r) => setTimeout(r, 300));
  const run = (await second.request('GET', `/v1/runs/${id}`)).body;
  assert.equal(run.status, 'queued', 'not claimed by a worker serving only version 2');
  assert.equal(run.agentVersion, '1');
  assert.equal(run.waitingReason, 'agent_version_unavailable');
});
