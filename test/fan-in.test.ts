// Fan-in (issue 21): ctx.any with verification settles once on the first child that passes, after
// a faster child failed verification, and cancels the losers in the decision's own commit; ctx.any
// without verification, ctx.race against a durable timer, ctx.all (all values, or the first
// failure and the rest cancelled), and steps as branches; on SQLite and Postgres, in-process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import agents from './fixtures/fan-in-agents.ts';
import { postgresAvailable } from './support/postgres.ts';
import { startKeelOn, type SchedulesKeel } from './support/schedules-keel.ts';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
/** Generous: the runs take milliseconds, but a loaded machine may hold a poll back for seconds. */
const WAIT_MS = 60_000;

async function childrenOf(keel: SchedulesKeel, parentId: string) {
  const runs = (await keel.request('GET', '/v1/runs?agent=fan-worker&limit=100')).body.runs as {
    id: string;
    parentRunId: string;
    input: { label: string };
  }[];
  return new Map(runs.filter((r) => r.parentRunId === parentId).map((r) => [r.input.label, r.id]));
}

async function events(keel: SchedulesKeel, id: string) {
  return (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body as {
    type: string;
    data: any;
  }[];
}

async function steps(keel: SchedulesKeel, id: string) {
  return (await keel.request('GET', `/v1/runs/${id}/steps?io=false`)).body.steps as {
    seq: number;
    kind: string;
    name: string;
    status: string;
  }[];
}

/** Polls until `check` holds (the parent has seen what the test waits for). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`fan-in (${backend}): the first child fails verification, the second wins, the third is cancelled`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const id = (
      await keel.request('POST', '/v1/runs', {
        agent: 'fan-first-verified',
        input: {
          children: [
            { label: 'A', mode: 'now', ok: false },
            { label: 'B', mode: 'input' },
            { label: 'C', mode: 'input' },
          ],
        },
      })
    ).body.id as string;
    // A answers at once with a value verify refuses; the parent sees it and waits on.
    await until('the parent to see A', async () =>
      (await steps(keel, id)).some((s) => s.seq === 1 && s.status === 'succeeded'),
    );
    const kids = await childrenOf(keel, id);
    assert.equal((await keel.request('GET', `/v1/runs/${id}`)).body.status !== 'succeeded', true);
    await keel.waitForRun(kids.get('B')!, (r) => r.status === 'waiting', WAIT_MS);
    await keel.request('POST', `/v1/runs/${kids.get('B')}/input`, {
      key: 'go',
      value: { ok: true },
    });

    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.result, { winner: { label: 'B', ok: true } });
    const c = await keel.waitForRun(kids.get('C')!, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.equal(c.status, 'cancelled');

    const decided = (await events(keel, id)).filter((e) => e.type === 'fanin.decided');
    assert.equal(decided.length, 1, 'one decision');
    assert.equal(decided[0]!.data.mode, 'any');
    assert.equal(decided[0]!.data.branch, 1);
    assert.deepEqual(decided[0]!.data.refused, [0]);
    assert.deepEqual(decided[0]!.data.losers, [3]);
    assert.deepEqual(decided[0]!.data.cancelledRuns, [kids.get('C')]);
    const decisions = (await steps(keel, id)).filter((s) => s.kind === 'decision');
    assert.deepEqual(
      decisions.map((s) => [s.seq, s.name, s.status]),
      [[4, 'any', 'succeeded']],
    );
    const cancelledBy = (await events(keel, kids.get('C')!)).find(
      (e) => e.type === 'run.cancelling',
    );
    assert.equal(cancelledBy?.data.by, `parent ${id}`);
  });

  test(`fan-in (${backend}): ctx.any without verification takes the first success; all failing is fan_in_exhausted`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const won = (
      await keel.request('POST', '/v1/runs', {
        agent: 'fan-any',
        input: {
          children: [
            { label: 'A', mode: 'fail' },
            { label: 'B', mode: 'now', ok: false },
            { label: 'C', mode: 'input' },
          ],
        },
      })
    ).body.id as string;
    const done = await keel.waitForRun(won, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(done.result, { winner: { label: 'B', ok: false } }, 'no verify: any value');
    const c = (await childrenOf(keel, won)).get('C')!;
    assert.equal(
      (await keel.waitForRun(c, (r) => TERMINAL.has(r.status), WAIT_MS)).status,
      'cancelled',
    );

    const lost = (
      await keel.request('POST', '/v1/runs', {
        agent: 'fan-any',
        input: {
          children: [
            { label: 'A', mode: 'fail' },
            { label: 'B', mode: 'fail' },
          ],
        },
      })
    ).body.id as string;
    const none = await keel.waitForRun(lost, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(none.result, { error: 'fan_in_exhausted' });
    const decided = (await events(keel, lost)).filter((e) => e.type === 'fanin.decided');
    assert.equal(decided.length, 1);
    assert.deepEqual([decided[0]!.data.status, decided[0]!.data.failed], ['failed', [0, 1]]);
  });

  test(`fan-in (${backend}): ctx.race against a durable timer; the timer wins and the child is cancelled`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const id = (
      await keel.request('POST', '/v1/runs', {
        agent: 'fan-race-timer',
        input: { child: { label: 'slow', mode: 'input' }, timeoutMs: 50 },
      })
    ).body.id as string;
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual([done.status, done.result], ['succeeded', { result: 'timeout' }]);
    const child = (await childrenOf(keel, id)).get('slow')!;
    assert.equal(
      (await keel.waitForRun(child, (r) => TERMINAL.has(r.status), WAIT_MS)).status,
      'cancelled',
    );
    const decided = (await events(keel, id)).filter((e) => e.type === 'fanin.decided');
    assert.deepEqual(
      decided.map((e) => [e.data.mode, e.data.branch, e.data.cancelledRuns]),
      [['race', 1, [child]]],
    );
  });

  test(`fan-in (${backend}): ctx.all returns every value in order; one failure fails it and cancels the rest`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const ok = (
      await keel.request('POST', '/v1/runs', {
        agent: 'fan-all',
        input: {
          children: [
            { label: 'A', mode: 'now' },
            { label: 'B', mode: 'now' },
          ],
        },
      })
    ).body.id as string;
    const all = await keel.waitForRun(ok, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(all.result, {
      all: [
        { label: 'A', ok: true },
        { label: 'B', ok: true },
      ],
    });
    assert.equal((await events(keel, ok)).filter((e) => e.type === 'fanin.decided').length, 0);
    assert.deepEqual(
      (await steps(keel, ok)).filter((s) => s.kind === 'decision').map((s) => s.status),
      ['succeeded'],
      'an all-success marks its position',
    );

    const bad = (
      await keel.request('POST', '/v1/runs', {
        agent: 'fan-all',
        input: {
          children: [
            { label: 'A', mode: 'input' },
            { label: 'B', mode: 'fail' },
          ],
        },
      })
    ).body.id as string;
    const failed = await keel.waitForRun(bad, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(failed.result, { error: 'child_failed' });
    const a = (await childrenOf(keel, bad)).get('A')!;
    assert.equal(
      (await keel.waitForRun(a, (r) => TERMINAL.has(r.status), WAIT_MS)).status,
      'cancelled',
    );
    const decided = (await events(keel, bad)).filter((e) => e.type === 'fanin.decided');
    assert.deepEqual(
      decided.map((e) => [e.data.mode, e.data.status, e.data.branch, e.data.code]),
      [['all', 'failed', 1, 'child_failed']],
    );
  });

  test(`fan-in (${backend}): steps as branches, and a losing step in flight is journaled and ignored`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const id = (await keel.request('POST', '/v1/runs', { agent: 'fan-steps' })).body.id as string;
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(done.result, { all: [1, 2], first: 'fast', after: 'after' });
    const journal = await steps(keel, id);
    assert.equal(journal.find((s) => s.name === 'slow')?.status, 'succeeded');
    assert.deepEqual(
      journal.filter((s) => s.kind === 'decision').map((s) => [s.name, s.status]),
      [
        ['all', 'succeeded'],
        ['race', 'succeeded'],
      ],
    );
  });
}
