// Scoped API keys over real HTTP, on SQLite and on Postgres: every route of the tenant API,
// enumerated from the OpenAPI document (a new route cannot be forgotten), called with a key of each
// scope and with a key of another tenant — 403 forbidden_scope for a missing scope, 404 for another
// tenant's resources, never a 500; and with a run's delegated token — 403 delegated_forbidden off
// the few routes it may call, 404 for another tenant's run. Then: revocation and expiry take effect
// at once, rotation with overlap under a load of requests sees no error, and a key's last use is
// stamped once a minute.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { ROUTE_SCOPES } from '../src/api/route-scopes.ts';
import { SCOPES } from '../src/domain/access.ts';
import { DELEGATED_SCOPES } from '../src/domain/delegation.ts';
import { delegatedRouteScope } from '../src/api/delegated-auth.ts';
import { defineAgent } from '../src/index.ts';
import { postgresAvailable } from './support/postgres.ts';
import { ADMIN_KEY, startKeelOn, type SchedulesKeel } from './support/schedules-keel.ts';

const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('answer');
  },
});

/** A request that reads a JSON answer, or only the status of a stream (SSE). */
async function call(
  keel: SchedulesKeel,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(keel.url + path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, body: null };
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

const start = (t: TestContext, backend: 'sqlite' | 'postgres'): Promise<SchedulesKeel> =>
  startKeelOn(t, backend, [waiter]);

async function createKey(
  keel: SchedulesKeel,
  by: string,
  body: Record<string, unknown>,
): Promise<{ id: string; secret: string }> {
  const res = await call(keel, 'POST', '/v1/keys', by, body);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.key.id, secret: res.body.secret };
}

/** Sample bodies, so a request reaches its handler (and its tenant check) instead of a 400. */
function sampleBody(method: string, route: string): unknown {
  const now = Date.now();
  const bodies: Record<string, unknown> = {
    'POST /v1/runs': { agent: 'waiter' },
    'POST /v1/runs:batch': { runs: [{ agent: 'waiter' }] },
    'POST /v1/runs/{id}/input': { key: 'not-awaited', value: 1 },
    'POST /v1/runs/{id}/messages': { channel: 'inbox', id: 'sweep', payload: 1 },
    'POST /v1/runs/{id}/executions/{executionId}/resolve': { action: 'retry' },
    'POST /v1/runs/{id}/reset': { position: 0 },
    'POST /v1/runs/{id}/fork': { input: { forked: true } },
    'POST /v1/runs/migrate-version': { agent: 'waiter', from: '1', to: '2' },
    'POST /v1/schedules': { cron: '0 * * * *', timeZone: 'UTC', template: { agent: 'waiter' } },
    'PATCH /v1/schedules/{id}': { name: 'renamed' },
    'POST /v1/schedules/{id}/backfill': {
      from: new Date(now - 3_600_000).toISOString(),
      to: new Date(now - 3_600_000).toISOString(),
    },
    'POST /v1/keys': { name: 'made-in-sweep', scopes: ['admin'] },
    'POST /v1/secrets': { name: 'MADE_IN_SWEEP', value: 'sweep-value' },
    'POST /v1/secrets/{name}/rotate': { value: 'sweep-value-2' },
    'POST /v1/runs/{id}/approvals/{executionId}': { decision: 'deny' },
    'PUT /v1/policy': {},
  };
  return bodies[`${method} ${route}`];
}

/** The tenant API's operations as the OpenAPI document lists them: `METHOD /path/{param}`. */
async function tenantOperations(keel: SchedulesKeel): Promise<Array<[string, string]>> {
  const res = await fetch(`${keel.url}/openapi.json`);
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  const ops: Array<[string, string]> = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/v1/') || path.startsWith('/v1/admin/')) continue;
    for (const method of Object.keys(item)) ops.push([method.toUpperCase(), path]);
  }
  return ops;
}

// A literal colon (`/v1/runs:batch`) is `::` in a Fastify route.
const fastifyUrl = (route: string) =>
  route
    .replaceAll(/(\w):(\w)/g, '$1::$2')
    .replaceAll('{*}', '*')
    .replaceAll(/\{(\w+)\}/g, ':$1');

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`sweep (${backend}): every tenant route, each scope and another tenant: 403 missing scope, 404 foreign, never 500`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await start(t, backend);
    const owner = keel.apiKey; // the tenant's first key: every scope
    const keyOf = Object.fromEntries(
      await Promise.all(
        SCOPES.map(async (s) => [
          s,
          (await createKey(keel, owner, { name: s, scopes: [s] })).secret,
        ]),
      ),
    ) as Record<(typeof SCOPES)[number], string>;
    const other = await call(keel, 'POST', '/v1/admin/tenants', ADMIN_KEY, { name: 'other' });
    assert.equal(other.status, 201);
    const foreign: string = other.body.apiKey;

    const run = await call(keel, 'POST', '/v1/runs', owner, { agent: 'waiter' });
    assert.equal(run.status, 201);
    await keel.waitForRun(run.body.id, (r) => r.status === 'waiting');
    const schedule = await call(
      keel,
      'POST',
      '/v1/schedules',
      owner,
      sampleBody('POST', '/v1/schedules'),
    );
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    const victim = await createKey(keel, owner, { name: 'victim', scopes: ['read'] });

    const ops = await tenantOperations(keel);
    // The document and the scope table agree: every operation has a scope, every scope an operation.
    assert.deepEqual(
      ops.map(([m, p]) => `${m} ${fastifyUrl(p)}`).sort(),
      Object.keys(ROUTE_SCOPES).sort(),
    );
    // A few scopes pinned by hand, so a mis-declared table fails here too.
    assert.equal(ROUTE_SCOPES['POST /v1/runs'], 'submit');
    assert.equal(ROUTE_SCOPES['GET /v1/runs/:id'], 'read');
    assert.equal(ROUTE_SCOPES['POST /v1/runs/:id/cancel'], 'operate');
    assert.equal(ROUTE_SCOPES['POST /v1/runs/:id/fork'], 'operate');
    assert.equal(ROUTE_SCOPES['GET /v1/keys'], 'admin');
    assert.equal(ROUTE_SCOPES['GET /v1/audit'], 'admin');

    const fill = (route: string) =>
      route
        .replace('/v1/runs/{id}', `/v1/runs/${run.body.id}`)
        .replace('/v1/schedules/{id}', `/v1/schedules/${schedule.body.id}`)
        .replace('/v1/keys/{id}', `/v1/keys/${victim.id}`)
        .replace('/v1/secrets/{name}', '/v1/secrets/SWEPT')
        .replace('{executionId}', 'exec_none')
        .replace('{seq}', '1')
        .replace('{sha256}', '0'.repeat(64));
    const failures: string[] = [];
    // Refusals first (they change nothing), then each route with a key holding its scope.
    for (const [method, route] of ops) {
      const needed = ROUTE_SCOPES[`${method} ${fastifyUrl(route)}`]!;
      const path = fill(route);
      const body = sampleBody(method, route);
      for (const scope of SCOPES) {
        if (scope === needed) continue;
        const res = await call(keel, method, path, keyOf[scope], body);
        if (res.status !== 403 || res.body?.error?.code !== 'forbidden_scope')
          failures.push(
            `${method} ${route} with ${scope}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
          );
      }
      const res = await call(keel, method, path, foreign, body);
      const expected = route.includes('{') ? 404 : undefined;
      if (
        res.status >= 500 ||
        res.status === 403 ||
        (expected !== undefined && res.status !== expected)
      )
        failures.push(
          `${method} ${route} by another tenant: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
        );
    }
    // The delegated principal: a token of the (live) run with every delegated scope reaches only
    // DELEGATED_ROUTES on its own run (403 delegated_forbidden elsewhere, admin routes too), and
    // another run, of its tenant or another, is 404.
    const { token } = keel.delegated.mint(
      {
        tenantId: run.body.tenantId,
        runId: run.body.id,
        executionId: `${run.body.id}.0`,
        scopes: [...DELEGATED_SCOPES],
      },
      Date.now(),
    );
    const foreignRun = await call(keel, 'POST', '/v1/runs', foreign, { agent: 'waiter' });
    assert.equal(foreignRun.status, 201);
    for (const [method, route] of ops) {
      const allowed = delegatedRouteScope(method, fastifyUrl(route)) !== undefined;
      const res = await call(keel, method, fill(route), token, sampleBody(method, route));
      if (
        allowed
          ? res.status === 401 || res.status === 403 || res.status >= 500
          : res.status !== 403 || res.body?.error?.code !== 'delegated_forbidden'
      )
        failures.push(
          `${method} ${route} with a delegated token: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
        );
      if (!allowed || !route.startsWith('/v1/runs/{id}')) continue;
      const elsewhere = await call(
        keel,
        method,
        fill(route).replace(run.body.id, foreignRun.body.id),
        token,
        sampleBody(method, route),
      );
      if (elsewhere.status !== 404)
        failures.push(
          `${method} ${route} on another tenant's run with a delegated token: ${elsewhere.status}`,
        );
    }
    for (const path of ['/v1/admin/tenants', '/metrics']) {
      const res = await call(keel, 'GET', path, token);
      if (res.status !== 403 || res.body?.error?.code !== 'delegated_forbidden')
        failures.push(`GET ${path} with a delegated token: ${res.status}`);
    }
    for (const [method, route] of ops) {
      const needed = ROUTE_SCOPES[`${method} ${fastifyUrl(route)}`]!;
      const res = await call(keel, method, fill(route), keyOf[needed], sampleBody(method, route));
      if (res.status >= 500 || res.status === 401 || res.status === 403)
        failures.push(
          `${method} ${route} with ${needed}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
        );
    }
    assert.deepEqual(failures, []);
  });
}

test('revocation and expiry take effect at once; a tenant key grants only the scopes it holds', async (t) => {
  const keel = await start(t, 'sqlite');
  const admin = await createKey(keel, keel.apiKey, { name: 'tenant-admin', scopes: ['admin'] });
  // An admin key without read cannot mint a read key (no escalation).
  const escalate = await call(keel, 'POST', '/v1/keys', admin.secret, {
    name: 'x',
    scopes: ['read'],
  });
  assert.equal(escalate.status, 403);
  assert.equal(escalate.body.error.code, 'forbidden_scope');

  const reader = await createKey(keel, keel.apiKey, { name: 'reader', scopes: ['read'] });
  assert.equal((await call(keel, 'GET', '/v1/runs', reader.secret)).status, 200);
  assert.equal((await call(keel, 'DELETE', `/v1/keys/${reader.id}`, admin.secret)).status, 200);
  const refused = await call(keel, 'GET', '/v1/runs', reader.secret);
  assert.equal(refused.status, 401);
  assert.equal(refused.body.error.code, 'key_revoked');

  // An expiry in the past is refused at creation; one a second ahead works until then, then never.
  const past = await call(keel, 'POST', '/v1/keys', keel.apiKey, {
    name: 'late',
    scopes: ['read'],
    expiresAt: new Date(Date.now() - 1000).toISOString(),
  });
  assert.equal(past.status, 400);
  const brief = await createKey(keel, keel.apiKey, {
    name: 'brief',
    scopes: ['read'],
    expiresAt: new Date(Date.now() + 1000).toISOString(),
  });
  assert.equal((await call(keel, 'GET', '/v1/runs', brief.secret)).status, 200);
  const deadline = Date.now() + 10_000;
  let last = await call(keel, 'GET', '/v1/runs', brief.secret);
  while (last.status === 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    last = await call(keel, 'GET', '/v1/runs', brief.secret);
  }
  assert.equal(last.status, 401);
  assert.equal(last.body.error.code, 'key_expired');

  // Keys of another tenant are 404 to revoke; the platform admin lists and revokes any tenant's.
  const other = await call(keel, 'POST', '/v1/admin/tenants', ADMIN_KEY, { name: 'other' });
  const otherKeys = await call(
    keel,
    'GET',
    `/v1/admin/tenants/${other.body.tenant.id}/keys`,
    ADMIN_KEY,
  );
  assert.equal(otherKeys.status, 200);
  const otherKeyId = otherKeys.body.keys[0].id;
  const foreignRevoke = await call(keel, 'DELETE', `/v1/keys/${otherKeyId}`, keel.apiKey);
  assert.equal(foreignRevoke.status, 404);
  assert.equal(foreignRevoke.body.error.code, 'key_not_found');
  const byAdmin = await call(
    keel,
    'DELETE',
    `/v1/admin/tenants/${other.body.tenant.id}/keys/${otherKeyId}`,
    ADMIN_KEY,
  );
  assert.equal(byAdmin.status, 200);
  assert.equal((await call(keel, 'GET', '/v1/runs', other.body.apiKey)).status, 401);
});

test('rotation with overlap: a load of requests sees no error while the key is replaced', async (t) => {
  const keel = await start(t, 'sqlite');
  const old = await createKey(keel, keel.apiKey, {
    name: 'service-v1',
    scopes: ['read', 'submit'],
  });
  let current = old.secret;
  let rotated = false;
  const statuses: number[] = [];
  const CLIENTS = 4;
  /** Per client: whether a request it sent with the new key has been answered. */
  const movedOver = new Array<boolean>(CLIENTS).fill(false);
  let nextSecret: string | undefined;
  const client = async (i: number) => {
    // Each client keeps going for a while after the old key is revoked.
    let after = 0;
    while (after < 30) {
      const key = current;
      statuses.push((await call(keel, 'GET', '/v1/runs?limit=1', key)).status);
      if (key === nextSecret) movedOver[i] = true;
      if (rotated) after += 1;
    }
  };
  const load = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  const until = async (condition: () => boolean) => {
    const deadline = Date.now() + 20_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('the load stalled');
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await until(() => statuses.length >= 40);
  const next = await createKey(keel, keel.apiKey, {
    name: 'service-v2',
    scopes: ['read', 'submit'],
  });
  nextSecret = next.secret;
  current = next.secret; // clients move over: both keys work meanwhile
  await until(() => movedOver.every(Boolean));
  assert.equal((await call(keel, 'DELETE', `/v1/keys/${old.id}`, keel.apiKey)).status, 200);
  rotated = true;
  await load;
  assert.ok(statuses.length >= 40 + CLIENTS * 30);
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
  );
  assert.equal((await call(keel, 'GET', '/v1/runs', old.secret)).status, 401);
});

test('last use: stamped on the first request, not rewritten within the minute', async (t) => {
  const keel = await start(t, 'sqlite');
  const key = await createKey(keel, keel.apiKey, { name: 'stamped', scopes: ['read'] });
  const listed = async () =>
    (await call(keel, 'GET', '/v1/keys', keel.apiKey)).body.keys.find((k: any) => k.id === key.id);
  assert.equal((await listed()).lastUsedAt, null);
  await call(keel, 'GET', '/v1/runs', key.secret);
  const deadline = Date.now() + 5_000;
  let first = (await listed()).lastUsedAt;
  while (first === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    first = (await listed()).lastUsedAt;
  }
  assert.notEqual(first, null);
  for (let i = 0; i < 5; i += 1) await call(keel, 'GET', '/v1/runs', key.secret);
  assert.equal((await listed()).lastUsedAt, first);
});
