// Sagas and retries over the HTTP API: completed executions of a failed or cancelled run are
// compensated in reverse order and the run's final state lists what was undone and what could not
// be; tool failures retry under the tool's policy (backoff, non-retryable errors) and stop when the
// run's retry budget is spent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/index.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

const Seat = z.object({ seat: z.string() });

function booking(log: string[], options: { failUndoOf?: string } = {}) {
  return defineTool({
    name: 'book',
    description: 'Books a seat',
    input: Seat,
    effect: 'side-effect',
    run: ({ seat }) => {
      log.push(`book ${seat}`);
      return { seat };
    },
    compensate: (executionId, result) => {
      if (result.seat === options.failUndoOf) throw new Error(`cannot release ${result.seat}`);
      log.push(`release ${result.seat} ${executionId}`);
    },
    retry: { maxAttempts: 2, initialDelayMs: 1 },
  });
}

test('saga on failure: completed executions are compensated in reverse order, and the run says so', async (t) => {
  const log: string[] = [];
  const book = booking(log);
  const note = defineTool({
    name: 'note',
    description: 'A read, nothing to undo',
    input: z.object({}),
    effect: 'read',
    run: () => 'ok',
  });
  const trip = defineAgent({
    name: 'trip',
    version: '1',
    async run(ctx) {
      await ctx.tool(book, { seat: 'flight' });
      await ctx.tool(note, {});
      await ctx.tool(book, { seat: 'hotel' });
      await ctx.step('pay', () => {
        throw new Error('card declined');
      });
    },
  });
  const keel = await startKeel({ agents: [trip] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'trip' })).body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'failed');
  assert.equal(run.error.code, 'step_failed');
  assert.deepEqual(
    run.compensation.compensated.map((c: any) => c.executionId),
    [`${id}.3`, `${id}.1`],
    'hotel first, then flight',
  );
  assert.deepEqual(run.compensation.failed, []);
  assert.deepEqual(log, [
    'book flight',
    'book hotel',
    `release hotel ${id}.3`,
    `release flight ${id}.1`,
  ]);
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps;
  const undo = steps.filter((s: any) => s.kind === 'compensation');
  assert.deepEqual(
    undo.map((s: any) => [s.executionId, s.status]),
    [
      [`${id}.3.compensation`, 'succeeded'],
      [`${id}.1.compensation`, 'succeeded'],
    ],
  );
  const events = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body;
  assert.equal(events.filter((e: any) => e.type === 'compensation.completed').length, 2);
  assert.deepEqual(events.at(-1).data.compensation, run.compensation);
});

test('saga: a compensation that keeps failing is retried under the tool policy, then reported as not compensated', async (t) => {
  const log: string[] = [];
  const book = booking(log, { failUndoOf: 'flight' });
  const trip = defineAgent({
    name: 'trip2',
    version: '1',
    async run(ctx) {
      await ctx.tool(book, { seat: 'flight' });
      await ctx.tool(book, { seat: 'hotel' });
      throw new Error('no more money');
    },
  });
  const keel = await startKeel({ agents: [trip] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'trip2' })).body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'failed');
  assert.deepEqual(run.compensation.compensated, [{ executionId: `${id}.2`, tool: 'book' }]);
  assert.equal(run.compensation.failed.length, 1);
  assert.equal(run.compensation.failed[0].executionId, `${id}.1`);
  assert.match(run.compensation.failed[0].error.message, /cannot release flight/);
  const undo = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps.find(
    (s: any) => s.executionId === `${id}.1.compensation`,
  );
  assert.equal(undo.status, 'failed');
  assert.equal(undo.attempts, 2, 'retried under the tool policy first');
});

test('saga on cancel: a cancelled run undoes what it completed; the outcome still says work happened', async (t) => {
  const log: string[] = [];
  const book = booking(log);
  const trip = defineAgent({
    name: 'trip3',
    version: '1',
    async run(ctx) {
      await ctx.tool(book, { seat: 'flight' });
      return ctx.waitForInput('confirm');
    },
  });
  const keel = await startKeel({ agents: [trip] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'trip3' })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  assert.equal((await keel.request('POST', `/v1/runs/${id}/cancel`)).status, 202);
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'cancelled');
  assert.equal(run.outcome, 'after_partial_work');
  assert.deepEqual(run.compensation, {
    compensated: [{ executionId: `${id}.1`, tool: 'book' }],
    failed: [],
    unknown: [],
  });
  assert.deepEqual(log, ['book flight', `release flight ${id}.1`]);
});

test('a succeeded run compensates nothing, and a failed run without compensable tools has no report', async (t) => {
  const log: string[] = [];
  const book = booking(log);
  const ok = defineAgent({
    name: 'ok',
    version: '1',
    run: async (ctx) => ctx.tool(book, { seat: 'a' }),
  });
  const bad = defineAgent({
    name: 'bad',
    version: '1',
    run: async (ctx) => {
      await ctx.step('x', () => 1);
      throw new Error('boom');
    },
  });
  const keel = await startKeel({ agents: [ok, bad] });
  t.after(() => keel.close());
  const a = await keel.waitForRun(
    (await keel.request('POST', '/v1/runs', { agent: 'ok' })).body.id,
    (r) => TERMINAL.has(r.status),
  );
  const b = await keel.waitForRun(
    (await keel.request('POST', '/v1/runs', { agent: 'bad' })).body.id,
    (r) => TERMINAL.has(r.status),
  );
  assert.equal(a.status, 'succeeded');
  assert.equal(a.compensation, null);
  assert.equal(b.status, 'failed');
  assert.equal(b.compensation, null);
  assert.deepEqual(log, ['book a']);
});

test('retries: a flaky tool succeeds on a later attempt, with retry events; a non-retryable error fails at once', async (t) => {
  const calls = new Map<string, number>();
  const count = (k: string) => calls.set(k, (calls.get(k) ?? 0) + 1).get(k)!;
  const flaky = defineTool({
    name: 'flaky',
    description: 'Fails twice',
    input: z.object({}),
    effect: 'idempotent',
    retry: { maxAttempts: 5, initialDelayMs: 5, maxDelayMs: 20 },
    run: () => {
      if (count('flaky') < 3) throw new Error('503 from downstream');
      return 'ok';
    },
  });
  const slow = defineTool({
    name: 'slow',
    description: 'Hangs past its timeout',
    input: z.object({}),
    effect: 'read',
    timeoutMs: 20,
    retry: { maxAttempts: 5, initialDelayMs: 1, nonRetryable: ['tool_timeout'] },
    run: () => {
      count('slow');
      return new Promise<string>(() => {});
    },
  });
  const typeErr = defineTool({
    name: 'typed',
    description: 'Throws a TypeError',
    input: z.object({}),
    effect: 'read',
    retry: { maxAttempts: 5, initialDelayMs: 1, nonRetryable: ['TypeError'] },
    run: () => {
      count('typed');
      throw new TypeError('bad argument');
    },
  });
  const agent = defineAgent({
    name: 'retrier',
    version: '1',
    async run(ctx) {
      const a = await ctx.tool(flaky, {});
      const b = await ctx.tool(typeErr, {}).catch((e: { code: string }) => e.code);
      const c = await ctx.tool(slow, {}).catch((e: { code: string }) => e.code);
      return { a, b, c };
    },
  });
  const keel = await startKeel({ agents: [agent] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'retrier' })).body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(run.result, { a: 'ok', b: 'tool_failed', c: 'tool_timeout' });
  assert.equal(calls.get('flaky'), 3);
  assert.equal(calls.get('typed'), 1, 'a TypeError is declared non-retryable (by error name)');
  assert.equal(calls.get('slow'), 1, 'tool_timeout is declared non-retryable (by error code)');
  const events = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body;
  const retrying = events.filter((e: any) => e.type === 'effect.retrying');
  assert.deepEqual(
    retrying.map((e: any) => e.data.attempt),
    [1, 2],
  );
  for (const e of retrying)
    assert.ok(
      e.data.delayMs >= 0 && e.data.delayMs <= 20,
      `full jitter within the cap: ${e.data.delayMs}`,
    );
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.equal(steps[0].attempts, 3);
});

test('retry budget: a run cannot retry more than budget.maxRetries times in all', async (t) => {
  let attempts = 0;
  const broken = defineTool({
    name: 'broken',
    description: 'Always fails',
    input: z.object({ n: z.number() }),
    effect: 'read',
    retry: { maxAttempts: 10, initialDelayMs: 1, maxDelayMs: 2 },
    run: () => {
      attempts++;
      throw new Error('still down');
    },
  });
  const agent = defineAgent({
    name: 'storm',
    version: '1',
    async run(ctx) {
      const codes: string[] = [];
      for (let n = 0; n < 3; n++)
        codes.push(
          await ctx.tool(broken, { n }).then(
            () => 'ok',
            (e: { code: string }) => e.code,
          ),
        );
      return codes;
    },
  });
  const keel = await startKeel({ agents: [agent] });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'storm', budget: { maxRetries: 4 } }))
    .body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  // Call 1: 1 + 4 retries (budget spent) → retry_budget_exhausted; calls 2 and 3: one attempt each,
  // no retry left.
  assert.deepEqual(run.result, [
    'retry_budget_exhausted',
    'retry_budget_exhausted',
    'retry_budget_exhausted',
  ]);
  assert.equal(attempts, 4 + 3, 'first attempts plus exactly the budgeted retries');
  const steps = (await keel.request('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.deepEqual(
    steps.map((s: any) => s.attempts),
    [5, 1, 1],
  );
  const bad = await keel.request('POST', '/v1/runs', {
    agent: 'storm',
    budget: { maxRetries: -1 },
  });
  assert.equal(bad.status, 400);
});

test('a side effect past its timeout with an attempt left is reconciled, never run again blindly: found → its result; no query hook → unknown', async (t) => {
  const ran: string[] = [];
  // Each call happens downstream, then hangs past the tool's timeout.
  const charge = (withQuery: boolean) =>
    defineTool({
      name: withQuery ? 'charge-q' : 'charge-nq',
      description: 'Charges, then hangs',
      input: z.object({}),
      effect: 'side-effect',
      timeoutMs: 200,
      retry: { maxAttempts: 3, initialDelayMs: 1 },
      run: (_args, ctx): Promise<{ charged: string }> => {
        ran.push(ctx.executionId);
        return new Promise(() => undefined);
      },
      ...(withQuery
        ? {
            query: (executionId: string) =>
              Promise.resolve(
                ran.includes(executionId)
                  ? { found: true as const, result: { charged: executionId } }
                  : { found: false as const },
              ),
          }
        : {}),
    });
  const agent = (withQuery: boolean) =>
    defineAgent({
      name: withQuery ? 'pays-q' : 'pays-nq',
      version: '1',
      run: (ctx) => ctx.tool(charge(withQuery), {}),
    });
  const keel = await startKeel({ agents: [agent(true), agent(false)] });
  t.after(() => keel.close());

  const found = (await keel.request('POST', '/v1/runs', { agent: 'pays-q' })).body.id;
  const done = await keel.waitForRun(found, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.deepEqual(done.result, { charged: `${found}.1` });
  assert.deepEqual(ran, [`${found}.1`], 'ran once: the timed-out attempt was found, not retried');
  const events = (await keel.request('GET', `/v1/runs/${found}/events?format=json`)).body as any[];
  assert.deepEqual(
    events.filter((e) => e.type === 'effect.reconciled').map((e) => [e.data.verdict, e.data.cause]),
    [['found', 'timeout']],
  );

  const parked = (await keel.request('POST', '/v1/runs', { agent: 'pays-nq' })).body.id;
  const waiting = await keel.waitForRun(
    parked,
    (r) => r.status === 'waiting' || TERMINAL.has(r.status),
  );
  assert.equal(waiting.waitingReason, 'unknown_side_effect', JSON.stringify(waiting));
  assert.equal(ran.filter((id) => id.startsWith(parked)).length, 1, 'not run a second time');
});
