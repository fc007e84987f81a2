// Authentication and tenancy over real HTTP: bearer keys per tenant, admin routes behind
// KEEL_ADMIN_KEY (and gone without it), keys stored only as hashes, and one tenant's runs invisible
// to another on every route.
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test, type TestContext } from 'node:test';
import { generateApiKey, hashApiKey } from '../src/api/auth.ts';
import { buildApi } from '../src/api/server.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { defineAgent } from '../src/index.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { assertError } from './support/assert-error.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { done: true };
  },
});
const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('answer');
  },
});

async function start(t: TestContext): Promise<TestKeel> {
  const keel = await startKeel({ agents: [quick, waiter] });
  t.after(() => keel.close());
  return keel;
}

async function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

async function createTenant(keel: TestKeel, name: string): Promise<{ id: string; apiKey: string }> {
  const res = await keel.request('POST', '/v1/admin/tenants', { name }, keel.adminKey);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.tenant.id, apiKey: res.body.apiKey };
}

/**
 * A Keel API without an admin key: the harness always configures one, so this builds the API itself
 * (no orchestrator is needed to exercise routing and auth).
 */
async function startWithoutAdminKey(t: TestContext): Promise<{ url: string; apiKey: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-test-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const registry = new AgentRegistry();
  registry.register(quick);
  const apiKey = generateApiKey();
  await store.ensureTenant('test', hashApiKey(apiKey));
  const app = await buildApi({ store, registry, adminKey: undefined });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { url, apiKey };
}

test('tenant routes: a missing, malformed or unknown key is 401 unauthorized', async (t) => {
  const keel = await start(t);
  const run = await keel.request('POST', '/v1/runs', { agent: 'quick' });
  assert.equal(run.status, 201);
  const headers: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['an unknown key', { authorization: `Bearer ${generateApiKey()}` }],
    [
      'the key with one character changed',
      {
        authorization: `Bearer ${keel.apiKey.slice(0, -1)}${keel.apiKey.endsWith('A') ? 'B' : 'A'}`,
      },
    ],
    ['the admin key', { authorization: `Bearer ${keel.adminKey}` }],
    [
      'Basic auth',
      { authorization: `Basic ${Buffer.from(`x:${keel.apiKey}`).toString('base64')}` },
    ],
    ['the bare key without a scheme', { authorization: keel.apiKey }],
    ['Bearer without a token', { authorization: 'Bearer' }],
    ['Bearer with two tokens', { authorization: `Bearer ${keel.apiKey} ${keel.apiKey}` }],
    ['an empty header', { authorization: '' }],
  ];
  const paths = [
    '/v1/runs',
    `/v1/runs/${run.body.id}`,
    `/v1/runs/${run.body.id}/steps`,
    `/v1/runs/${run.body.id}/events?format=json`,
    `/v1/runs/${run.body.id}/events`,
    '/v1/runs/run_unknown',
    '/v1/no-such-route',
  ];
  for (const [name, h] of headers) {
    await t.test(name, async () => {
      for (const path of paths) assertError(await get(keel.url + path, h), 401, 'unauthorized');
      const post = await fetch(`${keel.url}/v1/runs`, {
        method: 'POST',
        headers: { ...h, 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'quick' }),
      });
      assertError({ status: post.status, body: await post.json() }, 401, 'unauthorized');
      const cancel = await fetch(`${keel.url}/v1/runs/${run.body.id}/cancel`, {
        method: 'POST',
        headers: h,
      });
      assertError({ status: cancel.status, body: await cancel.json() }, 401, 'unauthorized');
    });
  }
  await t.test('the scheme is case-insensitive', async () => {
    assert.equal(
      (await get(`${keel.url}/v1/runs`, { authorization: `bearer ${keel.apiKey}` })).status,
      200,
    );
  });
  await t.test('an unauthorised request created nothing', async () => {
    const list = await keel.request('GET', '/v1/runs');
    assert.deepEqual(
      list.body.runs.map((r: { id: string }) => r.id),
      [run.body.id],
    );
  });
});

test('public routes need no key', async (t) => {
  const keel = await start(t);
  for (const path of ['/healthz', '/readyz', '/openapi.json'])
    assert.equal((await get(keel.url + path, {})).status, 200, path);
});

test('admin routes: without KEEL_ADMIN_KEY they are 404 admin_disabled, whatever the caller sends', async (t) => {
  const { url, apiKey } = await startWithoutAdminKey(t);
  for (const authorization of [
    undefined,
    `Bearer ${apiKey}`,
    'Bearer admin-key-for-tests-0123456789',
    'Bearer ',
  ]) {
    const res = await fetch(`${url}/v1/admin/tenants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ name: 'acme' }),
    });
    assertError({ status: res.status, body: await res.json() }, 404, 'admin_disabled');
  }
  // Tenant routes are unaffected.
  assert.equal((await get(`${url}/v1/runs`, { authorization: `Bearer ${apiKey}` })).status, 200);
});

test('admin routes: a missing or wrong admin key is 401 unauthorized, and a tenant key is not an admin key', async (t) => {
  const keel = await start(t);
  for (const key of [
    null,
    'wrong-admin-key-0123456789',
    `${keel.adminKey}x`,
    keel.adminKey.slice(0, -1),
    keel.apiKey,
  ]) {
    assertError(
      await keel.request('POST', '/v1/admin/tenants', { name: 'acme' }, key),
      401,
      'unauthorized',
    );
  }
  // None of them created the tenant: the name is still free.
  await createTenant(keel, 'acme');
});

test('admin routes authenticate before they parse or validate: an unauthenticated caller learns nothing', async (t) => {
  const keel = await start(t);
  const { url } = await startWithoutAdminKey(t);
  for (const body of [
    {},
    { name: '' },
    { name: 'a b' },
    { name: 'acme', extra: 1 },
    '{"name":',
    'x'.repeat(2 * 1024 * 1024),
  ]) {
    assertError(await keel.request('POST', '/v1/admin/tenants', body, null), 401, 'unauthorized');
    assertError(
      await keel.request('POST', '/v1/admin/tenants', body, 'wrong-admin-key-0123456789'),
      401,
      'unauthorized',
    );
    const disabled = await fetch(`${url}/v1/admin/tenants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    assertError({ status: disabled.status, body: await disabled.json() }, 404, 'admin_disabled');
  }
});

test('POST /v1/admin/tenants creates a tenant and returns its key once; the key works at once', async (t) => {
  const keel = await start(t);
  const res = await keel.request('POST', '/v1/admin/tenants', { name: 'acme' }, keel.adminKey);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.tenant.name, 'acme');
  assert.match(res.body.tenant.id, /^ten_/);
  assert.match(res.body.apiKey, /^keel_[A-Za-z0-9_-]{20,}$/);
  assert.deepEqual(Object.keys(res.body).sort(), ['apiKey', 'tenant']);

  const run = await keel.request('POST', '/v1/runs', { agent: 'quick' }, res.body.apiKey);
  assert.equal(run.status, 201, JSON.stringify(run.body));
  assert.equal(run.body.tenantId, res.body.tenant.id);
  const list = await keel.request('GET', '/v1/runs', undefined, res.body.apiKey);
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.runs.map((r: { id: string }) => r.id),
    [run.body.id],
  );

  // A second tenant gets a different key; nothing hands the first key out again.
  const other = await createTenant(keel, 'globex');
  assert.notEqual(other.apiKey, res.body.apiKey);
  assert.notEqual(other.id, res.body.tenant.id);
});

test('tenant names: a duplicate is 409 tenant_name_taken, a malformed name 400 validation_failed', async (t) => {
  const keel = await start(t);
  const first = await createTenant(keel, 'acme');
  assertError(
    await keel.request('POST', '/v1/admin/tenants', { name: 'acme' }, keel.adminKey),
    409,
    'tenant_name_taken',
  );
  // The harness's own tenant is called 'test'.
  assertError(
    await keel.request('POST', '/v1/admin/tenants', { name: 'test' }, keel.adminKey),
    409,
    'tenant_name_taken',
  );
  // Names are compared exactly: another case is another tenant.
  assert.equal(
    (await keel.request('POST', '/v1/admin/tenants', { name: 'ACME' }, keel.adminKey)).status,
    201,
  );
  for (const body of [
    {},
    { name: '' },
    { name: 'has space' },
    { name: '-leading-dash' },
    { name: 'x'.repeat(101) },
    { name: 5 },
    { name: 'ok', plan: 'pro' },
  ]) {
    assertError(
      await keel.request('POST', '/v1/admin/tenants', body, keel.adminKey),
      400,
      'validation_failed',
    );
  }
  // The refused duplicate did not disturb the first tenant's key.
  assert.equal((await keel.request('GET', '/v1/runs', undefined, first.apiKey)).status, 200);
});

test('API keys are stored only as SHA-256 hashes: no plaintext key is in the database', async (t) => {
  const keel = await start(t);
  const tenant = await createTenant(keel, 'acme');
  assert.equal(
    (await keel.request('POST', '/v1/runs', { agent: 'quick' }, tenant.apiKey)).status,
    201,
  );

  const db = new DatabaseSync(join(keel.dir, 'keel.db'), { readOnly: true });
  let rows: Array<Record<string, unknown>>;
  try {
    rows = db.prepare('SELECT * FROM api_keys').all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
  assert.equal(rows.length, 2, 'the harness tenant key and the new one');
  const cells = rows.flatMap((row) => Object.values(row).map(String));
  for (const key of [tenant.apiKey, keel.apiKey]) {
    assert.ok(!cells.some((cell) => cell.includes(key)), 'a plaintext key is in api_keys');
    assert.ok(
      rows.some((row) => row.key_hash === hashApiKey(key)),
      'the key is stored as its SHA-256 hash',
    );
  }
  for (const row of rows) assert.match(String(row.key_hash), /^[0-9a-f]{64}$/);

  // Nowhere else either: not in any table, not in the write-ahead log.
  for (const file of ['keel.db', 'keel.db-wal']) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(keel.dir, file));
    } catch {
      continue;
    }
    for (const key of [tenant.apiKey, keel.apiKey])
      assert.equal(bytes.indexOf(key), -1, `plaintext key found in ${file}`);
  }
});

test('tenant isolation: another tenant’s run is 404 run_not_found on every route and absent from lists', async (t) => {
  const keel = await start(t);
  const b = await createTenant(keel, 'tenant-b');
  const waiting = await keel.request('POST', '/v1/runs', {
    agent: 'waiter',
    idempotencyKey: 'shared-key',
  });
  const done = await keel.request('POST', '/v1/runs', { agent: 'quick' });
  assert.equal(waiting.status, 201);
  assert.equal(done.status, 201);
  await keel.waitForRun(waiting.body.id, (r) => r.status === 'waiting');
  await keel.waitForRun(done.body.id, (r) => r.status === 'succeeded');
  const bKey = { authorization: `Bearer ${b.apiKey}` };

  for (const id of [waiting.body.id, done.body.id]) {
    await t.test(`tenant B on A's run ${id}`, async () => {
      assertError(
        await keel.request('GET', `/v1/runs/${id}`, undefined, b.apiKey),
        404,
        'run_not_found',
      );
      assertError(
        await keel.request('POST', `/v1/runs/${id}/cancel`, undefined, b.apiKey),
        404,
        'run_not_found',
      );
      assertError(
        await keel.request(
          'POST',
          `/v1/runs/${id}/input`,
          { key: 'answer', value: 'from B' },
          b.apiKey,
        ),
        404,
        'run_not_found',
      );
      assertError(
        await keel.request('GET', `/v1/runs/${id}/steps`, undefined, b.apiKey),
        404,
        'run_not_found',
      );
      assertError(
        await get(`${keel.url}/v1/runs/${id}/events?format=json`, bKey),
        404,
        'run_not_found',
      );
      assertError(await get(`${keel.url}/v1/runs/${id}/events`, bKey), 404, 'run_not_found');
      assertError(
        await get(`${keel.url}/v1/runs/${id}/events?format=sse`, {
          ...bKey,
          accept: 'text/event-stream',
        }),
        404,
        'run_not_found',
      );
      assertError(
        await get(`${keel.url}/v1/runs/${id}/events?format=sse&after=0`, {
          ...bKey,
          'last-event-id': '1',
        }),
        404,
        'run_not_found',
      );
    });
  }

  await t.test("B's attempts left A's runs untouched", async () => {
    const run = await keel.request('GET', `/v1/runs/${waiting.body.id}`);
    assert.equal(run.body.status, 'waiting');
    const events = await keel.request('GET', `/v1/runs/${waiting.body.id}/events?format=json`);
    assert.ok(
      !events.body.some(
        (e: { type: string }) => e.type === 'input.received' || e.type === 'run.cancelling',
      ),
      JSON.stringify(events.body),
    );
  });

  await t.test(
    "B's list, with or without filters and with a cursor from A, never shows A's runs",
    async () => {
      const own = await keel.request('POST', '/v1/runs', { agent: 'quick' }, b.apiKey);
      assert.equal(own.status, 201);
      const aList = await keel.request('GET', '/v1/runs?limit=1');
      assert.ok(aList.body.nextCursor, 'A has a second page');
      for (const query of [
        '',
        '?agent=waiter',
        '?status=waiting',
        '?agent=quick',
        '?limit=200',
        `?cursor=${aList.body.nextCursor}`,
      ]) {
        const list = await keel.request('GET', `/v1/runs${query}`, undefined, b.apiKey);
        assert.equal(list.status, 200, query);
        for (const r of list.body.runs)
          assert.equal(r.tenantId, b.id, `${query}: ${r.id} belongs to another tenant`);
        assert.ok(
          !list.body.runs.some(
            (r: { id: string }) => r.id === waiting.body.id || r.id === done.body.id,
          ),
          query,
        );
      }
      const all = await keel.request('GET', '/v1/runs', undefined, b.apiKey);
      assert.deepEqual(
        all.body.runs.map((r: { id: string }) => r.id),
        [own.body.id],
      );
    },
  );

  await t.test("B's idempotency key space is its own", async () => {
    const mine = await keel.request(
      'POST',
      '/v1/runs',
      { agent: 'waiter', idempotencyKey: 'shared-key' },
      b.apiKey,
    );
    assert.equal(mine.status, 201, JSON.stringify(mine.body));
    assert.notEqual(mine.body.id, waiting.body.id);
    assert.equal(mine.body.tenantId, b.id);
  });
});

test('egress lists: a tenant’s set and lifted over the admin API, a run’s given at creation; both validated and shown', async (t) => {
  const keel = await start(t);
  const tenant = await createTenant(keel, 'egress-lists');
  const list = [{ host: '*.pkg.example.org', port: 443 }];
  const patched = await keel.request(
    'PATCH',
    `/v1/admin/tenants/${tenant.id}`,
    { egressAllow: list },
    keel.adminKey,
  );
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.deepEqual(patched.body.tenant.egressAllow, list);
  const bad = await keel.request(
    'PATCH',
    `/v1/admin/tenants/${tenant.id}`,
    { egressAllow: [{ host: 'a b', port: 0 }] },
    keel.adminKey,
  );
  assert.equal(bad.status, 400);
  const lifted = await keel.request(
    'PATCH',
    `/v1/admin/tenants/${tenant.id}`,
    { egressAllow: null },
    keel.adminKey,
  );
  assert.equal(lifted.body.tenant.egressAllow, null);
  const created = await keel.request(
    'POST',
    '/v1/runs',
    { agent: 'quick', egressAllow: [{ host: '127.0.0.1', port: 8080 }] },
    tenant.apiKey,
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(created.body.egressAllow, [{ host: '127.0.0.1', port: 8080 }]);
  const shown = await get(`${keel.url}/v1/runs/${created.body.id}`, {
    authorization: `Bearer ${tenant.apiKey}`,
  });
  assert.deepEqual(shown.body.egressAllow, [{ host: '127.0.0.1', port: 8080 }]);
  const refused = await keel.request(
    'POST',
    '/v1/runs',
    {
      agent: 'quick',
      egressAllow: [{ host: '127.0.0.1', port: 8080, inject: { secret: 'secret:X' } }],
    },
    tenant.apiKey,
  );
  assert.equal(refused.status, 400, 'a run list carries no credential');
  const plain = await keel.request('POST', '/v1/runs', { agent: 'quick' }, tenant.apiKey);
  assert.equal(plain.body.egressAllow, null);
});
