// Tenant quotas over real HTTP: the admin API (create with quotas, PATCH, list, bad input as 4xx
// with stable codes), `keel tenants create|update|list` against it, admission (429
// tenant_queue_full with Retry-After), and a queued run of a tenant at its concurrency cap
// explained by its waitingReason.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { runTenantsCommand } from '../src/cli/client/tenants-command.ts';
import { defineAgent } from '../src/index.ts';
import { assertError } from './support/assert-error.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';
import { captureCli } from './support/cli-capture.ts';
import { telemetry } from '../src/telemetry/telemetry.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { done: true };
  },
});

async function start(t: TestContext): Promise<TestKeel> {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  return keel;
}

test('admin API: create with quotas, change them, list; bad input is a 4xx with a stable code', async (t) => {
  const keel = await start(t);
  const created = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'acme', weight: 3, maxConcurrentRuns: 10, maxQueuedRuns: 100 },
    keel.adminKey,
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { tenant, apiKey } = created.body;
  assert.deepEqual(
    [tenant.name, tenant.weight, tenant.maxConcurrentRuns, tenant.maxQueuedRuns],
    ['acme', 3, 10, 100],
  );
  assert.match(apiKey, /\S{20,}/);

  const plain = await keel.request('POST', '/v1/admin/tenants', { name: 'plain' }, keel.adminKey);
  assert.deepEqual(
    [
      plain.body.tenant.weight,
      plain.body.tenant.maxConcurrentRuns,
      plain.body.tenant.maxQueuedRuns,
    ],
    [1, null, null],
  );

  const patched = await keel.request(
    'PATCH',
    `/v1/admin/tenants/${tenant.id}`,
    { weight: 5, maxConcurrentRuns: null },
    keel.adminKey,
  );
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.deepEqual(
    [
      patched.body.tenant.weight,
      patched.body.tenant.maxConcurrentRuns,
      patched.body.tenant.maxQueuedRuns,
    ],
    [5, null, 100],
  );

  const listed = await keel.request('GET', '/v1/admin/tenants', undefined, keel.adminKey);
  assert.equal(listed.status, 200);
  assert.deepEqual(
    listed.body.tenants.filter((x: any) => x.name !== 'test').map((x: any) => [x.name, x.weight]),
    [
      ['acme', 5],
      ['plain', 1],
    ],
  );

  for (const body of [
    { name: 'w0', weight: 0 },
    { name: 'wf', weight: 1.5 },
    { name: 'big', weight: 10_001 },
    { name: 'neg', maxQueuedRuns: -1 },
    { name: 'str', maxConcurrentRuns: '3' },
    { name: 'extra', color: 'red' },
    { name: '' },
  ]) {
    assertError(
      await keel.request('POST', '/v1/admin/tenants', body, keel.adminKey),
      400,
      'validation_failed',
    );
  }
  assertError(
    await keel.request('POST', '/v1/admin/tenants', { name: 'acme' }, keel.adminKey),
    409,
    'tenant_name_taken',
  );
  assertError(
    await keel.request('PATCH', `/v1/admin/tenants/${tenant.id}`, {}, keel.adminKey),
    400,
    'validation_failed',
  );
  assertError(
    await keel.request(
      'PATCH',
      `/v1/admin/tenants/${tenant.id}`,
      { weight: 'heavy' },
      keel.adminKey,
    ),
    400,
    'validation_failed',
  );
  assertError(
    await keel.request('PATCH', `/v1/admin/tenants/${tenant.id}`, 'not json', keel.adminKey),
    400,
    'invalid_json',
  );
  assertError(
    await keel.request('PATCH', '/v1/admin/tenants/ten_missing', { weight: 2 }, keel.adminKey),
    404,
    'tenant_not_found',
  );
  assertError(
    await keel.request('PATCH', `/v1/admin/tenants/${tenant.id}`, { weight: 2 }, apiKey),
    401,
    'unauthorized',
  );
  assertError(
    await keel.request('GET', '/v1/admin/tenants', undefined, keel.apiKey),
    401,
    'unauthorized',
  );
});

test('admission: over max queued runs POST /v1/runs answers 429 tenant_queue_full with Retry-After', async (t) => {
  const keel = await start(t);
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'tight', maxQueuedRuns: 2 },
    keel.adminKey,
  );
  const key = body.apiKey;
  // No worker claims: submitted runs stay queued whatever the timing.
  await keel.orchestrator.stop();
  for (let i = 0; i < 2; i++)
    assert.equal(
      (await keel.request('POST', '/v1/runs', { agent: 'quick', input: { i } }, key)).status,
      201,
    );
  const refused = await keel.request('POST', '/v1/runs', { agent: 'quick', input: { i: 2 } }, key);
  assertError(refused, 429, 'tenant_queue_full');
  assert.equal(refused.headers.get('retry-after'), '5');
  const rejected = (await telemetry.metrics.runAdmissionsRejected.get()).values.find(
    (v) => v.labels.tenant === body.tenant.id,
  );
  assert.deepEqual(
    [rejected?.labels.source, rejected?.labels.reason, rejected?.value],
    ['api', 'tenant_queue_full', 1],
    'counted in keel_run_admissions_rejected_total',
  );
  // Other tenants are not affected.
  assert.equal((await keel.request('POST', '/v1/runs', { agent: 'quick' })).status, 201);
  // Lifting the limit admits again.
  await keel.request(
    'PATCH',
    `/v1/admin/tenants/${body.tenant.id}`,
    { maxQueuedRuns: null },
    keel.adminKey,
  );
  assert.equal(
    (await keel.request('POST', '/v1/runs', { agent: 'quick', input: { i: 3 } }, key)).status,
    201,
  );
});

test('concurrency cap: a queued run of a tenant at its cap says why it waits, and runs once the cap frees', async (t) => {
  const keel = await start(t);
  const { body } = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'capped', maxConcurrentRuns: 1 },
    keel.adminKey,
  );
  const key = body.apiKey;
  await keel.orchestrator.stop();
  // Claim one run by hand and keep holding it, as a busy worker would.
  const first = await keel.request('POST', '/v1/runs', { agent: 'quick', input: { n: 1 } }, key);
  const [held] = await keel.store.claimRuns({
    owner: 'busy-worker',
    limit: 5,
    leaseMs: 60_000,
    served: ['quick@1'],
  });
  assert.equal(held?.id, first.body.id);
  const second = await keel.request('POST', '/v1/runs', { agent: 'quick', input: { n: 2 } }, key);
  const seen = await keel.request('GET', `/v1/runs/${second.body.id}`, undefined, key);
  assert.deepEqual(
    [seen.body.status, seen.body.waitingReason],
    ['queued', 'tenant_concurrency_cap'],
  );
  assert.deepEqual(
    await keel.store.claimRuns({
      owner: 'other-worker',
      limit: 5,
      leaseMs: 60_000,
      served: ['quick@1'],
    }),
    [],
  );
  // The held run is handed back; the cap frees and both runs finish.
  await keel.store.releaseLeases('busy-worker', [first.body.id]);
  keel.orchestrator.start();
  for (const id of [first.body.id, second.body.id]) {
    const deadline = Date.now() + 10_000;
    while ((await keel.store.getRun(id))?.status !== 'succeeded') {
      assert.ok(Date.now() < deadline, `run ${id} did not succeed`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
});

test('keel tenants create|update|list talk to the admin API with the admin key', async (t) => {
  const keel = await start(t);
  const cli = (...argv: string[]) =>
    captureCli(runTenantsCommand, { KEEL_URL: keel.url, KEEL_ADMIN_KEY: keel.adminKey }, argv);
  const created = await cli('create', 'acme', '--weight', '2', '--max-queued-runs', '50', '--json');
  assert.equal(created.code, 0, created.err);
  const { tenant, apiKey } = JSON.parse(created.out);
  assert.deepEqual([tenant.weight, tenant.maxConcurrentRuns, tenant.maxQueuedRuns], [2, null, 50]);
  // The key works for the tenant's API.
  assert.equal((await keel.request('GET', '/v1/runs', undefined, apiKey)).status, 200);
  const text = await cli('create', 'beta');
  assert.match(text.out, /api key\s+\S+/);

  const updated = await cli(
    'update',
    tenant.id,
    '--max-concurrent-runs',
    '4',
    '--max-queued-runs',
    'none',
  );
  assert.equal(updated.code, 0, updated.err);
  assert.match(updated.out, /max concurrent\s+4\nmax queued\s+unlimited/);

  const listed = await cli('list');
  assert.equal(listed.code, 0);
  assert.match(listed.out, new RegExp(`${tenant.id}\\s+acme\\s+2\\s+4\\s+unlimited`));
  assert.match(listed.out, /beta\s+1\s+unlimited\s+unlimited/);

  // Usage errors exit 2 before any request; API errors exit 1 with the stable code.
  assert.equal((await cli('update', tenant.id)).code, 2);
  assert.equal((await cli('create', 'x', '--weight', '0')).code, 2);
  assert.equal((await cli('create')).code, 2);
  assert.equal((await cli('frobnicate')).code, 2);
  const missing = await cli('update', 'ten_missing', '--weight', '3');
  assert.deepEqual([missing.code, /tenant_not_found/.test(missing.err)], [1, true]);
  const duplicate = await cli('create', 'acme');
  assert.deepEqual([duplicate.code, /tenant_name_taken/.test(duplicate.err)], [1, true]);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  assert.equal(
    await runTenantsCommand(['list'], { stdout, stderr, env: { KEEL_URL: keel.url } }),
    2,
  );
  assert.match(err, /KEEL_ADMIN_KEY/);
});
