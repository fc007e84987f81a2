// Failure notifications: a failed scheduled run is reported once to the schedule's webhook (a real
// HTTP server in the test), retried with backoff after a 500 with the same Idempotency-Key, never
// sent for a successful run, and only to origins on the tenant's allowlist (checked when the
// schedule is written and again at delivery).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { test, type TestContext } from 'node:test';
import { assertError } from './support/assert-error.ts';
import { scheduleAgents } from './fixtures/schedule-agents.ts';
import { ADMIN_KEY, startSchedulesKeel, type SchedulesKeel } from './support/schedules-keel.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * A webhook receiver answering each request with the next status of `statuses` (the last one
 * repeats).
 */
async function receiver(
  t: TestContext,
  statuses: number[],
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(text) });
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)]!;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, received };
}

async function tenantId(keel: SchedulesKeel): Promise<string> {
  const run = await keel.request('POST', '/v1/runs', { agent: 'quick' });
  return run.body.tenantId;
}

test('a failed run is notified once: retried after a 500 with backoff, same idempotency key, then delivered', async (t) => {
  const keel = await startSchedulesKeel({ agents: scheduleAgents, start: '2026-01-01T00:00:30Z' });
  t.after(() => keel.close());
  const hook = await receiver(t, [500, 200]);
  const tenant = await tenantId(keel);
  assertError(
    await keel.request('POST', '/v1/schedules', {
      cron: '* * * * *',
      timeZone: 'UTC',
      template: { agent: 'failer' },
      webhookUrl: `${hook.url}/hook`,
    }),
    400,
    'webhook_not_allowed',
  );
  const set = await keel.request(
    'PUT',
    `/v1/admin/tenants/${tenant}/webhook-allowlist`,
    { origins: [hook.url] },
    ADMIN_KEY,
  );
  assert.deepEqual(set.body.origins, [hook.url]);
  assertError(
    await keel.request('PUT', `/v1/admin/tenants/${tenant}/webhook-allowlist`, {
      origins: [hook.url],
    }),
    401,
    'unauthorized',
  );

  const s = (
    await keel.request('POST', '/v1/schedules', {
      name: 'nightly report',
      cron: '* * * * *',
      timeZone: 'UTC',
      template: { agent: 'failer' },
      webhookUrl: `${hook.url}/hook`,
    })
  ).body;
  await keel.tickAt('2026-01-01T00:01:00Z');
  const [fire] = await keel.fires(s.id);
  await keel.waitForRun(fire.runId, (r) => r.status === 'failed');
  await keel.tickAt('2026-01-01T00:01:05Z'); // observes the failure, queues the notification, first attempt: 500
  assert.equal(hook.received.length, 1);
  await keel.tickAt('2026-01-01T00:01:05.400Z'); // backoff after attempt 1 is 0.5–1 s: not due yet
  assert.equal(hook.received.length, 1);
  await keel.tickAt('2026-01-01T00:01:07Z');
  assert.equal(hook.received.length, 2, 'retried after the 500');
  for (const at of ['2026-01-01T00:01:30Z', '2026-01-01T00:01:50Z']) await keel.tickAt(at);
  assert.equal(hook.received.length, 2, 'delivered once: no more attempts after the 200');

  const [first, second] = hook.received;
  assert.equal(first!.headers['idempotency-key'], second!.headers['idempotency-key']);
  assert.deepEqual(first!.body, second!.body);
  const n = second!.body;
  assert.equal(n.type, 'schedule.run_failed');
  assert.deepEqual(n.schedule, { id: s.id, name: 'nightly report', version: 1, timeZone: 'UTC' });
  assert.deepEqual(n.fire, { logicalTime: '2026-01-01T00:01:00.000Z', kind: 'scheduled' });
  assert.equal(n.run.id, fire.runId);
  assert.deepEqual(n.failedStage, { kind: 'step', name: 'fetch-report', seq: n.failedStage.seq });
  assert.equal(n.error.code, 'step_failed');
  assert.equal(n.attempts.run, 1);
  assert.equal(n.lastSuccessAt, null);
  assert.equal(n.nextFireAt, '2026-01-01T00:02:00.000Z');
  const stored = await keel.plane.store.listNotifications(s.id);
  assert.deepEqual(
    stored.map((x) => [x.status, x.attempts]),
    [['delivered', 2]],
  );
});

test('no notification for a successful run, nor to an origin removed from the allowlist after the schedule was written', async (t) => {
  const keel = await startSchedulesKeel({ agents: scheduleAgents, start: '2026-01-01T00:00:30Z' });
  t.after(() => keel.close());
  const hook = await receiver(t, [200]);
  const tenant = await tenantId(keel);
  await keel.request(
    'PUT',
    `/v1/admin/tenants/${tenant}/webhook-allowlist`,
    { origins: [hook.url] },
    ADMIN_KEY,
  );
  const ok = (
    await keel.request('POST', '/v1/schedules', {
      cron: '* * * * *',
      timeZone: 'UTC',
      template: { agent: 'quick' },
      webhookUrl: hook.url,
    })
  ).body;
  const bad = (
    await keel.request('POST', '/v1/schedules', {
      cron: '* * * * *',
      timeZone: 'UTC',
      template: { agent: 'failer' },
      webhookUrl: hook.url,
    })
  ).body;
  await keel.tickAt('2026-01-01T00:01:00Z');
  for (const s of [ok, bad])
    await keel.waitForRun(
      (await keel.fires(s.id))[0].runId,
      (r) => r.status === 'succeeded' || r.status === 'failed',
    );
  await keel.request(
    'PUT',
    `/v1/admin/tenants/${tenant}/webhook-allowlist`,
    { origins: [] },
    ADMIN_KEY,
  );
  await keel.tickAt('2026-01-01T00:01:10Z');
  await keel.tickAt('2026-01-01T00:05:00Z');
  assert.equal(hook.received.length, 0);
  assert.deepEqual(
    (await keel.plane.store.listNotifications(ok.id)).length,
    0,
    'a successful run is not notified',
  );
  const [refused] = await keel.plane.store.listNotifications(bad.id);
  assert.equal(refused!.status, 'failed');
  assert.match(refused!.lastError!, /webhook_not_allowed/);
  assert.equal(
    (await keel.request('GET', `/v1/schedules/${ok.id}`)).body.lastSuccessAt !== null,
    true,
    'the success is recorded',
  );
});
