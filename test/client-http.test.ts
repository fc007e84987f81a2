// keel/client over HTTP: the shared KeelRuns contract (test/support/keel-runs-suite.ts) against a
// real Keel (SQLite file, orchestrator, Fastify on port 0), reached through a real HTTP proxy that
// can cut event streams mid-flight; plus what only HTTP has: request ids, connection errors,
// schedules, the long-poll's bounds and its OpenAPI entry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createKeelClient,
  KeelApiError,
  KeelConnectionError,
  RESULT_WAIT_MAX_MS,
} from '../src/client/index.ts';
import { RESULT_WAIT_MAX_MS as SERVER_RESULT_WAIT_MAX_MS } from '../src/api/run-result-wait.ts';
import type { AgentDefinition } from '../src/sdk/types.ts';
import { keelRunsSuite, SUITE_AGENTS, type RunsHarness } from './support/keel-runs-suite.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';
import { startStreamCuttingProxy } from './support/stream-cutting-proxy.ts';
import { startSchedulesKeel } from './support/schedules-keel.ts';

async function httpHarness(agents: AgentDefinition[]): Promise<RunsHarness & { keel: TestKeel }> {
  const keel = await startKeel({ agents });
  const proxy = await startStreamCuttingProxy(keel.url);
  const created = await keel.request('POST', '/v1/keys', { name: 'reader', scopes: ['read'] });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const client = (apiKey: string) => createKeelClient({ baseUrl: proxy.url, apiKey }).runs;
  return {
    keel,
    runs: client(keel.apiKey),
    unknownKey: client('k_not_a_key_of_this_keel'),
    readOnly: client(created.body.secret),
    cutEventStreams: () => proxy.cutEventStreams(),
    resumedFrom: () =>
      proxy.eventRequests
        .filter((headers) => headers.accept === 'text/event-stream')
        .map((headers) => headers['last-event-id'] as string | undefined),
    async close() {
      await proxy.close();
      await keel.close();
    },
  };
}

keelRunsSuite('http', httpHarness);

test('http: an API error carries the request id the server logged it under', async (t) => {
  const harness = await httpHarness(SUITE_AGENTS);
  t.after(() => harness.close());
  const error = await harness.runs.get('run_missing').catch((e: unknown) => e);
  assert.ok(error instanceof KeelApiError);
  assert.match(error.requestId ?? '', /^[0-9a-f-]{36}$/);
});

test('http: no server is a KeelConnectionError, not an API error', async () => {
  const keel = await startKeel({ agents: SUITE_AGENTS });
  const url = keel.url;
  await keel.close();
  const error = await createKeelClient({ baseUrl: url, apiKey: 'k' })
    .runs.get('run_x')
    .catch((e: unknown) => e);
  assert.ok(error instanceof KeelConnectionError, String(error));
  assert.equal(error.code, 'connection_failed');
});

test('http: the long-poll is bounded and documented', async (t) => {
  const harness = await httpHarness(SUITE_AGENTS);
  t.after(() => harness.close());
  assert.equal(
    RESULT_WAIT_MAX_MS,
    SERVER_RESULT_WAIT_MAX_MS,
    'client and server agree on the bound',
  );
  const run = await harness.runs.create({ agent: 'asker' });
  const tooLong = await harness.keel.request(
    'GET',
    `/v1/runs/${run.id}/result?waitMs=${SERVER_RESULT_WAIT_MAX_MS + 1}`,
  );
  assert.equal(tooLong.status, 400);
  assert.equal(tooLong.body.error.code, 'validation_failed');
  const now = await harness.keel.request('GET', `/v1/runs/${run.id}/result`);
  assert.equal(now.status, 202, 'not ended: 202 with the run');
  assert.equal(now.body.id, run.id);
  const doc = (await harness.keel.request('GET', '/openapi.json')).body;
  const result = doc.paths['/v1/runs/{id}/result'].get;
  assert.ok(result.responses['200'] && result.responses['202'] && result.responses['403']);
  assert.ok(doc.paths['/v1/runs'].post.parameters.some((p: { name: string }) => p.name === 'wait'));
});

test('http: schedules are created, read, edited, paused, fired and deleted', async (t) => {
  const keel = await startSchedulesKeel({ agents: SUITE_AGENTS, start: '2026-01-01T00:00:30Z' });
  t.after(() => keel.close());
  const { schedules, runs } = createKeelClient({ baseUrl: keel.url, apiKey: keel.apiKey });
  const created = await schedules.create({
    name: 'nightly',
    cron: '0 3 * * *',
    timeZone: 'Europe/Berlin',
    template: { agent: 'echo', input: { from: 'schedule' } },
  });
  assert.equal((await schedules.get(created.id)).name, 'nightly');
  const edited = await schedules.update(created.id, { name: 'early' });
  assert.equal(edited.name, 'early');
  assert.equal(edited.version, created.version + 1);
  assert.deepEqual(
    (await schedules.list()).schedules.map((s) => s.id),
    [created.id],
  );
  assert.equal((await schedules.pause(created.id)).paused, true);
  assert.equal((await schedules.resume(created.id)).paused, false);
  const fire = await schedules.trigger(created.id);
  assert.equal(fire.scheduleId, created.id);
  await keel.tickAt('2026-01-01T00:00:31Z'); // the scheduler's loop is the test's to turn
  const history = await schedules.fires(created.id);
  assert.equal(history.fires.length, 1);
  assert.equal(history.fires[0]!.status, 'started');
  assert.equal((await runs.wait(history.fires[0]!.runId!)).status, 'succeeded');
  await schedules.delete(created.id);
  const gone = await schedules.get(created.id).catch((e: unknown) => e);
  assert.ok(gone instanceof KeelApiError);
  assert.equal(gone.code, 'schedule_not_found');
});
