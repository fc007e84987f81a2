// The API's browser-facing hardening and its admin listener, on a real `keel dev` process:
// security headers on API answers and on the dashboard, CORS off by default and exact when
// KEEL_CORS_ORIGINS names origins, and KEEL_ADMIN_PORT moving the admin surface (/v1/admin/*,
// GET /metrics) off the public listener while the admin one serves everything.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startKeelProcess, type KeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/dev-agents.ts', import.meta.url));
const API_KEY = 'keel_hardening_test_key_0123456789';
const ADMIN_KEY = 'admin-key-for-hardening-0123456789';

async function startKeel(t: TestContext, env: Record<string, string>): Promise<KeelProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-hardening-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir,
    apiKey: API_KEY,
    env: { KEEL_ADMIN_KEY: ADMIN_KEY, ...env },
  });
  t.after(() => keel.kill('SIGKILL'));
  return keel;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

test('security headers on API answers and the dashboard; CORS is off by default', async (t) => {
  const keel = await startKeel(t, {});
  for (const path of ['/v1/runs', '/']) {
    const response = await fetch(`${keel.url}${path}`, {
      headers: { ...bearer(API_KEY), origin: 'https://evil.example' },
    });
    assert.equal(response.status, 200, path);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/, path);
    assert.match(csp, /script-src 'self'/, path);
    assert.match(csp, /frame-ancestors 'none'/, path);
    assert.doesNotMatch(csp, /upgrade-insecure-requests/, path);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
    assert.equal(response.headers.get('x-frame-options'), 'SAMEORIGIN', path);
    assert.equal(response.headers.get('strict-transport-security'), null, path);
    assert.equal(response.headers.get('access-control-allow-origin'), null, path);
    await response.body?.cancel();
  }
  // A preflight from another origin gets no permission either.
  const preflight = await fetch(`${keel.url}/v1/runs`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
  assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  await preflight.body?.cancel();
});

test('KEEL_CORS_ORIGINS allows exactly the named origins, without credentials', async (t) => {
  const keel = await startKeel(t, {
    KEEL_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
  });
  const preflight = await fetch(`${keel.url}/v1/runs`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, idempotency-key',
    },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example.com');
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/);
  assert.equal(preflight.headers.get('access-control-allow-credentials'), null);

  const allowed = await fetch(`${keel.url}/v1/runs`, {
    headers: { ...bearer(API_KEY), origin: 'http://localhost:5173' },
  });
  assert.equal(allowed.status, 200);
  assert.equal(allowed.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  assert.equal(allowed.headers.get('cross-origin-resource-policy'), 'cross-origin');
  await allowed.body?.cancel();

  const other = await fetch(`${keel.url}/v1/runs`, {
    headers: { ...bearer(API_KEY), origin: 'https://app.example.com.evil.example' },
  });
  assert.equal(other.headers.get('access-control-allow-origin'), null);
  await other.body?.cancel();
});

test('a bad KEEL_CORS_ORIGINS fails the start naming the variable', async (t) => {
  await assert.rejects(
    startKeel(t, { KEEL_CORS_ORIGINS: 'https://app.example.com/path' }),
    /KEEL_CORS_ORIGINS/,
  );
});

test('KEEL_ADMIN_PORT: the admin surface answers only on its own listener, which serves all', async (t) => {
  const adminPort = await freePort();
  const keel = await startKeel(t, { KEEL_ADMIN_PORT: String(adminPort) });
  const admin = `http://127.0.0.1:${adminPort}`;
  const get = (base: string, path: string, key: string) =>
    fetch(`${base}${path}`, { headers: bearer(key) });

  // Public listener: the admin routes do not exist; the tenant API does.
  for (const path of ['/v1/admin/tenants', '/metrics']) {
    const response = await get(keel.url, path, ADMIN_KEY);
    assert.equal(response.status, 404, path);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
  }
  assert.equal((await get(keel.url, '/v1/runs', API_KEY)).status, 200);

  // Admin listener: admin routes with the admin key, the tenant API and the dashboard too.
  const tenants = await get(admin, '/v1/admin/tenants', ADMIN_KEY);
  assert.equal(tenants.status, 200);
  await tenants.body?.cancel();
  const metrics = await get(admin, '/metrics', ADMIN_KEY);
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /keel_/);
  assert.equal((await get(admin, '/v1/admin/tenants', API_KEY)).status, 401);
  const runs = await get(admin, '/v1/runs', API_KEY);
  assert.equal(runs.status, 200);
  await runs.body?.cancel();
  const dashboard = await fetch(`${admin}/`);
  assert.equal(dashboard.status, 200);
  assert.match(dashboard.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  await dashboard.body?.cancel();
});

test('per-key request rate limits: a key past its requestsPerMinute gets 429 key_rate_limited with Retry-After; other keys are not held back', async (t) => {
  const keel = await startKeel(t, { KEEL_KEY_REQUESTS_PER_MINUTE: '4' });
  const call = (key: string) => fetch(`${keel.url}/v1/runs`, { headers: bearer(key) });
  const create = async (body: Record<string, unknown>) => {
    const response = await fetch(`${keel.url}/v1/keys`, {
      method: 'POST',
      headers: { ...bearer(API_KEY), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 201);
    return (await response.json()) as {
      key: { id: string; requestsPerMinute: number | null };
      secret: string;
    };
  };
  const tight = await create({ name: 'tight', scopes: ['read'], requestsPerMinute: 2 });
  assert.equal(tight.key.requestsPerMinute, 2);
  const plain = await create({ name: 'plain', scopes: ['read'] });
  assert.equal(plain.key.requestsPerMinute, null);

  // Its own limit: 2 requests, then refused before the route runs.
  const first = await call(tight.secret);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('x-ratelimit-limit'), '2');
  assert.equal(first.headers.get('x-ratelimit-remaining'), '1');
  await first.body?.cancel();
  assert.equal((await call(tight.secret)).status, 200);
  const refused = await call(tight.secret);
  assert.equal(refused.status, 429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  const body = (await refused.json()) as {
    error: { code: string; details: { limitPerMinute: number } };
  };
  assert.equal(body.error.code, 'key_rate_limited');
  assert.equal(body.error.details.limitPerMinute, 2);

  // A key without its own limit has the process default (4), counted apart from the others.
  for (let i = 0; i < 4; i++)
    assert.equal((await call(plain.secret)).status, 200, `request ${i + 1}`);
  assert.equal((await call(plain.secret)).status, 429);
  const listed = await fetch(`${keel.url}/v1/keys`, { headers: bearer(API_KEY) });
  assert.equal(listed.status, 200, 'the dev key (default 4) still has room: its own count');
  const keys = (
    (await listed.json()) as { keys: { name: string; requestsPerMinute: number | null }[] }
  ).keys;
  assert.deepEqual(
    keys.filter((k) => k.name !== 'default').map((k) => [k.name, k.requestsPerMinute]),
    [
      ['tight', 2],
      ['plain', null],
    ],
  );
  // Health and the platform admin are not counted.
  for (let i = 0; i < 6; i++) assert.equal((await fetch(`${keel.url}/healthz`)).status, 200);
});
