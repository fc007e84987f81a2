// Preemption inside one Keel (real SQLite, orchestrator, HTTP): a batch run asked to yield stops at
// its next effect boundary, not before — effects already in flight finish and commit, so nothing
// committed is lost or run twice — and a cancel that arrives while the preemption is pending wins
// (the run ends cancelled, never re-queued).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';
import { until } from './support/distributed.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * Step `a` runs alongside `b`; `c` comes after `b`: with a preemption asked during `b`, `c` is the
 * boundary.
 */
function pairAgent(
  counts: Record<string, number>,
  gates: { a: ReturnType<typeof gate>; b: ReturnType<typeof gate> },
) {
  return defineAgent({
    name: 'pair',
    version: '1',
    async run(ctx) {
      const pa = ctx.step('a', async () => {
        counts.a!++;
        await gates.a.opened;
        return 'a';
      });
      pa.catch(() => {}); // awaited below, unless the run stops first (then its late commit is fenced off)
      const b = await ctx.step('b', async () => {
        counts.b!++;
        await gates.b.opened;
        return 'b';
      });
      const c = await ctx.step('c', () => {
        counts.c!++;
        return 'c';
      });
      return [await pa, b, c];
    },
  });
}

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run(ctx) {
    return ctx.step('s', () => 'ok');
  },
});

async function start(
  counts: Record<string, number>,
  gates: { a: ReturnType<typeof gate>; b: ReturnType<typeof gate> },
  logs: string[],
): Promise<TestKeel> {
  return startKeel({
    agents: [pairAgent(counts, gates), quick],
    orchestrator: {
      maxActiveRuns: 1,
      preemptAfterMs: 100,
      pollIntervalMs: 20,
      log: (_level, message) => logs.push(message),
    },
  });
}

const PREEMPTING = 'preempting batch runs for interactive runs waiting too long';

/**
 * One Keel with one run slot: a batch `pair` run holds it inside step b (step a in flight beside
 * it), then an interactive run arrives and the orchestrator asks the batch run to yield. Gates stay
 * closed for the test to open.
 */
async function preemptionPending(t: { after(fn: () => Promise<void>): void }) {
  const counts = { a: 0, b: 0, c: 0 };
  const gates = { a: gate(), b: gate() };
  const logs: string[] = [];
  const keel = await start(counts, gates, logs);
  t.after(async () => {
    gates.a.open();
    gates.b.open();
    await keel.close();
  });
  const batchId = (await keel.request('POST', '/v1/runs', { agent: 'pair', priority: 'batch' }))
    .body.id as string;
  await keel.waitForRun(batchId, (r) => r.status === 'running');
  const interactiveId = (
    await keel.request('POST', '/v1/runs', { agent: 'quick', priority: 'interactive' })
  ).body.id as string;
  await until(
    'the orchestrator to ask the batch run to yield',
    async () => (logs.includes(PREEMPTING) ? true : undefined),
    10_000,
  );
  const stepBCommitted = () =>
    until(
      'step b to commit',
      async () =>
        (await keel.request('GET', `/v1/runs/${batchId}/steps`)).body.steps.some(
          (s: any) => s.name === 'b' && s.status === 'succeeded',
        )
          ? true
          : undefined,
      10_000,
    );
  return { counts, gates, keel, batchId, interactiveId, stepBCommitted };
}

test('a preempted run stops at its next effect boundary: in-flight steps commit first, then it is re-queued and later finishes with each step run once', async (t) => {
  const { counts, gates, keel, batchId, interactiveId, stepBCommitted } =
    await preemptionPending(t);
  // Asked, but mid-step: it holds its slot until a boundary.
  assert.equal((await keel.request('GET', `/v1/runs/${batchId}`)).body.status, 'running');
  gates.b.open(); // b commits; c is the boundary; a is still in flight and must commit before the run yields
  await stepBCommitted();
  assert.equal(
    (await keel.request('GET', `/v1/runs/${batchId}`)).body.status,
    'running',
    'waits for the in-flight step a',
  );
  gates.a.open();
  const interactive = await keel.waitForRun(interactiveId, (r) => TERMINAL.has(r.status));
  const batch = await keel.waitForRun(batchId, (r) => TERMINAL.has(r.status));
  assert.equal(interactive.status, 'succeeded');
  assert.equal(batch.status, 'succeeded');
  assert.deepEqual(batch.result, ['a', 'b', 'c']);
  assert.deepEqual(
    counts,
    { a: 1, b: 1, c: 1 },
    'no committed step ran again after the preemption',
  );
  assert.equal(batch.preemptions, 1);
  assert.ok(batch.preemptedAt !== null);
  assert.ok(Date.parse(interactive.endedAt) < Date.parse(batch.endedAt));
  const events = (await keel.request('GET', `/v1/runs/${batchId}/events?format=json`))
    .body as Array<{ type: string; data: any }>;
  const preempted = events.find((e) => e.type === 'run.preempted')!;
  assert.equal(preempted.data.positionsKept, 2, 'a and b are kept');
  assert.ok(preempted.data.waitedMs >= 100);
  const types = events.map((e) => e.type);
  assert.ok(types.indexOf('run.preempted') < types.lastIndexOf('run.started'), types.join(' '));
  assert.equal(interactive.preemptions, 0);
});

test('a cancel that arrives while a preemption is pending wins: the run ends cancelled, never re-queued', async (t) => {
  const { counts, gates, keel, batchId, interactiveId, stepBCommitted } =
    await preemptionPending(t);
  gates.b.open(); // the boundary is reached; the run waits for step a before it yields
  await stepBCommitted();
  assert.equal((await keel.request('POST', `/v1/runs/${batchId}/cancel`)).status, 202);
  gates.a.open();
  const batch = await keel.waitForRun(batchId, (r) => TERMINAL.has(r.status));
  assert.equal(batch.status, 'cancelled');
  assert.equal(batch.preemptions, 0);
  assert.equal(counts.c, 0);
  const types = (await keel.request('GET', `/v1/runs/${batchId}/events?format=json`)).body.map(
    (e: any) => e.type,
  );
  assert.ok(!types.includes('run.preempted'), types.join(' '));
  assert.equal(
    (await keel.waitForRun(interactiveId, (r) => TERMINAL.has(r.status))).status,
    'succeeded',
  );
});

test("a shutdown does not wait for a preempted run's in-flight step: the run is handed back after the usual grace", async (t) => {
  const { gates, keel, batchId, stepBCommitted } = await preemptionPending(t);
  gates.b.open(); // the boundary is reached; step a never ends while the process shuts down
  await stepBCommitted();
  await keel.orchestrator.stop();
  const run = (await keel.request('GET', `/v1/runs/${batchId}`)).body;
  assert.equal(run.status, 'queued', 'handed back by the shutdown');
  assert.equal(run.preemptions, 0, 'the shutdown, not the preemption, gave it back');
});
