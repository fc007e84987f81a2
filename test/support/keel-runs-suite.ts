// The contract of the KeelRuns interface (src/client/keel-runs.ts), written once and run against
// every transport: HTTP (test/client-http.test.ts) and keel/embedded (test/embedded-runs.test.ts).
// A factory starts a Keel serving the suite's agents and hands back its KeelRuns; capabilities a
// transport lacks (a connection to cut, keys to refuse) are optional and their tests skip.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { defineAgent } from '../../src/index.ts';
import type { AgentDefinition } from '../../src/sdk/types.ts';
import {
  KeelApiError,
  KeelWaitTimeoutError,
  type KeelRuns,
  type RunEvent,
} from '../../src/client/index.ts';
import { ERROR_CODES } from '../../src/domain/error-codes.ts';

export interface RunsHarness {
  runs: KeelRuns;
  /** Cuts the event streams open now, as a dropped connection would; returns how many. */
  cutEventStreams?(): number;
  /** Last-Event-ID of each event stream request so far (undefined: none sent). */
  resumedFrom?(): Array<string | undefined>;
  /** The same Keel through a key it does not know (401). */
  unknownKey?: KeelRuns;
  /** The same Keel through a key with the read scope only (403 on writes). */
  readOnly?: KeelRuns;
  close(): Promise<void>;
}

export type RunsHarnessFactory = (agents: AgentDefinition[]) => Promise<RunsHarness>;

const echo = defineAgent({
  name: 'echo',
  version: '1',
  async run(_ctx, input: unknown) {
    return { echo: (input ?? null) as never };
  },
});
const asker = defineAgent({
  name: 'asker',
  version: '1',
  async run(ctx) {
    const answer = await ctx.waitForInput<string>('answer');
    return { answer };
  },
});
/** Steps before and after a wait: a stream with events on both sides of a cut. */
const stepper = defineAgent({
  name: 'stepper',
  version: '1',
  async run(ctx) {
    for (let i = 0; i < 5; i += 1) await ctx.step(`before-${i}`, async () => i);
    const go = await ctx.waitForInput<string>('go');
    for (let i = 0; i < 5; i += 1) await ctx.step(`after-${i}`, async () => i);
    return { go };
  },
});
export const SUITE_AGENTS: AgentDefinition[] = [echo, asker, stepper] as AgentDefinition[];

/** Polls `check` until it holds or the deadline passes (a condition, never a sleep). */
async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function rejectsWithCode(
  promise: Promise<unknown>,
  status: number,
  code: keyof typeof ERROR_CODES,
): Promise<KeelApiError> {
  const error = await promise.then(
    () => assert.fail(`expected ${code}, got a success`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof KeelApiError, `expected KeelApiError, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  assert.equal(error.status, status);
  assert.equal(ERROR_CODES[code].status, status, `the registry's status of ${code}`);
  return error;
}

/**
 * Registers the KeelRuns contract tests under `name`, each on a fresh Keel from `factory`.
 *
 * @example
 * keelRunsSuite('http', async (agents) => httpHarness(agents));
 */
export function keelRunsSuite(name: string, factory: RunsHarnessFactory): void {
  async function start(t: TestContext): Promise<RunsHarness> {
    const harness = await factory(SUITE_AGENTS);
    t.after(() => harness.close());
    return harness;
  }

  test(`${name}: create is idempotent by key; get and list with filters and a cursor`, async (t) => {
    const { runs } = await start(t);
    const first = await runs.create({ agent: 'echo', input: { n: 1 }, idempotencyKey: 'k-1' });
    const again = await runs.create({ agent: 'echo', input: { n: 1 }, idempotencyKey: 'k-1' });
    assert.equal(again.id, first.id);
    await rejectsWithCode(
      runs.create({ agent: 'echo', input: { n: 2 }, idempotencyKey: 'k-1' }),
      409,
      'idempotency_conflict',
    );
    const ids = [first.id];
    for (let n = 2; n <= 5; n += 1)
      ids.push((await runs.create({ agent: 'echo', input: { n } })).id);
    const asked = await runs.create({ agent: 'asker' });
    assert.equal((await runs.get(first.id)).agent, 'echo');

    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await runs.list({ agent: 'echo', limit: 2, ...(cursor ? { cursor } : {}) });
      assert.ok(page.runs.length <= 2);
      paged.push(...page.runs.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    assert.deepEqual(new Set(paged), new Set(ids), 'the pages hold every echo run once');
    assert.equal(paged.length, ids.length);
    const all: string[] = [];
    for await (const run of runs.listAll({ agent: 'echo', limit: 2 })) all.push(run.id);
    assert.deepEqual(all, paged);
    await until('the asker to wait', async () => (await runs.get(asked.id)).status === 'waiting');
    const waiting = await runs.list({ status: 'waiting' });
    assert.deepEqual(
      waiting.runs.map((r) => r.id),
      [asked.id],
    );
  });

  test(`${name}: result waits for a run that ends during the wait`, async (t) => {
    const { runs } = await start(t);
    const run = await runs.create({ agent: 'asker' });
    await until('the run to wait', async () => (await runs.get(run.id)).status === 'waiting');
    const waitMs = 50_000;
    const startedAt = Date.now();
    const pending = runs.result(run.id, { waitMs });
    await runs.sendInput(run.id, 'answer', 'yes');
    const outcome = await pending;
    assert.equal(outcome.done, true);
    assert.equal(outcome.run.status, 'succeeded');
    assert.deepEqual(outcome.run.result, { answer: 'yes' });
    // Answered when the run ended, not when the wait ran out (a bound, not a speed measurement).
    assert.ok(Date.now() - startedAt < waitMs, 'the long-poll answered before its wait ran out');
    const waited = await runs.wait(run.id);
    assert.equal(waited.status, 'succeeded');
  });

  test(`${name}: result answers with the current state when the wait runs out`, async (t) => {
    const { runs } = await start(t);
    const run = await runs.create({ agent: 'asker' });
    await until('the run to wait', async () => (await runs.get(run.id)).status === 'waiting');
    const outcome = await runs.result(run.id, { waitMs: 300 });
    assert.equal(outcome.done, false);
    assert.equal(outcome.run.status, 'waiting');
    assert.equal(outcome.run.id, run.id);
    const timedOut = await runs.wait(run.id, { timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(timedOut instanceof KeelWaitTimeoutError, String(timedOut));
    assert.equal(timedOut.runId, run.id);
  });

  test(`${name}: createAndWait answers short runs with their result, long ones in progress`, async (t) => {
    const { runs } = await start(t);
    const quick = await runs.createAndWait({ agent: 'echo', input: 'hi' }, { waitMs: 30_000 });
    assert.equal(quick.done, true);
    assert.equal(quick.run.status, 'succeeded');
    assert.deepEqual(quick.run.result, { echo: 'hi' });
    const slow = await runs.createAndWait({ agent: 'asker' }, { waitMs: 300 });
    assert.equal(slow.done, false);
    assert.ok(!['succeeded', 'failed', 'cancelled'].includes(slow.run.status));
    const cancelled = await runs.cancel(slow.run.id);
    assert.equal(cancelled.id, slow.run.id);
    assert.equal((await runs.wait(slow.run.id)).status, 'cancelled');
  });

  test(`${name}: events iterate to the terminal event; steps and attempts read the journal`, async (t) => {
    const { runs } = await start(t);
    const run = await runs.create({ agent: 'stepper' });
    await until('the run to wait', async () => (await runs.get(run.id)).status === 'waiting');
    await runs.sendInput(run.id, 'go', 'now');
    const seen: RunEvent[] = [];
    for await (const event of runs.events(run.id)) seen.push(event);
    assert.equal(seen.at(-1)?.type, 'run.succeeded');
    const stored = await runs.listEvents(run.id);
    assert.deepEqual(
      seen.map((e) => e.seq),
      stored.map((e) => e.seq),
    );
    const tail: number[] = [];
    for await (const event of runs.events(run.id, { after: stored[2]!.seq })) tail.push(event.seq);
    assert.deepEqual(
      tail,
      stored.slice(3).map((e) => e.seq),
    );
    const steps = await runs.steps(run.id);
    assert.ok(steps.some((s) => s.name === 'before-0'));
    assert.ok(steps.some((s) => s.name === 'after-4'));
    const one = await runs.step(run.id, steps[0]!.seq);
    assert.equal(one.seq, steps[0]!.seq);
    const attempts = await runs.attempts(run.id);
    assert.ok(attempts.length >= 1);
  });

  test(`${name}: a dropped event stream resumes with no event lost or repeated`, async (t) => {
    const harness = await start(t);
    if (harness.cutEventStreams === undefined) return t.skip('this transport has no connection');
    const { runs } = harness;
    const run = await runs.create({ agent: 'stepper' });
    const seen: RunEvent[] = [];
    const reconnects: number[] = [];
    const iterator = runs
      .events(run.id, { onReconnect: (info) => reconnects.push(info.lastSeq) })
      [Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.done, false);
    seen.push(first.value as RunEvent);
    await until('the run to wait', async () => (await runs.get(run.id)).status === 'waiting');
    // Mid-stream: events after the first were written to the connection that is now cut.
    assert.ok(harness.cutEventStreams() >= 1, 'a stream was open to cut');
    await runs.sendInput(run.id, 'go', 'now');
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      seen.push(next.value);
      // A second cut, after the wait, on the resumed connection.
      if (next.value.type === 'effect.completed' && reconnects.length === 1)
        harness.cutEventStreams();
    }
    const stored = await runs.listEvents(run.id);
    assert.deepEqual(
      seen.map((e) => e.seq),
      stored.map((e) => e.seq),
      'every stored event delivered once, in order',
    );
    assert.equal(seen.at(-1)?.type, 'run.succeeded');
    assert.ok(reconnects.length >= 1, 'the client reconnected');
    const resumed = harness.resumedFrom?.() ?? [];
    assert.ok(resumed.length >= 2);
    assert.equal(resumed[0], undefined, 'the first connection starts from the beginning');
    assert.equal(resumed[1], String(reconnects[0]), 'the second resumes after the last event seen');
  });

  test(`${name}: createMany answers each request; follow and waitMany carry many runs on one stream`, async (t) => {
    const harness = await start(t);
    const { runs } = harness;
    const results = await runs.createMany([
      { agent: 'echo', input: 1 },
      { agent: 'nope' },
      { agent: 'echo', input: 2, idempotencyKey: 'many-k' },
      { agent: 'echo', input: 2, idempotencyKey: 'many-k' },
      { agent: 'stepper' },
      { agent: 'stepper' },
    ]);
    assert.deepEqual(
      results.map((r) => r.error?.code ?? r.status),
      ['created', 'agent_not_found', 'created', 'existing', 'created', 'created'],
    );
    assert.equal(results[3]!.run!.id, results[2]!.run!.id);
    const done = await runs.waitMany([results[0]!.run!.id, results[2]!.run!.id]);
    assert.deepEqual(
      done.map((r) => [r.status, r.result]),
      [
        ['succeeded', { echo: 1 }],
        ['succeeded', { echo: 2 }],
      ],
    );
    // Two steppers followed on one stream, cut while they wait (where the transport has a
    // connection): every stored event of both arrives once.
    const steppers = [results[4]!.run!.id, results[5]!.run!.id];
    const seen: Array<{ runId: string; seq: number }> = [];
    const iterator = runs.follow(steppers)[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.done, false);
    seen.push(first.value!);
    for (const id of steppers)
      await until('the run to wait', async () => (await runs.get(id)).status === 'waiting');
    if (harness.cutEventStreams !== undefined)
      assert.ok(harness.cutEventStreams() >= 1, 'a stream was open to cut');
    for (const id of steppers) await runs.sendInput(id, 'go', 'now');
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      seen.push(next.value);
    }
    const stored: string[] = [];
    for (const id of steppers)
      for (const e of await runs.listEvents(id)) stored.push(`${id}/${e.seq}`);
    const got = seen.map((e) => `${e.runId}/${e.seq}`);
    assert.equal(new Set(got).size, got.length, 'no event twice');
    assert.deepEqual([...got].sort(), stored.sort(), 'every event of both runs');
    const resumed = (harness.resumedFrom?.() ?? []).filter((h) => h?.includes('.'));
    if (harness.cutEventStreams !== undefined)
      assert.ok(resumed.length >= 1, 'the tenant stream resumed with a cursor');
    // A run that never ends times out; a run that is not the tenant's is 404.
    const waiting = await runs.create({ agent: 'asker' });
    await assert.rejects(
      runs.waitMany([waiting.id], { timeoutMs: 300 }),
      (e: unknown) => e instanceof KeelWaitTimeoutError,
    );
    await rejectsWithCode(runs.waitMany(['run_missing']), 404, 'run_not_found');
  });

  test(`${name}: rerun, reset and fork make new runs from a run`, async (t) => {
    const { runs } = await start(t);
    const source = await runs.createAndWait({ agent: 'echo', input: 'a' }, { waitMs: 30_000 });
    assert.equal(source.run.status, 'succeeded');
    const rerun = await runs.rerun(source.run.id, { idempotencyKey: 'again-1' });
    assert.notEqual(rerun.id, source.run.id);
    assert.equal((await runs.rerun(source.run.id, { idempotencyKey: 'again-1' })).id, rerun.id);
    assert.deepEqual((await runs.wait(rerun.id)).result, { echo: 'a' });
    const forked = await runs.fork(source.run.id, { input: 'b' });
    assert.deepEqual((await runs.wait(forked.id)).result, { echo: 'b' });

    const stepped = await runs.create({ agent: 'stepper' });
    await until('the run to wait', async () => (await runs.get(stepped.id)).status === 'waiting');
    await runs.sendInput(stepped.id, 'go', 'first');
    assert.equal((await runs.wait(stepped.id)).status, 'succeeded');
    const journal = await runs.steps(stepped.id, { io: false });
    const position = journal.find((step) => step.name === 'before-4')!.seq;
    const reset = await runs.reset(stepped.id, { position });
    await until(
      'the reset run to wait',
      async () => (await runs.get(reset.id)).status === 'waiting',
    );
    await runs.sendInput(reset.id, 'go', 'second');
    assert.deepEqual((await runs.wait(reset.id)).result, { go: 'second' });
    const resetSteps = await runs.steps(reset.id, { io: false });
    assert.ok(
      resetSteps.some((step) => step.name === 'before-0'),
      'the journal through the position is reused',
    );
    await rejectsWithCode(
      runs.reset(stepped.id, { position: 1_000_000 }),
      400,
      'reset_position_out_of_range',
    );
  });

  test(`${name}: errors are typed with the API's code`, async (t) => {
    const harness = await start(t);
    const { runs } = harness;
    const missing = await rejectsWithCode(runs.get('run_does_not_exist'), 404, 'run_not_found');
    assert.match(missing.message, /run_does_not_exist/);
    await rejectsWithCode(runs.result('run_does_not_exist', { waitMs: 100 }), 404, 'run_not_found');
    const invalid = await rejectsWithCode(
      runs.create({ agent: 'echo', priority: 'urgent' as never }),
      400,
      'validation_failed',
    );
    assert.ok(invalid.details !== undefined, 'validation errors carry details');
    await rejectsWithCode(runs.create({ agent: 'no-such-agent' }), 404, 'agent_not_found');
    const done = await runs.createAndWait({ agent: 'echo' }, { waitMs: 30_000 });
    await rejectsWithCode(runs.sendInput(done.run.id, 'answer', 1), 409, 'run_terminal');
    if (harness.unknownKey !== undefined)
      await rejectsWithCode(harness.unknownKey.list(), 401, 'unauthorized');
    if (harness.readOnly !== undefined) {
      await rejectsWithCode(harness.readOnly.create({ agent: 'echo' }), 403, 'forbidden_scope');
      assert.equal((await harness.readOnly.get(done.run.id)).id, done.run.id);
    }
  });
}
