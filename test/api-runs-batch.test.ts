// POST /v1/runs:batch over real HTTP on the SQLite store: one result per item in order (created,
// existing for a replayed idempotency key, a typed error per bad item), the batch limit, scopes,
// and that one bad item never fails the others. The Postgres side runs in test/tenant-events.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { startKeel } from './support/keel-server.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run(_ctx, input: { n?: number } | null) {
    return { n: input?.n ?? 0 };
  },
});

test('a batch answers each item in order: created, existing, and typed errors', async (t) => {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  const first = await keel.request('POST', '/v1/runs', {
    agent: 'quick',
    input: { n: 1 },
    idempotencyKey: 'k-1',
  });
  assert.equal(first.status, 201);
  const res = await keel.request('POST', '/v1/runs:batch', {
    runs: [
      { agent: 'quick', input: { n: 1 }, idempotencyKey: 'k-1' },
      { agent: 'quick', input: { n: 2 } },
      { agent: 'nope' },
      { agent: 'quick', input: { n: 3 }, idempotencyKey: 'k-1' },
      { agent: 'quick', bogus: true },
      'not an object',
      { agent: 'quick', input: { n: 4 }, idempotencyKey: 'k-2' },
      { agent: 'quick', input: { n: 4 }, idempotencyKey: 'k-2' },
    ],
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const results = res.body.results as any[];
  assert.deepEqual(
    results.map((r) => [r.index, r.status, r.error?.code ?? null]),
    [
      [0, 'existing', null],
      [1, 'created', null],
      [2, 'error', 'agent_not_found'],
      [3, 'error', 'idempotency_conflict'],
      [4, 'error', 'validation_failed'],
      [5, 'error', 'validation_failed'],
      [6, 'created', null],
      [7, 'existing', null],
    ],
  );
  assert.equal(results[0].run.id, first.body.id);
  assert.equal(results[7].run.id, results[6].run.id);
  const done = await keel.waitForRun(results[1].run.id, (r) => r.status === 'succeeded');
  assert.deepEqual(done.result, { n: 2 });
});

test('a batch past KEEL_BATCH_RUNS_MAX, an empty one and a body without runs are 400', async (t) => {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  const many = Array.from({ length: 1_001 }, () => ({ agent: 'quick' }));
  const tooMany = await keel.request('POST', '/v1/runs:batch', { runs: many });
  assert.equal(tooMany.status, 400);
  assert.equal(tooMany.body.error.code, 'batch_too_large');
  const none = await keel.request('POST', '/v1/runs:batch', { runs: [] });
  assert.equal(none.status, 400);
  assert.equal(none.body.error.code, 'validation_failed');
  for (const body of [{}, { runs: 'x' }, { runs: [], extra: 1 }, []]) {
    const bad = await keel.request('POST', '/v1/runs:batch', body);
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.equal(bad.body.error.code, 'validation_failed');
  }
  const noKey = await keel.request('POST', '/v1/runs:batch', { runs: [{ agent: 'quick' }] }, null);
  assert.equal(noKey.status, 401);
  const runs = await keel.request('GET', '/v1/runs?limit=5');
  assert.equal(runs.body.runs.length, 0, 'no refused batch created a run');
});

test('a read-only key cannot submit a batch (403 forbidden_scope)', async (t) => {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  const created = await keel.request('POST', '/v1/keys', { name: 'reader', scopes: ['read'] });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const res = await keel.request(
    'POST',
    '/v1/runs:batch',
    { runs: [{ agent: 'quick' }] },
    created.body.secret,
  );
  assert.equal(res.status, 403);
  assert.equal(res.body.error.code, 'forbidden_scope');
});

test('a tenant queue cap admits the batch in order and refuses the rest per item', async (t) => {
  const keel = await startKeel({ agents: [quick], orchestrator: { pollIntervalMs: 60_000 } });
  t.after(() => keel.close());
  await keel.orchestrator.stop();
  const tenant = (await keel.store.listTenants())[0]!;
  await keel.store.updateTenant(tenant.id, { maxQueuedRuns: 2 });
  const res = await keel.request('POST', '/v1/runs:batch', {
    runs: [1, 2, 3, 4].map((n) => ({ agent: 'quick', input: { n } })),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(
    res.body.results.map((r: any) => r.error?.code ?? r.status),
    ['created', 'created', 'tenant_queue_full', 'tenant_queue_full'],
  );
});
