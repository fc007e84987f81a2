// Schedules through the HTTP API with a controllable clock: every overlap policy, catch-up inside
// and outside the window after an outage, both DST transitions in two zones, pause/resume, trigger,
// backfill, edits and versions, the history of fires, and typed errors. The scheduler ticks when
// the test moves the fake clock; nothing sleeps.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { assertError } from './support/assert-error.ts';
import { scheduleAgents } from './fixtures/schedule-agents.ts';
import { ADMIN_KEY, startSchedulesKeel, type SchedulesKeel } from './support/schedules-keel.ts';

async function start(t: TestContext, at: string): Promise<SchedulesKeel> {
  const keel = await startSchedulesKeel({ agents: scheduleAgents, start: at });
  t.after(() => keel.close());
  return keel;
}

async function create(keel: SchedulesKeel, body: Record<string, unknown>): Promise<any> {
  const res = await keel.request('POST', '/v1/schedules', {
    timeZone: 'UTC',
    template: { agent: 'quick' },
    ...body,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

const statuses = (fires: any[]) => fires.map((f) => `${f.logicalTime.slice(11, 16)} ${f.status}`);
const release = (keel: SchedulesKeel, runId: string) =>
  keel.request('POST', `/v1/runs/${runId}/input`, { key: 'go', value: 'done' });
const ended = (run: any) => ['succeeded', 'failed', 'cancelled'].includes(run.status);

test('skip: a fire while the previous run is active is recorded as skipped, never run', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, {
    cron: '* * * * *',
    overlap: 'skip',
    template: { agent: 'blocker' },
  });
  await keel.tickAt('2026-01-01T00:01:00Z');
  await keel.tickAt('2026-01-01T00:02:00Z');
  const [first] = await keel.fires(s.id);
  await release(keel, first.runId);
  await keel.waitForRun(first.runId, ended);
  await keel.tickAt('2026-01-01T00:03:00Z');
  const fires = await keel.fires(s.id);
  assert.deepEqual(statuses(fires), ['00:01 started', '00:02 skipped', '00:03 started']);
  assert.equal(fires[1].runId, null);
  assert.deepEqual(fires[1].detail, { reason: 'overlap' });
});

test('allow: fires start while the previous run is still active', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, {
    cron: '* * * * *',
    overlap: 'allow',
    template: { agent: 'blocker' },
  });
  await keel.tickAt('2026-01-01T00:01:00Z');
  await keel.tickAt('2026-01-01T00:02:00Z');
  const fires = await keel.fires(s.id);
  assert.deepEqual(statuses(fires), ['00:01 started', '00:02 started']);
  for (const f of fires)
    assert.equal(
      (await keel.request('GET', `/v1/runs/${f.runId}`)).body.status === 'succeeded',
      false,
    );
});

test('buffer_one keeps one pending fire (later ones skipped); buffer_all keeps them all; both start in order as runs end', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const one = await create(keel, {
    cron: '* * * * *',
    overlap: 'buffer_one',
    template: { agent: 'blocker' },
  });
  const all = await create(keel, {
    cron: '* * * * *',
    overlap: 'buffer_all',
    template: { agent: 'blocker' },
  });
  for (const at of ['00:01', '00:02', '00:03']) await keel.tickAt(`2026-01-01T${at}:00Z`);
  assert.deepEqual(statuses(await keel.fires(one.id)), [
    '00:01 started',
    '00:02 buffered',
    '00:03 skipped',
  ]);
  assert.deepEqual(statuses(await keel.fires(all.id)), [
    '00:01 started',
    '00:02 buffered',
    '00:03 buffered',
  ]);

  for (let round = 0; round < 2; round++) {
    for (const s of [one, all]) {
      const active = (await keel.fires(s.id)).filter((f) => f.runId !== null).at(-1);
      await release(keel, active.runId);
      await keel.waitForRun(active.runId, ended);
    }
    await keel.tickAt(`2026-01-01T00:03:${10 + round * 10}Z`);
  }
  const oneFires = await keel.fires(one.id);
  assert.deepEqual(statuses(oneFires), ['00:01 started', '00:02 started', '00:03 skipped']);
  assert.ok(oneFires[1].detail.bufferedAt, 'a fire that waited says so');
  assert.deepEqual(statuses(await keel.fires(all.id)), [
    '00:01 started',
    '00:02 started',
    '00:03 started',
  ]);
});

test('cancel_other: the active run is cancelled with the normal cancellation, then the fire starts', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, {
    cron: '* * * * *',
    overlap: 'cancel_other',
    template: { agent: 'blocker' },
  });
  await keel.tickAt('2026-01-01T00:01:00Z');
  const [first] = await keel.fires(s.id);
  await keel.waitForRun(first.runId, (r) => r.status === 'waiting');
  await keel.tickAt('2026-01-01T00:02:00Z');
  assert.deepEqual(statuses(await keel.fires(s.id)), ['00:01 started', '00:02 cancelling_other']);
  const cancelled = await keel.waitForRun(first.runId, ended);
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.outcome, 'no_side_effects');
  const events = (await keel.request('GET', `/v1/runs/${first.runId}/events?format=json`)).body;
  assert.ok(
    events.some((e: any) => e.type === 'run.cancelling' && e.data.by === `schedule ${s.id}`),
    'cancelled through the normal cancel path',
  );
  await keel.tickAt('2026-01-01T00:02:05Z');
  const fires = await keel.fires(s.id);
  assert.deepEqual(statuses(fires), ['00:01 started', '00:02 cancelled_other']);
  assert.deepEqual(fires[1].detail.cancelledRunIds, [first.runId]);
  assert.notEqual(fires[1].runId, null);
});

test('changing the policy from buffer_all to cancel_other: the buffered fire is superseded, the active run cancelled', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, {
    cron: '* * * * *',
    overlap: 'buffer_all',
    template: { agent: 'blocker' },
  });
  await keel.tickAt('2026-01-01T00:01:00Z');
  await keel.tickAt('2026-01-01T00:02:00Z');
  assert.equal(
    (await keel.request('PATCH', `/v1/schedules/${s.id}`, { overlap: 'cancel_other' })).body
      .version,
    2,
  );
  await keel.tickAt('2026-01-01T00:03:00Z');
  const [first] = await keel.fires(s.id);
  assert.deepEqual(statuses(await keel.fires(s.id)), [
    '00:01 started',
    '00:02 skipped',
    '00:03 cancelling_other',
  ]);
  assert.equal((await keel.waitForRun(first.runId, ended)).status, 'cancelled');
  await keel.tickAt('2026-01-01T00:03:05Z');
  assert.deepEqual(statuses(await keel.fires(s.id)), [
    '00:01 started',
    '00:02 skipped',
    '00:03 cancelled_other',
  ]);
});

test('catch-up after an outage: fires inside the window run oldest first, older ones are recorded as missed', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, {
    cron: '* * * * *',
    overlap: 'allow',
    catchupWindowMs: 5 * 60_000,
  });
  await keel.tickAt('2026-01-01T00:01:00Z');
  // Keel is "down" from 00:01 to 00:20:30: no tick at all.
  await keel.tickAt('2026-01-01T00:20:30Z');
  const fires = await keel.fires(s.id);
  assert.equal(fires.length, 20);
  const missed = fires.filter((f) => f.status === 'missed');
  const started = fires.filter((f) => f.status === 'started');
  assert.deepEqual(
    missed.map((f) => f.logicalTime.slice(11, 16)),
    [
      '00:02',
      '00:03',
      '00:04',
      '00:05',
      '00:06',
      '00:07',
      '00:08',
      '00:09',
      '00:10',
      '00:11',
      '00:12',
      '00:13',
      '00:14',
      '00:15',
    ],
  );
  assert.deepEqual(
    started.map((f) => f.logicalTime.slice(11, 16)),
    ['00:01', '00:16', '00:17', '00:18', '00:19', '00:20'],
  );
  for (const f of missed) assert.equal(f.runId, null);
  const runs = (await keel.request('GET', '/v1/runs?limit=100')).body.runs;
  assert.equal(runs.length, 6, 'a missed fire never runs');
  // oldest first: run ids are time-ordered and the runs were created in logical order
  const byId = [...runs]
    .sort((a: any, b: any) => (a.id < b.id ? -1 : 1))
    .map((r: any) => r.metadata.schedule.logicalFireTime.slice(11, 16));
  assert.deepEqual(byId, ['00:01', '00:16', '00:17', '00:18', '00:19', '00:20']);
  assert.equal(
    (await keel.request('GET', `/v1/schedules/${s.id}/fires?status=missed`)).body.fires.length,
    14,
  );
  const events = (await keel.request('GET', `/v1/schedules/${s.id}/events?limit=1000`)).body
    .events as any[];
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_e, i) => i + 1),
    'gapless',
  );
  assert.equal(
    events.filter((e) => e.type === 'fire.missed').length,
    14,
    'each missed fire is an event too',
  );
  assert.deepEqual(
    events.filter((e) => e.type === 'fire.started').map((e) => e.data.logicalTime.slice(11, 16)),
    ['00:01', '00:16', '00:17', '00:18', '00:19', '00:20'],
  );
  assert.equal(
    (await keel.request('GET', `/v1/schedules/${s.id}/events?after=${events.length - 1}`)).body
      .events.length,
    1,
  );
  assert.equal(
    (await keel.request('GET', `/v1/schedules/${s.id}`)).body.nextFireAt,
    '2026-01-01T00:21:00.000Z',
  );
});

test('a long outage does not burst beyond the window (a daily schedule down for a month runs once)', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:00Z');
  const s = await create(keel, {
    cron: '0 9 * * *',
    timeZone: 'Europe/Berlin',
    overlap: 'allow',
    catchupWindowMs: 3 * 3600_000,
  });
  await keel.tickAt('2026-02-01T10:00:00Z');
  const fires = await keel.fires(s.id);
  assert.equal(fires.length, 32);
  assert.equal(fires.filter((f) => f.status === 'started').length, 1);
  assert.equal(fires.at(-1).logicalTime, '2026-02-01T08:00:00.000Z');
  assert.equal(fires.at(-1).status, 'started');
});

test('daylight saving through the API: a missing 02:30 fires at 03:00, a repeated 01:30 / 02:30 fires once (New York, Berlin)', async (t) => {
  const keel = await start(t, '2026-03-07T12:00:00Z');
  const ny = await create(keel, {
    cron: '30 2 * * *',
    timeZone: 'America/New_York',
    overlap: 'allow',
  });
  const berlin = await create(keel, {
    cron: '30 2 * * *',
    timeZone: 'Europe/Berlin',
    overlap: 'allow',
  });
  assert.equal(
    ny.nextFireAt,
    '2026-03-08T07:00:00.000Z',
    '02:30 EST does not exist on 8 March: 03:00 EDT',
  );
  await keel.tickAt('2026-03-08T07:00:00Z');
  await keel.tickAt('2026-03-09T07:00:00Z');
  assert.deepEqual(
    (await keel.fires(ny.id)).map((f) => f.logicalTime),
    ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
  );
  await keel.tickAt('2026-03-29T01:00:00Z');
  assert.ok(
    (await keel.fires(berlin.id)).some(
      (f) => f.logicalTime === '2026-03-29T01:00:00.000Z' && f.status === 'started',
    ),
    'Berlin 02:30 → 03:00 CEST',
  );

  // Autumn: move both schedules' cursors by editing their timing, then walk through the repeated
  // hour.
  await keel.tickAt('2026-10-24T12:00:00Z');
  const nyFall = await keel.request('PATCH', `/v1/schedules/${ny.id}`, { cron: '30 1 * * *' });
  assert.equal(nyFall.body.nextFireAt, '2026-10-25T05:30:00.000Z');
  for (const at of [
    '2026-10-25T00:30:00Z',
    '2026-10-25T01:30:00Z',
    '2026-11-01T05:30:00Z',
    '2026-11-01T06:30:00Z',
    '2026-11-01T07:00:00Z',
  ])
    await keel.tickAt(at);
  const berlinAutumn = (await keel.fires(berlin.id)).filter((f) =>
    f.logicalTime.startsWith('2026-10-25'),
  );
  assert.deepEqual(
    berlinAutumn.map((f) => f.logicalTime),
    ['2026-10-25T00:30:00.000Z'],
    'Berlin 02:30 occurs twice on 25 October: fires once, at 02:30 CEST',
  );
  const nyAutumn = (await keel.fires(ny.id)).filter((f) => f.logicalTime.startsWith('2026-11-01'));
  assert.deepEqual(
    nyAutumn.map((f) => f.logicalTime),
    ['2026-11-01T05:30:00.000Z'],
    'New York 01:30 occurs twice on 1 November: fires once, at 01:30 EDT',
  );
  assert.equal(
    (await keel.request('GET', `/v1/schedules/${ny.id}`)).body.nextFireAt,
    '2026-11-02T06:30:00.000Z',
  );
});

test('pause and resume: no fire while paused; on resume, fires missed meanwhile run within the window, older ones are missed', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, {
    cron: '* * * * *',
    overlap: 'allow',
    catchupWindowMs: 2 * 60_000,
  });
  await keel.tickAt('2026-01-01T00:01:00Z');
  const paused = await keel.request('POST', `/v1/schedules/${s.id}/pause`);
  assert.equal(paused.body.paused, true);
  await keel.tickAt('2026-01-01T00:05:00Z');
  assert.deepEqual(statuses(await keel.fires(s.id)), ['00:01 started']);
  keel.clock.set('2026-01-01T00:05:30Z');
  assert.equal((await keel.request('POST', `/v1/schedules/${s.id}/resume`)).body.paused, false);
  await keel.tickAt('2026-01-01T00:05:30Z');
  assert.deepEqual(statuses(await keel.fires(s.id)), [
    '00:01 started',
    '00:02 missed',
    '00:03 missed',
    '00:04 started',
    '00:05 started',
  ]);
});

test('backfill reruns missed fires of a past range, oldest first, and leaves fires that ran alone; trigger fires now', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, { cron: '* * * * *', overlap: 'allow', catchupWindowMs: 60_000 });
  await keel.tickAt('2026-01-01T00:01:00Z');
  await keel.tickAt('2026-01-01T00:04:30Z');
  assert.deepEqual(statuses(await keel.fires(s.id)), [
    '00:01 started',
    '00:02 missed',
    '00:03 missed',
    '00:04 started',
  ]);
  const backfill = await keel.request('POST', `/v1/schedules/${s.id}/backfill`, {
    from: '2026-01-01T00:01:00Z',
    to: '2026-01-01T00:04:00Z',
  });
  assert.equal(backfill.status, 202, JSON.stringify(backfill.body));
  assert.deepEqual(backfill.body.requested, [
    '2026-01-01T00:02:00.000Z',
    '2026-01-01T00:03:00.000Z',
  ]);
  assert.equal(backfill.body.fireTimes.length, 4);
  assert.deepEqual(statuses(await keel.fires(s.id)), [
    '00:01 started',
    '00:02 pending',
    '00:03 pending',
    '00:04 started',
  ]);
  const requested = (
    await keel.request('GET', `/v1/schedules/${s.id}/events?limit=1000`)
  ).body.events.filter((e: any) => e.type === 'fire.requested');
  assert.deepEqual(
    requested.map((e: any) => [e.data.logicalTime, e.data.kind]),
    [
      ['2026-01-01T00:02:00.000Z', 'backfill'],
      ['2026-01-01T00:03:00.000Z', 'backfill'],
    ],
  );
  await keel.tickAt('2026-01-01T00:04:40Z');
  const fires = await keel.fires(s.id);
  assert.deepEqual(statuses(fires), [
    '00:01 started',
    '00:02 started',
    '00:03 started',
    '00:04 started',
  ]);
  assert.equal(fires[1].kind, 'backfill');
  const again = await keel.request('POST', `/v1/schedules/${s.id}/backfill`, {
    from: '2026-01-01T00:01:00Z',
    to: '2026-01-01T00:04:00Z',
  });
  assert.deepEqual(again.body.requested, [], 'a fire that ran is never run again');

  const trigger = await keel.request('POST', `/v1/schedules/${s.id}/trigger`);
  assert.equal(trigger.status, 202);
  assert.equal(trigger.body.status, 'pending');
  await keel.tickAt('2026-01-01T00:04:50Z');
  const triggered = (await keel.fires(s.id)).find((f) => f.kind === 'trigger');
  assert.equal(triggered.status, 'started');
  const run = (await keel.request('GET', `/v1/runs/${triggered.runId}`)).body;
  assert.deepEqual(run.metadata.schedule, {
    id: s.id,
    version: 1,
    logicalFireTime: '2026-01-01T00:04:40.000Z',
    kind: 'trigger',
  });
});

test('an edit bumps the version; runs record the version they were created from and are never rewritten', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:30Z');
  const s = await create(keel, {
    cron: '* * * * *',
    overlap: 'allow',
    template: { agent: 'quick', input: { n: 1 }, metadata: { team: 'ops' } },
  });
  await keel.tickAt('2026-01-01T00:01:00Z');
  const edited = await keel.request('PATCH', `/v1/schedules/${s.id}`, {
    template: { agent: 'quick', input: { n: 2 } },
  });
  assert.equal(edited.status, 200, JSON.stringify(edited.body));
  assert.equal(edited.body.version, 2);
  await keel.tickAt('2026-01-01T00:02:00Z');
  const [a, b] = await keel.fires(s.id);
  const runA = await keel.waitForRun(a.runId, ended);
  const runB = await keel.waitForRun(b.runId, ended);
  assert.deepEqual(
    [runA.input, runA.metadata.schedule.version, runA.metadata.team],
    [{ n: 1 }, 1, 'ops'],
  );
  assert.deepEqual([runB.input, runB.metadata.schedule.version], [{ n: 2 }, 2]);
  assert.deepEqual([a.scheduleVersion, b.scheduleVersion], [1, 2]);
});

test('typed errors: bad cron, bad zone, missing zone, unknown agent, webhook off the allowlist, another tenant, bad cursor', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:00Z');
  const post = (body: Record<string, unknown>) =>
    keel.request('POST', '/v1/schedules', {
      timeZone: 'UTC',
      template: { agent: 'quick' },
      cron: '* * * * *',
      ...body,
    });
  assertError(await post({ cron: '61 * * * *' }), 400, 'invalid_cron');
  assertError(await post({ cron: 'every day' }), 400, 'invalid_cron');
  assertError(await post({ timeZone: 'Mars/Olympus' }), 400, 'invalid_time_zone');
  assertError(
    await keel.request('POST', '/v1/schedules', {
      cron: '* * * * *',
      template: { agent: 'quick' },
    }),
    400,
    'validation_failed',
  );
  assertError(await post({ cron: null, intervalMs: null }), 400, 'validation_failed');
  assertError(await post({ overlap: 'sometimes' }), 400, 'validation_failed');
  assertError(await post({ template: { agent: 'nobody' } }), 404, 'agent_not_found');
  assertError(
    await post({ webhookUrl: 'http://169.254.169.254/latest' }),
    400,
    'webhook_not_allowed',
  );
  assertError(await post({ webhookUrl: 'file:///etc/passwd' }), 400, 'webhook_not_allowed');
  assertError(await keel.request('GET', '/v1/schedules/sch_missing'), 404, 'schedule_not_found');
  assertError(
    await keel.request('POST', '/v1/schedules/sch_missing/trigger'),
    404,
    'schedule_not_found',
  );
  assertError(await keel.request('GET', '/v1/schedules?cursor=zzz'), 400, 'invalid_cursor');
  const s = await create(keel, { cron: '* * * * *' });
  assertError(
    await keel.request('POST', `/v1/schedules/${s.id}/backfill`, {
      from: '2026-01-01T00:00:00Z',
      to: '2027-01-01T00:00:00Z',
    }),
    400,
    'validation_failed',
  );
  assertError(
    await keel.request('POST', `/v1/schedules/${s.id}/backfill`, {
      from: '2025-01-01T00:00:00Z',
      to: '2026-01-01T00:00:00Z',
    }),
    400,
    'backfill_too_large',
  );

  const other = await keel.request('POST', '/v1/admin/tenants', { name: 'other' }, ADMIN_KEY);
  assertError(
    await keel.request('GET', `/v1/schedules/${s.id}`, undefined, other.body.apiKey),
    404,
    'schedule_not_found',
  );
  assertError(
    await keel.request('DELETE', `/v1/schedules/${s.id}`, undefined, other.body.apiKey),
    404,
    'schedule_not_found',
  );
  assert.equal(
    (await keel.request('GET', '/v1/schedules', undefined, other.body.apiKey)).body.schedules
      .length,
    0,
  );

  assert.equal((await keel.request('DELETE', `/v1/schedules/${s.id}`)).status, 204);
  assertError(await keel.request('GET', `/v1/schedules/${s.id}`), 404, 'schedule_not_found');
});

test('list schedules pages with a cursor; the OpenAPI document describes the schedule routes', async (t) => {
  const keel = await start(t, '2026-01-01T00:00:00Z');
  for (let i = 0; i < 5; i++) await create(keel, { cron: '0 * * * *', name: `s${i}` });
  const first = await keel.request('GET', '/v1/schedules?limit=3');
  assert.equal(first.body.schedules.length, 3);
  const second = await keel.request('GET', `/v1/schedules?limit=3&cursor=${first.body.nextCursor}`);
  assert.deepEqual(
    second.body.schedules.map((s: any) => s.name),
    ['s3', 's4'],
  );
  assert.equal(second.body.nextCursor, null);
  const openapi = await keel.request('GET', '/openapi.json');
  for (const path of [
    '/v1/schedules',
    '/v1/schedules/{id}/fires',
    '/v1/schedules/{id}/events',
    '/v1/schedules/{id}/backfill',
  ])
    assert.ok(openapi.body.paths[path], path);
});
