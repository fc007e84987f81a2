// The platform audit log over real HTTP: a sweep calls every state-changing admin route the OpenAPI
// document lists (a new one fails this test until it is in the sweep) as the root admin and as a
// named principal, and finds one entry for each in GET /v1/admin/audit naming the principal, the
// action, the target, the tenant and the outcome; refusals (a bad body, a revoked principal) are
// entries too; the log is filtered by tenant, actor and action, paged by cursor, exported as NDJSON,
// and only platform admins read it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scheduleAgents } from './fixtures/schedule-agents.ts';
import { ADMIN_KEY, startSchedulesKeel } from './support/schedules-keel.ts';

const STATE_CHANGING = ['post', 'put', 'patch', 'delete'];

interface Call {
  path: string;
  body?: unknown;
  action: string;
  /** The entry's resource; a function of the response for what the call creates. */
  resource: string | ((response: any) => string);
  /** The tenant the entry names (null: platform-wide). */
  tenant: boolean;
}

test('platform audit: every state-changing admin route leaves an entry naming the admin, action, target and outcome', async (t) => {
  const keel = await startSchedulesKeel({ agents: scheduleAgents, start: '2026-01-01T00:00:00Z' });
  t.after(() => keel.close());
  const admin = (method: string, path: string, body?: unknown, key: string = ADMIN_KEY) =>
    keel.request(method, path, body, key);

  // A named principal does half the sweep, so entries must name who did what.
  const created = await admin('POST', '/v1/admin/principals', { name: 'ann' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const ann = { id: created.body.principal.id as string, key: created.body.secret as string };
  const tenant = await admin('POST', '/v1/admin/tenants', { name: 'acme' }, ann.key);
  assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
  const tenantId = tenant.body.tenant.id as string;
  const key = await admin('POST', `/v1/admin/tenants/${tenantId}/keys`, {
    name: 'ci',
    scopes: ['read'],
  });
  const keyId = key.body.key.id as string;
  const bob = await admin('POST', '/v1/admin/principals', { name: 'bob' });
  const node = await admin('POST', '/v1/admin/nodes', { name: 'host-a' });
  assert.equal(node.status, 201, JSON.stringify(node.body));
  const nodeId = node.body.node.id as string;

  const T = `/v1/admin/tenants/${tenantId}`;
  const sweep: Record<string, Call> = {
    'post /v1/admin/tenants': {
      path: '/v1/admin/tenants',
      body: { name: 'beta' },
      action: 'tenant.create',
      resource: (r) => `tenant:${r.tenant.id}`,
      tenant: true,
    },
    'patch /v1/admin/tenants/{id}': {
      path: T,
      body: { weight: 3 },
      action: 'tenant.update',
      resource: `tenant:${tenantId}`,
      tenant: true,
    },
    'put /v1/admin/tenants/{tenantId}/webhook-allowlist': {
      path: `${T}/webhook-allowlist`,
      body: { origins: ['https://hooks.example.com'] },
      action: 'tenant.webhook_allowlist',
      resource: `tenant:${tenantId}`,
      tenant: true,
    },
    'post /v1/admin/tenants/{id}/keys': {
      path: `${T}/keys`,
      body: { name: 'deploy', scopes: ['submit'] },
      action: 'key.create',
      resource: (r) => `key:${r.key.id}`,
      tenant: true,
    },
    'delete /v1/admin/tenants/{id}/keys/{keyId}': {
      path: `${T}/keys/${keyId}`,
      action: 'key.revoke',
      resource: `key:${keyId}`,
      tenant: true,
    },
    'put /v1/admin/tenants/{id}/policy': {
      path: `${T}/policy`,
      body: { deny: ['exec'] },
      action: 'policy.update',
      resource: 'policy:tools',
      tenant: true,
    },
    'put /v1/admin/tenants/{id}/retention': {
      path: `${T}/retention`,
      body: { keepDays: 30, keepRuns: null },
      action: 'retention.put',
      resource: `tenant:${tenantId}`,
      tenant: true,
    },
    'delete /v1/admin/tenants/{id}/retention': {
      path: `${T}/retention`,
      action: 'retention.delete',
      resource: `tenant:${tenantId}`,
      tenant: true,
    },
    'put /v1/admin/tenants/{id}/mcp-servers/{name}': {
      path: `${T}/mcp-servers/docs`,
      body: { transport: { type: 'http', url: 'http://127.0.0.1:9/mcp' } },
      action: 'mcp_server.put',
      resource: 'mcp-server:docs',
      tenant: true,
    },
    'delete /v1/admin/tenants/{id}/mcp-servers/{name}': {
      path: `${T}/mcp-servers/docs`,
      action: 'mcp_server.delete',
      resource: 'mcp-server:docs',
      tenant: true,
    },
    'post /v1/admin/principals': {
      path: '/v1/admin/principals',
      body: { name: 'carol' },
      action: 'admin_principal.create',
      resource: (r) => `admin-principal:${r.principal.id}`,
      tenant: false,
    },
    'delete /v1/admin/principals/{id}': {
      path: `/v1/admin/principals/${bob.body.principal.id}`,
      action: 'admin_principal.revoke',
      resource: `admin-principal:${bob.body.principal.id}`,
      tenant: false,
    },
    'post /v1/admin/nodes': {
      path: '/v1/admin/nodes',
      body: { name: 'host-b' },
      action: 'node.create',
      resource: (r) => `node:${r.node.id}`,
      tenant: false,
    },
    'post /v1/admin/nodes/{id}/drain': {
      path: `/v1/admin/nodes/${nodeId}/drain`,
      action: 'node.drain',
      resource: `node:${nodeId}`,
      tenant: false,
    },
    'post /v1/admin/nodes/{id}/undrain': {
      path: `/v1/admin/nodes/${nodeId}/undrain`,
      action: 'node.undrain',
      resource: `node:${nodeId}`,
      tenant: false,
    },
    'delete /v1/admin/nodes/{id}': {
      path: `/v1/admin/nodes/${nodeId}`,
      action: 'node.remove',
      resource: `node:${nodeId}`,
      tenant: false,
    },
  };
  // A sandbox node's own registration and heartbeats carry its node token, not an admin's key:
  // no admin acts, so they are not in the platform log (a heartbeat every 2 s would bury it).
  const NODE_TOKEN_ROUTES = ['put /v1/admin/nodes/self', 'post /v1/admin/nodes/self/heartbeat'];

  const doc = (await keel.request('GET', '/openapi.json')).body;
  const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
    ([path, ops]) =>
      path.startsWith('/v1/admin/')
        ? Object.keys(ops)
            .filter((m) => STATE_CHANGING.includes(m))
            .map((m) => `${m} ${path}`)
            .filter((route) => !NODE_TOKEN_ROUTES.includes(route))
        : [],
  );
  assert.deepEqual(listed.sort(), Object.keys(sweep).sort(), 'the sweep covers every admin change');

  const expected: Array<{ call: Call; actor: string | null; resource: string }> = [];
  let i = 0;
  for (const [route, call] of Object.entries(sweep)) {
    const method = route.split(' ')[0]!.toUpperCase();
    const asAnn = i++ % 2 === 0;
    const res = await admin(method, call.path, call.body, asAnn ? ann.key : ADMIN_KEY);
    assert.ok(res.status < 300, `${route}: ${res.status} ${JSON.stringify(res.body)}`);
    const resource = typeof call.resource === 'string' ? call.resource : call.resource(res.body);
    expected.push({ call, actor: asAnn ? ann.id : null, resource });
  }

  const log = await admin('GET', '/v1/admin/audit?limit=1000');
  assert.equal(log.status, 200, JSON.stringify(log.body));
  const entries = log.body.entries as any[];
  for (const { call, actor, resource } of expected) {
    const found = entries.filter(
      (e) => e.action === call.action && e.resource === resource && e.actor.id === actor,
    );
    assert.equal(found.length, 1, `${call.action} on ${resource}: ${JSON.stringify(entries)}`);
    const [entry] = found;
    assert.equal(entry.outcome, 'ok');
    assert.equal(entry.actor.type, 'admin');
    assert.equal(entry.actor.name, actor === null ? 'platform-admin' : 'ann');
    if (call.tenant) assert.ok(entry.tenantId?.startsWith('ten_'), call.action);
    else assert.equal(entry.tenantId, null, call.action);
  }
  assert.ok(
    entries.every((e) => !JSON.stringify(e).includes(ann.key)),
    'no key in the log',
  );

  // Refusals: a bad body (after the admin was admitted) and a revoked principal.
  const bad = await admin('PATCH', T, { weight: -1 }, ann.key);
  assert.equal(bad.status, 400);
  const bobKey = bob.body.secret as string;
  const revoked = await admin('POST', '/v1/admin/tenants', { name: 'gamma' }, bobKey);
  assert.equal(revoked.body.error.code, 'admin_principal_revoked');
  const refusals = (await admin('GET', '/v1/admin/audit?limit=2')).body;
  assert.deepEqual(
    refusals.entries.map((e: any) => [e.action, e.actor.name, e.outcome]),
    [
      ['tenant.create', 'bob', 'admin_principal_revoked'],
      ['tenant.update', 'ann', 'validation_failed'],
    ],
  );

  // Filters and cursor pages.
  const byTenant = (await admin('GET', `/v1/admin/audit?tenantId=${tenantId}&limit=1000`)).body;
  assert.ok(byTenant.entries.length >= 8);
  assert.ok(byTenant.entries.every((e: any) => e.tenantId === tenantId));
  const byAnn = (await admin('GET', `/v1/admin/audit?actorId=${ann.id}&limit=1000`)).body;
  assert.ok(byAnn.entries.every((e: any) => e.actor.id === ann.id));
  const principalsOnly = (
    await admin('GET', '/v1/admin/audit?action=admin_principal.create&limit=1000')
  ).body;
  assert.deepEqual(
    principalsOnly.entries.map((e: any) => e.data.name),
    ['carol', 'bob', 'ann'],
  );
  const seen: string[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const page: any = (
      await admin('GET', `/v1/admin/audit?limit=3${cursor === '' ? '' : `&cursor=${cursor}`}`)
    ).body;
    seen.push(...page.entries.map((e: any) => e.id));
    cursor = page.nextCursor;
  }
  assert.deepEqual(
    seen,
    (await admin('GET', '/v1/admin/audit?limit=1000')).body.entries.map((e: any) => e.id),
  );
  const ndjson = await fetch(`${keel.url}/v1/admin/audit?format=ndjson`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  const lines = (await ndjson.text()).trim().split('\n');
  assert.equal(lines.length, seen.length);

  // Tenant-scoped admin changes stay in the tenant's own log too; only admins read the platform's.
  const tenantLog = (await admin('GET', `${T}/audit?action=policy.update`)).body.entries;
  assert.equal(tenantLog.length, 1);
  assert.equal((await keel.request('GET', '/v1/admin/audit')).status, 401);
});
