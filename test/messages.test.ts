// Messages between runs (issue 21), in-process on SQLite and Postgres: POST /v1/runs/:id/messages
// delivers into a run's ctx.receive (a durable wait), a duplicate id delivers nothing, the typed
// errors (404 unknown run, 409 ended run, 400 bad body or a reserved input key), ctx.send between
// runs with its envelope (from, correlation id) deduplicated by id, a receive's timeout, and an
// expired message skipped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import agents from './fixtures/message-agents.ts';
import { postgresAvailable } from './support/postgres.ts';
import { startKeelOn, type SchedulesKeel } from './support/schedules-keel.ts';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const WAIT_MS = 60_000;

async function start(keel: SchedulesKeel, agent: string, input: unknown): Promise<string> {
  const res = await keel.request('POST', '/v1/runs', { agent, input });
  assert.equal(res.status, 201);
  return res.body.id as string;
}

async function eventTypes(keel: SchedulesKeel, id: string): Promise<string[]> {
  const events = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body as {
    type: string;
  }[];
  return events.map((e) => e.type);
}

const count = (types: string[], type: string) => types.filter((t) => t === type).length;

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`messages (${backend}): a posted message wakes a receive; a duplicate id delivers nothing`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const id = await start(keel, 'msg-receiver', { count: 2 });
    await keel.waitForRun(id, (r) => r.status === 'waiting', WAIT_MS);
    const post = (body: unknown) => keel.request('POST', `/v1/runs/${id}/messages`, body);
    const first = await post({
      channel: 'inbox',
      id: 'm1',
      payload: { hello: 1 },
      correlationId: 'c1',
    });
    assert.deepEqual(
      [first.status, first.body],
      [202, { id: 'm1', channel: 'inbox', index: 1, duplicate: false }],
    );
    const again = await post({ channel: 'inbox', id: 'm1', payload: { hello: 'again' } });
    assert.deepEqual([again.status, again.body.duplicate, again.body.index], [202, true, 1]);
    await post({ channel: 'inbox', id: 'm2', payload: { hello: 2 } });
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(done.result, {
      got: [
        { id: 'm1', from: null, correlationId: 'c1', index: 1, payload: { hello: 1 } },
        { id: 'm2', from: null, correlationId: null, index: 2, payload: { hello: 2 } },
      ],
    });
    const types = await eventTypes(keel, id);
    assert.equal(count(types, 'message.delivered'), 2, 'the duplicate was not delivered');
    assert.equal(count(types, 'message.received'), 2);
  });

  test(`messages (${backend}): typed errors for an unknown run, an ended run, a bad body and a reserved input key`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const body = { channel: 'inbox', id: 'x', payload: 1 };
    const unknown = await keel.request('POST', '/v1/runs/run_nope/messages', body);
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'run_not_found']);
    const id = await start(keel, 'msg-receiver', { count: 0 });
    await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    const ended = await keel.request('POST', `/v1/runs/${id}/messages`, body);
    assert.deepEqual([ended.status, ended.body.error.code], [409, 'run_terminal']);
    for (const bad of [
      { channel: 'inbox', id: 'x' },
      { channel: '', id: 'x', payload: 1 },
      { channel: 'a:b', id: 'x', payload: 1 },
      { channel: 'inbox', id: 'x', payload: 1, ttlMs: 0 },
      { channel: 'inbox', id: 'x', payload: 1, extra: true },
    ]) {
      const res = await keel.request('POST', `/v1/runs/${id}/messages`, bad);
      assert.deepEqual(
        [res.status, res.body.error.code],
        [400, 'validation_failed'],
        JSON.stringify(bad),
      );
    }
    const reserved = await keel.request('POST', `/v1/runs/${id}/input`, {
      key: 'keel.message:inbox:1',
      value: 1,
    });
    assert.deepEqual([reserved.status, reserved.body.error.code], [400, 'validation_failed']);
  });

  test(`messages (${backend}): ctx.send between runs, deduplicated by its id; a send to an ended run fails typed`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const to = await start(keel, 'msg-receiver', { count: 1 });
    const from = await start(keel, 'msg-sender', { to, times: 2, id: 'same' });
    const sent = await keel.waitForRun(from, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(sent.result, {
      sent: [
        { index: 1, duplicate: false },
        { index: 1, duplicate: true },
      ],
    });
    const got = await keel.waitForRun(to, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(got.result, {
      got: [{ id: 'same', from, correlationId: 'conv-1', index: 1, payload: { n: 0 } }],
    });
    assert.equal(count(await eventTypes(keel, from), 'message.sent'), 2);
    assert.equal(count(await eventTypes(keel, to), 'message.delivered'), 1);

    const late = await start(keel, 'msg-sender', { to, times: 1 });
    const refused = await keel.waitForRun(late, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(refused.result, { sent: [{ error: 'run_terminal' }] });
  });

  test(`messages (${backend}): a receive times out with message_timeout; an expired message is skipped`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await startKeelOn(t, backend, agents);
    const quiet = await start(keel, 'msg-receiver', { count: 1, timeoutMs: 50 });
    const timedOut = await keel.waitForRun(quiet, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(timedOut.result, { got: [], error: 'message_timeout' });

    const id = await start(keel, 'msg-receiver', { count: 1, waitFirst: true });
    await keel.waitForRun(id, (r) => r.status === 'waiting', WAIT_MS);
    const post = (body: unknown) => keel.request('POST', `/v1/runs/${id}/messages`, body);
    assert.equal(
      (await post({ channel: 'inbox', id: 'old', payload: 'old', ttlMs: 1 })).status,
      202,
    );
    assert.equal((await post({ channel: 'inbox', id: 'new', payload: 'new' })).status, 202);
    await new Promise((r) => setTimeout(r, 5)); // past the first message's 1 ms
    await keel.request('POST', `/v1/runs/${id}/input`, { key: 'start', value: true });
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status), WAIT_MS);
    assert.deepEqual(
      (done.result.got as { id: string }[]).map((m) => m.id),
      ['new'],
    );
  });
}
