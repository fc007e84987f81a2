// A child run its parent did not wait for ends with the parent, however the parent ends (issue
// 21): cancelled in the parent's own final commit (so no crash leaves an orphan), unless it was
// started with `onParentEnd: 'detach'`, on SQLite and Postgres; a parent with `onParentEnd: 'wait'`
// children parks until they end (its default children cancelled as it parks), then ends with its own
// result; a bad policy is refused before a position is taken.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { postgresAvailable } from './support/postgres.ts';
import { startKeelOn, type SchedulesKeel } from './support/schedules-keel.ts';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
/** Generous: the runs take milliseconds, but a loaded machine may hold a poll back for seconds. */
const WAIT_MS = 60_000;

const stuck = defineAgent({
  name: 'stuck',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('never');
  },
});

/** Spawns a default child and a detached one, waits for neither, then ends as asked. */
const parent = defineAgent({
  name: 'parent',
  version: '1',
  async run(ctx, input: { end: 'succeed' | 'fail' }) {
    void ctx.child('stuck', { role: 'default' }).catch(() => undefined);
    void ctx.child('stuck', { role: 'detached' }, { onParentEnd: 'detach' }).catch(() => undefined);
    if (input.end === 'fail') throw new Error('the parent gives up');
    return { spawned: 2 };
  },
});

/** Spawns a child it must outlive (`wait`) and a default one, awaits neither, and ends as asked. */
const waitingParent = defineAgent({
  name: 'waiting-parent',
  version: '1',
  async run(ctx, input: { end: 'succeed' | 'fail' }) {
    void ctx.child('stuck', { role: 'waited' }, { onParentEnd: 'wait' }).catch(() => undefined);
    void ctx.child('stuck', { role: 'default' }).catch(() => undefined);
    if (input.end === 'fail') throw new Error('the parent gives up');
    return { spawned: 2 };
  },
});

const badPolicy = defineAgent({
  name: 'bad-policy',
  version: '1',
  async run(ctx) {
    try {
      await ctx.child('stuck', {}, { onParentEnd: 'orphan' as never });
      return 'spawned';
    } catch (error) {
      return (error as { code: string }).code;
    }
  },
});

async function childrenOf(keel: SchedulesKeel, parentId: string) {
  const runs = (await keel.request('GET', '/v1/runs?agent=stuck&limit=100')).body.runs as {
    id: string;
    parentRunId: string;
    input: { role: string };
  }[];
  return runs.filter((r) => r.parentRunId === parentId);
}

for (const backend of ['sqlite', 'postgres'] as const) {
  for (const end of ['succeed', 'fail'] as const) {
    test(`children (${backend}): the parent ${end}s; its default child is cancelled with it, the detached one runs on`, async (t) => {
      if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
      const keel = await startKeelOn(t, backend, [stuck, parent, waitingParent, badPolicy]);
      const id = (await keel.request('POST', '/v1/runs', { agent: 'parent', input: { end } })).body
        .id as string;
      const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
      assert.equal(done.status, end === 'succeed' ? 'succeeded' : 'failed');

      const kids = await childrenOf(keel, id);
      assert.equal(kids.length, 2, 'both children were spawned before the parent ended');
      const byRole = new Map(kids.map((k) => [k.input.role, k.id]));
      const cancelled = await keel.waitForRun(
        byRole.get('default')!,
        (r) => TERMINAL.has(r.status),
        WAIT_MS,
      );
      assert.equal(cancelled.status, 'cancelled');
      const events = (
        await keel.request('GET', `/v1/runs/${byRole.get('default')}/events?format=json`)
      ).body as { type: string; data: { by?: string } }[];
      assert.equal(events.find((e) => e.type === 'run.cancelling')?.data.by, `parent ${id}`);

      const detached = await keel.waitForRun(
        byRole.get('detached')!,
        (r) => r.status === 'waiting',
      );
      assert.equal(detached.waitingReason, 'input');
      // It is still a live run of its own: it finishes when given its input.
      await keel.request('POST', `/v1/runs/${byRole.get('detached')}/input`, {
        key: 'never',
        value: 'done',
      });
      const finished = await keel.waitForRun(
        byRole.get('detached')!,
        (r) => TERMINAL.has(r.status),
        WAIT_MS,
      );
      assert.deepEqual([finished.status, finished.result], ['succeeded', 'done']);
    });
  }

  for (const end of ['succeed', 'fail'] as const) {
    test(`children (${backend}): a parent that ${end}s parks until its 'wait' child ends, then ends with its own result`, async (t) => {
      if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
      const keel = await startKeelOn(t, backend, [stuck, parent, waitingParent, badPolicy]);
      const id = (
        await keel.request('POST', '/v1/runs', { agent: 'waiting-parent', input: { end } })
      ).body.id as string;
      const parked = await keel.waitForRun(id, (r) => r.status === 'waiting', WAIT_MS);
      assert.equal(parked.waitingReason, 'children');
      const kids = await childrenOf(keel, id);
      const byRole = new Map(kids.map((k) => [k.input.role, k.id]));
      assert.equal(kids.length, 2);
      const waited = await keel.waitForRun(byRole.get('waited')!, (r) => r.status === 'waiting');
      assert.equal(waited.waitingReason, 'input');
      // The default child is cancelled as the parent parks: the agent is done with it.
      const cancelled = await keel.waitForRun(
        byRole.get('default')!,
        (r) => TERMINAL.has(r.status),
        WAIT_MS,
      );
      assert.equal(cancelled.status, 'cancelled');
      const events = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body as {
        type: string;
        data: { reason?: string; childRunIds?: string[] };
      }[];
      const waiting = events.find((e) => e.type === 'run.waiting' && e.data.reason === 'children');
      assert.deepEqual(waiting?.data.childRunIds, [byRole.get('waited')]);

      await keel.request('POST', `/v1/runs/${byRole.get('waited')}/input`, {
        key: 'never',
        value: 1,
      });
      const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
      assert.equal(done.status, end === 'succeed' ? 'succeeded' : 'failed');
      if (end === 'succeed') assert.deepEqual(done.result, { spawned: 2 });
      const child = await keel.waitForRun(byRole.get('waited')!, (r) => TERMINAL.has(r.status));
      assert.equal(child.status, 'succeeded');
    });
  }

  test(`children (${backend}): a parent cancelled while it waits for its 'wait' child cancels that child too`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, [stuck, parent, waitingParent, badPolicy]);
    const id = (
      await keel.request('POST', '/v1/runs', { agent: 'waiting-parent', input: { end: 'succeed' } })
    ).body.id as string;
    await keel.waitForRun(id, (r) => r.waitingReason === 'children', WAIT_MS);
    const waitedId = (await childrenOf(keel, id)).find((k) => k.input.role === 'waited')!.id;
    assert.equal((await keel.request('POST', `/v1/runs/${id}/cancel`)).status, 202);
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.equal(done.status, 'cancelled');
    const waited = await keel.waitForRun(waitedId, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.equal(waited.status, 'cancelled');
    const events = (await keel.request('GET', `/v1/runs/${waitedId}/events?format=json`)).body as {
      type: string;
      data: { by?: string };
    }[];
    assert.equal(events.find((e) => e.type === 'run.cancelling')?.data.by, `parent ${id}`);
  });

  test(`children (${backend}): an unknown onParentEnd is refused in the parent, before anything is spawned`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, [stuck, parent, waitingParent, badPolicy]);
    const id = (await keel.request('POST', '/v1/runs', { agent: 'bad-policy' })).body.id as string;
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual([done.status, done.result], ['succeeded', 'validation_failed']);
    assert.equal((await childrenOf(keel, id)).length, 0);
  });
}
