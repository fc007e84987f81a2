// The OpenAPI document at /openapi.json says what the API does: every 400 rule JSON Schema cannot
// carry (opaque cursors, exactly one of cron / intervalMs, date ordering, allowlist origins,
// poolCaps keys, empty PATCH bodies) is stated on its operation, and each statement is checked
// against the server by breaking the rule over real HTTP. Also: DELETE /v1/schedules/:id is a 204
// without content, in the document and on the wire; the webhook allowlist routes answer 404
// tenant_not_found for an unknown tenant and store nothing for it.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { scheduleAgents } from './fixtures/schedule-agents.ts';
import { assertError } from './support/assert-error.ts';
import { ADMIN_KEY, startSchedulesKeel, type SchedulesKeel } from './support/schedules-keel.ts';

async function start(t: TestContext): Promise<SchedulesKeel> {
  const keel = await startSchedulesKeel({ agents: scheduleAgents, start: '2026-01-01T00:00:00Z' });
  t.after(() => keel.close());
  return keel;
}

type Operation = {
  description?: string;
  parameters?: Array<{ name: string; in: string; description?: string }>;
  requestBody?: any;
  responses: Record<string, any>;
};

async function openapi(
  keel: SchedulesKeel,
): Promise<{ paths: Record<string, Record<string, Operation>>; components: any }> {
  const res = await keel.request('GET', '/openapi.json');
  assert.equal(res.status, 200);
  return res.body;
}

/**
 * Everything the document says about one operation, as one lower-case text: its description, its
 * 400's, its body's.
 */
function statedRules(op: Operation): string {
  const body = op.requestBody?.content?.['application/json']?.schema;
  const properties = Object.values(body?.properties ?? {}).map((p: any) => p.description ?? '');
  return [
    op.description ?? '',
    op.responses['400']?.description ?? '',
    body?.description ?? '',
    ...properties,
  ]
    .join(' ')
    .toLowerCase();
}

const schedule = { timeZone: 'UTC', template: { agent: 'quick' } };

test('DELETE /v1/schedules/:id: documented as 204 without content, and answered without a body', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  const deleted = doc.paths['/v1/schedules/{id}']!.delete!.responses['204'];
  assert.ok(deleted, 'a 204 response is documented');
  assert.equal(deleted.content, undefined, `no content for a 204: ${JSON.stringify(deleted)}`);
  assert.match(deleted.description, /no body/);
  const created = await keel.request('POST', '/v1/schedules', { ...schedule, intervalMs: 60_000 });
  const res = await fetch(`${keel.url}/v1/schedules/${created.body.id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${keel.apiKey}` },
  });
  assert.equal(res.status, 204);
  assert.equal(await res.text(), '');
  assert.equal(res.headers.get('content-type'), null);
});

test('every list route documents its cursor as opaque, and a cursor it did not issue is 400 invalid_cursor', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  const s = await keel.request('POST', '/v1/schedules', { ...schedule, intervalMs: 60_000 });
  const lists = Object.entries(doc.paths).flatMap(([path, ops]) =>
    ops.get?.parameters?.some((p) => p.name === 'cursor') ? [path] : [],
  );
  assert.deepEqual(lists.sort(), [
    '/v1/admin/audit',
    '/v1/admin/tenants/{id}/audit',
    '/v1/approval-webhook/deliveries',
    '/v1/approvals',
    '/v1/audit',
    '/v1/runs',
    '/v1/schedules',
    '/v1/schedules/{id}/fires',
  ]);
  const tenants = await keel.request('GET', '/v1/admin/tenants', undefined, ADMIN_KEY);
  for (const path of lists) {
    const op = doc.paths[path]!.get!;
    const cursor = op.parameters!.find((p) => p.name === 'cursor')!;
    assert.match(cursor.description ?? '', /opaque.*nextCursor.*400 invalid_cursor/i, path);
    assert.match(
      op.responses['400'].description,
      /invalid_cursor/,
      `${path}: the 400 names invalid_cursor`,
    );
    const foreign = Buffer.from(JSON.stringify({ v: 1, after: 'not-from-this-list' })).toString(
      'base64url',
    );
    const admin = path.startsWith('/v1/admin/');
    const id = admin ? tenants.body.tenants[0].id : s.body.id;
    assertError(
      await keel.request(
        'GET',
        `${path.replace('{id}', id)}?cursor=${foreign}`,
        undefined,
        admin ? ADMIN_KEY : undefined,
      ),
      400,
      'invalid_cursor',
    );
  }
});

test('schedules: exactly one of cron and intervalMs, endAt after startAt, no empty edit: stated in the document and enforced', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  const create = statedRules(doc.paths['/v1/schedules']!.post!);
  const edit = statedRules(doc.paths['/v1/schedules/{id}']!.patch!);
  for (const [name, text] of [
    ['POST /v1/schedules', create],
    ['PATCH /v1/schedules/{id}', edit],
  ] as const) {
    assert.match(
      text,
      /exactly one of cron and intervalms/,
      `${name} states exactly one of cron/intervalMs`,
    );
    assert.match(text, /endat after startat/, `${name} states the date order`);
  }
  assert.match(edit, /at least one field.*empty body is 400/, 'the empty edit is stated');

  const post = (body: Record<string, unknown>) =>
    keel.request('POST', '/v1/schedules', { ...schedule, ...body });
  assertError(await post({}), 400, 'validation_failed');
  assertError(await post({ cron: '* * * * *', intervalMs: 60_000 }), 400, 'validation_failed');
  assertError(await post({ cron: null, intervalMs: null }), 400, 'validation_failed');
  assertError(
    await post({
      intervalMs: 60_000,
      startAt: '2026-02-01T00:00:00Z',
      endAt: '2026-02-01T00:00:00Z',
    }),
    400,
    'validation_failed',
  );
  assertError(
    await post({
      intervalMs: 60_000,
      startAt: '2026-02-01T01:00:00+01:00',
      endAt: '2026-02-01T00:00:00Z',
    }),
    400,
    'validation_failed',
  ); // same instant
  assert.equal(
    (
      await post({
        intervalMs: 60_000,
        startAt: '2026-02-01T00:00:00Z',
        endAt: '2026-02-01T00:00:01Z',
      })
    ).status,
    201,
  );

  const s = (await post({ intervalMs: 60_000, startAt: '2026-02-01T00:00:00Z' })).body;
  const patch = (body: unknown) => keel.request('PATCH', `/v1/schedules/${s.id}`, body);
  assertError(await patch({}), 400, 'validation_failed');
  assertError(await patch({ cron: '* * * * *', intervalMs: 60_000 }), 400, 'validation_failed');
  assertError(await patch({ endAt: '2026-01-15T00:00:00Z' }), 400, 'validation_failed'); // before the stored startAt
  assertError(await patch({ intervalMs: null }), 400, 'validation_failed'); // would leave neither
  const unchanged = await keel.request('GET', `/v1/schedules/${s.id}`);
  assert.equal(unchanged.body.version, 1, 'no refused edit bumped the version');
  const switched = await patch({ cron: '0 * * * *' });
  assert.equal(switched.status, 200, 'setting cron clears intervalMs, as stated');
  assert.equal(switched.body.intervalMs, null);
});

test('backfill: the order of from and to and the past-only rule are stated and enforced', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  const text = statedRules(doc.paths['/v1/schedules/{id}/backfill']!.post!);
  assert.match(text, /`to` must not be before `from`, nor in the future/);
  assert.match(text, /backfill_too_large/);
  const s = (await keel.request('POST', '/v1/schedules', { ...schedule, cron: '0 * * * *' })).body;
  const backfill = (from: string, to: string) =>
    keel.request('POST', `/v1/schedules/${s.id}/backfill`, { from, to });
  assertError(
    await backfill('2025-12-31T12:00:00Z', '2025-12-31T10:00:00Z'),
    400,
    'validation_failed',
  );
  assertError(
    await backfill('2025-12-31T12:00:00Z', '2026-06-01T00:00:00Z'),
    400,
    'validation_failed',
  );
  assert.equal((await backfill('2025-12-31T10:00:00Z', '2025-12-31T12:00:00Z')).status, 202);
});

test('tenants: poolCaps keys and the empty PATCH are stated and enforced; a duplicate name is documented as 409', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  const create = doc.paths['/v1/admin/tenants']!.post!;
  const update = doc.paths['/v1/admin/tenants/{id}']!.patch!;
  for (const [name, op] of [
    ['POST', create],
    ['PATCH', update],
  ] as const) {
    const poolCaps = op.requestBody.content['application/json'].schema.properties.poolCaps;
    assert.match(
      poolCaps.description,
      /keys are pool names .*at most 100/i,
      `${name}: poolCaps keys are stated on the field`,
    );
    assert.match(
      op.responses['400'].description,
      /keys are pool names/i,
      `${name}: and on the 400`,
    );
  }
  assert.match(statedRules(update), /name at least one of weight, .*an empty body is 400/);
  assert.match(create.responses['409'].description, /tenant_name_taken/);

  const admin = (method: string, path: string, body: unknown) =>
    keel.request(method, path, body, ADMIN_KEY);
  for (const poolCaps of [
    { '': 1 },
    { ' spaced': 1 },
    { 'model:a': 0 },
    { 'model:a': 1.5 },
    { ['x'.repeat(201)]: 1 },
    Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, 1])),
  ]) {
    assertError(
      await admin('POST', '/v1/admin/tenants', { name: 'caps', poolCaps }),
      400,
      'validation_failed',
    );
  }
  const tenant = await admin('POST', '/v1/admin/tenants', {
    name: 'caps',
    poolCaps: { 'sandbox:default': 2, 'model:gpt-4o': 1, inline: 3 },
  });
  assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
  assertError(
    await admin('PATCH', `/v1/admin/tenants/${tenant.body.tenant.id}`, {}),
    400,
    'validation_failed',
  );
  assertError(await admin('POST', '/v1/admin/tenants', { name: 'caps' }), 409, 'tenant_name_taken');
});

test('webhook allowlist: origins only, stated in the document and enforced', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  const text = statedRules(doc.paths['/v1/admin/tenants/{tenantId}/webhook-allowlist']!.put!);
  assert.match(text, /each entry is an origin: http or https, a host and an optional port/);
  assert.match(text, /without credentials, path, query or fragment/);
  const tenant = (await keel.request('POST', '/v1/admin/tenants', { name: 'hooks' }, ADMIN_KEY))
    .body.tenant;
  const put = (origins: string[]) =>
    keel.request('PUT', `/v1/admin/tenants/${tenant.id}/webhook-allowlist`, { origins }, ADMIN_KEY);
  assertError(await put(['https://hooks.example.com/path']), 400, 'validation_failed');
  assertError(await put(['https://hooks.example.com/?q=1']), 400, 'validation_failed');
  assertError(await put(['ftp://hooks.example.com']), 400, 'webhook_not_allowed');
  assertError(await put(['https://user:pw@hooks.example.com']), 400, 'webhook_not_allowed');
  assertError(await put(['not a url']), 400, 'webhook_not_allowed');
  const ok = await put([
    'https://hooks.example.com/',
    'http://10.0.0.5:8080',
    'https://hooks.example.com',
  ]);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual(
    ok.body.origins,
    ['http://10.0.0.5:8080', 'https://hooks.example.com'],
    'normalised, deduplicated and sorted, as stated',
  );
});

test('webhook allowlist of an unknown tenant: GET and PUT are 404 tenant_not_found, and nothing is stored for it', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  for (const method of ['get', 'put']) {
    assert.match(
      doc.paths['/v1/admin/tenants/{tenantId}/webhook-allowlist']![method]!.responses['404']
        .description,
      /tenant_not_found/,
    );
  }
  const missing = 'ten_00000000-0000-4000-8000-000000000000';
  const path = `/v1/admin/tenants/${missing}/webhook-allowlist`;
  assertError(
    await keel.request('PUT', path, { origins: ['https://hooks.example.com'] }, ADMIN_KEY),
    404,
    'tenant_not_found',
  );
  assertError(await keel.request('GET', path, undefined, ADMIN_KEY), 404, 'tenant_not_found');
  assert.deepEqual(
    await keel.plane.service.getWebhookAllowlist(missing),
    [],
    'the refused PUT stored nothing',
  );
  // Still an operator route: without the admin key it is 401 whether or not the tenant exists.
  assertError(await keel.request('GET', path), 401, 'unauthorized');
  // A known tenant (the harness's own) works as before.
  const own = (await keel.request('GET', '/v1/admin/tenants', undefined, ADMIN_KEY)).body.tenants[0]
    .id;
  const set = await keel.request(
    'PUT',
    `/v1/admin/tenants/${own}/webhook-allowlist`,
    { origins: ['https://hooks.example.com'] },
    ADMIN_KEY,
  );
  assert.equal(set.status, 200);
  assert.deepEqual(
    (await keel.request('GET', `/v1/admin/tenants/${own}/webhook-allowlist`, undefined, ADMIN_KEY))
      .body.origins,
    ['https://hooks.example.com'],
  );
});

test('every operation documents its 400 (even one without parameters refuses a query), all errors as the Error envelope', async (t) => {
  const keel = await start(t);
  const doc = await openapi(keel);
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      assert.ok(op.responses['400'], `${method.toUpperCase()} ${path} documents its 400`);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        assert.equal(
          response.content?.['application/json']?.schema?.$ref,
          '#/components/schemas/Error',
          `${method.toUpperCase()} ${path} ${status}`,
        );
      }
    }
  }
});
