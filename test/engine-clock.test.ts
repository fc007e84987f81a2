// The engine reads time only from the clock it is given: ctx.now(), the times journaled for an
// effect, and the backoff between a step's attempts all follow a manual clock, through the real
// engine, store and HTTP API.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../src/domain/clock.ts';
import { defineAgent } from '../src/index.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

const T0 = Date.parse('2031-05-01T12:00:00Z');
const HOUR_MS = 3_600_000;

let failures = 0;
const clocked = defineAgent({
  name: 'clocked',
  version: '1',
  async run(ctx) {
    const at = ctx.now();
    // Fails once; its retry waits a backoff of up to an hour, which only the clock can shorten.
    const value = await ctx.step(
      'flaky',
      () => {
        if (failures++ === 0) throw new Error('first attempt fails');
        return 'ok';
      },
      { retry: { maxAttempts: 2, initialDelayMs: HOUR_MS, maxDelayMs: HOUR_MS } },
    );
    return { at, value };
  },
});

test('ctx.now, journaled effect times and retry backoff follow the injected clock', async (t) => {
  const clock = new ManualClock(T0);
  const keel = await startKeel({ agents: [clocked], orchestrator: { clock } });
  t.after(() => keel.close());
  const created = await keel.request('POST', '/v1/runs', { agent: 'clocked', input: null });
  assert.equal(created.status, 201);
  const id: string = created.body.id;

  const deadline = Date.now() + 10_000;
  while (clock.pending === 0) {
    // the backoff sleeps on the manual clock
    assert.ok(Date.now() < deadline, 'the step never started its backoff');
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(failures, 1);
  assert.equal((await keel.request('GET', `/v1/runs/${id}`)).body.status, 'running');

  clock.advance(HOUR_MS);
  const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.deepEqual(done.result, { at: T0, value: 'ok' });
  const step = (await keel.store.loadJournal(id)).find((e) => e.kind === 'step');
  assert.equal(step?.attempts, 2);
  assert.equal(step?.startedAt, T0);
  assert.equal(step?.endedAt, T0 + HOUR_MS);
  const retrying = (await keel.store.listEvents(id, 0, 100)).find(
    (e) => e.type === 'effect.retrying',
  );
  assert.equal((retrying?.data as { attempt?: number } | undefined)?.attempt, 1);
});
