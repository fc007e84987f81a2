// A saturated pool holds no run slots: runs whose effects wait in a pool's queue give their run
// slot back, so runs bound for other pools are still claimed and finish while the pool stays full;
// a wait that lasts is explained (waitingReason pool_saturated, run.waiting naming the pool,
// run.resumed when the slot comes). A call that finds the pool's queue full parks its run and is
// made later, instead of failing in agent code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/index.ts';
import { parsePoolsConfig } from '../src/scheduling/pool-config.ts';
import { PoolRegistry } from '../src/scheduling/pool-registry.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';
import { until } from './support/distributed.ts';

test('runs queued in a full pool give their run slot back; other runs finish meanwhile; the wait is explained', {
  timeout: 60_000,
}, async (t) => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const browse = defineTool({
    name: 'browse',
    description: 'a scarce browser',
    effect: 'read',
    pool: 'browser',
    input: z.object({ n: z.number() }),
    run: async ({ n }) => {
      await opened;
      return n;
    },
  });
  const bound = defineAgent({
    name: 'bound',
    version: '1',
    async run(ctx, input: { n: number }) {
      return ctx.tool(browse, { n: input.n });
    },
  });
  const free = defineAgent({
    name: 'free',
    version: '1',
    async run(ctx, input: { n: number }) {
      return ctx.step('add', () => input.n + 1);
    },
  });
  const pools = new PoolRegistry();
  pools.configure(parsePoolsConfig({ pools: { browser: { limit: 1 } } }, 'test'));
  const keel = await startKeel({
    agents: [bound, free],
    orchestrator: { maxActiveRuns: 2, pools, pollIntervalMs: 20 },
  });
  t.after(async () => {
    open();
    await keel.close();
  });

  const boundIds: string[] = [];
  for (let n = 0; n < 6; n++)
    boundIds.push(
      (await keel.request('POST', '/v1/runs', { agent: 'bound', input: { n } })).body.id,
    );
  await until(
    'every bound run to be in memory, one holding the browser and five queued for it',
    async () => {
      const snapshot = pools.pool('browser').snapshot();
      return snapshot.running === 1 && snapshot.queued === 5 ? true : undefined;
    },
    10_000,
  );
  // Two run slots, six runs in memory: the five waiting for the browser hold none, so these are
  // claimed and finish.
  const freeIds: string[] = [];
  for (let n = 0; n < 4; n++)
    freeIds.push((await keel.request('POST', '/v1/runs', { agent: 'free', input: { n } })).body.id);
  for (const [n, id] of freeIds.entries()) {
    const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
    assert.equal(run.status, 'succeeded');
    assert.equal(run.result, n + 1);
  }
  assert.equal(
    pools.pool('browser').snapshot().queued,
    5,
    'the browser stayed saturated throughout',
  );

  // A wait longer than a second is explained on the run and in its events.
  const waiting = await until(
    'a queued bound run to explain its wait',
    async () => {
      for (const id of boundIds) {
        const run = (await keel.request('GET', `/v1/runs/${id}`)).body;
        if (run.waitingReason === 'pool_saturated') return run;
      }
      return undefined;
    },
    10_000,
  );
  assert.equal(waiting.status, 'running');
  assert.ok(waiting.waitingSince !== null);
  const before = (await keel.request('GET', `/v1/runs/${waiting.id}/events?format=json`))
    .body as Array<{ type: string; data: any }>;
  const event = before.find((e) => e.type === 'run.waiting' && e.data.reason === 'pool_saturated');
  assert.equal(event?.data.pool, 'browser');

  open();
  for (const [n, id] of boundIds.entries()) {
    const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
    assert.equal(run.status, 'succeeded');
    assert.equal(run.result, n);
    assert.equal(run.waitingReason, null);
  }
  const after = (await keel.request('GET', `/v1/runs/${waiting.id}/events?format=json`))
    .body as Array<{ type: string; data: any }>;
  assert.ok(
    after.some(
      (e) =>
        e.type === 'run.resumed' && e.data.reason === 'pool_saturated' && e.data.pool === 'browser',
    ),
    after.map((e) => e.type).join(' '),
  );
});

test('a tool call that finds its pool queue full parks the run and is made when it wakes; the agent never sees an error', {
  timeout: 60_000,
}, async (t) => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const calls: number[] = [];
  const press = defineTool({
    name: 'press',
    description: 'one at a time, no queue',
    effect: 'side-effect',
    pool: 'press',
    input: z.object({ n: z.number() }),
    run: async ({ n }) => {
      calls.push(n);
      if (n === 0) await opened;
      return n * 10;
    },
  });
  const presser = defineAgent({
    name: 'presser',
    version: '1',
    async run(ctx, input: { n: number }) {
      try {
        return await ctx.tool(press, { n: input.n });
      } catch (error) {
        return `saw ${(error as { code?: string }).code}`;
      }
    },
  });
  const pools = new PoolRegistry();
  pools.configure(parsePoolsConfig({ pools: { press: { limit: 1, maxQueued: 0 } } }, 'test'));
  const keel = await startKeel({ agents: [presser], orchestrator: { pools, pollIntervalMs: 20 } });
  t.after(async () => {
    open();
    await keel.close();
  });
  const first = (await keel.request('POST', '/v1/runs', { agent: 'presser', input: { n: 0 } })).body
    .id;
  await until(
    'the first call to hold the press',
    async () => (calls.length === 1 ? true : undefined),
    10_000,
  );
  const second = (await keel.request('POST', '/v1/runs', { agent: 'presser', input: { n: 1 } }))
    .body.id;
  const parked = await keel.waitForRun(second, (r) => r.status === 'waiting');
  assert.equal(parked.waitingReason, 'pool_saturated');
  open();
  assert.equal((await keel.waitForRun(first, (r) => TERMINAL.has(r.status))).result, 0);
  const done = await keel.waitForRun(second, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded');
  assert.equal(
    done.result,
    10,
    'the call was made after the wake; the agent saw no pool_queue_full',
  );
  assert.deepEqual(calls, [0, 1], 'each call made once');
  const events = (await keel.request('GET', `/v1/runs/${second}/events?format=json`))
    .body as Array<{ type: string; data: any }>;
  assert.ok(
    events.some((e) => e.type === 'run.waiting' && e.data.reason === 'pool_saturated'),
    events.map((e) => e.type).join(' '),
  );
});
