// The dashboard's server side over real HTTP: the app and its deep links served at `/` (with a CSP,
// and a clear 503 when it is not built), API 404s left alone, and the /v1/dashboard JSON behind the
// tenant's key, counting only the caller's runs, with sources that are not plugged in reported as
// unavailable and plugged-in ones passed through.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { errorHandler } from '../src/api/error-boundary.ts';
import { registerDashboard } from '../src/api/routes/dashboard.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { defineAgent } from '../src/index.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { DASHBOARD_INDEX } from './support/browser.ts';
import { startKeel } from './support/keel-server.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { done: true };
  },
});
const broken = defineAgent({
  name: 'broken',
  version: '1',
  async run() {
    throw new Error('nope');
  },
});
const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('answer');
  },
});

test('the app is served at / and on its deep links; API 404s stay JSON', {
  skip:
    existsSync(DASHBOARD_INDEX) || process.env.CI === 'true'
      ? false
      : 'dist/web is not built (npm run build)',
}, async (t) => {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  for (const path of ['/', '/runs', '/runs/run_123', '/tenant', '/tenants', '/pools', '/nodes']) {
    const res = await fetch(keel.url + path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.match(await res.text(), /<div id="root">/);
  }
  const html = await (await fetch(`${keel.url}/`)).text();
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  assert.ok(script, html);
  const asset = await fetch(keel.url + script);
  assert.equal(asset.status, 200);
  assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
  const source = await asset.text();
  assert.doesNotMatch(
    source,
    /https?:\/\/(unpkg|cdn|fonts\.googleapis)/,
    'nothing is fetched from a CDN',
  );
  for (const encoding of ['br', 'gzip']) {
    const compressed: Response = await fetch(keel.url + script, {
      headers: { 'accept-encoding': encoding },
    });
    assert.equal(
      compressed.headers.get('content-encoding'),
      encoding,
      'a precompressed copy is sent',
    );
    assert.equal(await compressed.text(), source);
  }
  const missing = await fetch(`${keel.url}/v1/nope`);
  assert.equal(missing.status, 401, 'an unknown /v1 path still needs a key');
  const notFound = await fetch(`${keel.url}/definitely/not/a/page`);
  assert.equal(notFound.status, 404);
  assert.equal((await notFound.json()).error.code, 'not_found');
});

test('without a build, / answers 503 with how to build it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-web-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  t.after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await registerDashboard(app, {
    store,
    registry: new AgentRegistry(),
    tenantOf: () => {
      throw new Error('unused');
    },
    sources: {},
    assetsDir: dir,
  });
  const res = await app.inject({ method: 'GET', url: '/runs' });
  assert.equal(res.statusCode, 503);
  assert.match(res.body, /npm run build/);
});

test('/v1/dashboard: tenant usage and cost per success, queues and throughput, nodes; only the caller’s runs', async (t) => {
  const keel = await startKeel({ agents: [quick, broken, waiter] });
  t.after(() => keel.close());
  for (const path of ['/v1/dashboard/tenant', '/v1/dashboard/pools', '/v1/dashboard/nodes']) {
    assert.equal((await keel.request('GET', path, undefined, null)).status, 401, path);
  }
  const other = (await keel.request('POST', '/v1/admin/tenants', { name: 'other' }, keel.adminKey))
    .body.apiKey as string;
  await keel.request('POST', '/v1/runs', { agent: 'quick' }, other);

  const ids: string[] = [];
  for (const agent of ['quick', 'quick', 'broken', 'waiter'])
    ids.push((await keel.request('POST', '/v1/runs', { agent })).body.id);
  await Promise.all(
    ids.map((id) =>
      keel.waitForRun(id, (r) => ['succeeded', 'failed', 'waiting'].includes(r.status)),
    ),
  );

  const tenant = (await keel.request('GET', '/v1/dashboard/tenant')).body;
  assert.equal(tenant.tenant.name, 'test');
  assert.deepEqual(tenant.agents.map((a: any) => a.name).sort(), ['broken', 'quick', 'waiter']);
  assert.equal(tenant.totals.runs, 4, 'the other tenant’s run is not counted');
  assert.deepEqual(tenant.totals.byStatus, { succeeded: 2, failed: 1, waiting: 1 });
  assert.equal(tenant.totals.succeeded, 2);
  assert.equal(tenant.totals.costPerSuccessUsd, 0, 'no model calls: nothing spent');
  assert.equal(
    tenant.usage.find((u: any) => u.agent === 'broken').costPerSuccessUsd,
    null,
    'no success yet',
  );
  assert.deepEqual(tenant.quotas, {
    available: false,
    reason: 'per-tenant quotas are not configured in this Keel',
  });

  const pools = (await keel.request('GET', '/v1/dashboard/pools?minutes=15')).body;
  assert.deepEqual(
    pools.runQueues.map((q: any) => [q.agent, q.queued, q.waiting]),
    [['waiter', 0, 1]],
  );
  assert.ok(pools.runQueues[0].oldestWaitingAgeMs >= 0);
  assert.equal(pools.throughput.bucketMs, 15_000);
  const ended = pools.throughput.buckets.reduce(
    (n: number, b: any) => n + b.succeeded + b.failed + b.cancelled,
    0,
  );
  assert.equal(ended, 3);
  assert.equal(pools.pools.available, false);
  assert.equal(
    (await keel.request('GET', '/v1/dashboard/pools?minutes=2')).status,
    400,
    'windows under 5 minutes are refused',
  );

  const nodes = (await keel.request('GET', '/v1/dashboard/nodes')).body;
  assert.equal(nodes.available, false);
  assert.match(nodes.reason, /no sandbox node has registered/);

  const admin = await keel.request('GET', '/v1/admin/dashboard/tenants', undefined, keel.adminKey);
  assert.equal(admin.status, 200, JSON.stringify(admin.body));
  const byName = Object.fromEntries(admin.body.tenants.map((x: any) => [x.name, x]));
  assert.equal(byName.test.runs, 4);
  assert.equal(byName.other.runs, 1);
  assert.deepEqual(byName.test.byStatus, { succeeded: 2, failed: 1, waiting: 1 });
  assert.equal(byName.test.quotas.available, false);
  assert.equal(
    (await keel.request('GET', '/v1/admin/dashboard/tenants')).status,
    401,
    'a tenant key is not the admin key',
  );
  assert.equal(
    (await keel.request('GET', '/v1/admin/dashboard/tenants', undefined, null)).status,
    401,
  );

  const openapi = (await keel.request('GET', '/openapi.json')).body;
  assert.ok(openapi.paths['/v1/dashboard/pools'], 'the dashboard routes are documented');
});

test('/v1/dashboard: plugged-in pool, node and quota sources are passed through', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-web-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const tenant = await store.createTenant('acme', 'hash');
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  t.after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await registerDashboard(app, {
    store,
    registry: new AgentRegistry(),
    tenantOf: () => tenant,
    assetsDir: dir,
    sources: {
      pools: () => [
        {
          name: 'model:gpt',
          kind: 'model',
          queued: 3,
          running: 2,
          concurrency: 2,
          oldestQueuedAgeMs: 1500,
          state: 'breaker open',
        },
      ],
      nodes: async () => [
        {
          id: 'node-1',
          isolation: 'bubblewrap',
          state: 'ready',
          slotsUsed: 1,
          slotsTotal: 8,
          memoryUsedBytes: 1 << 30,
          memoryTotalBytes: 8 << 30,
          lastSeenAt: new Date(0).toISOString(),
        },
      ],
      quotas: (id) =>
        id === tenant.id
          ? { maxConcurrentRuns: 10, requestsPerMinute: null, tokensPerMinute: 50_000, weight: 2 }
          : null,
    },
  });
  const pools = (await app.inject({ url: '/v1/dashboard/pools' })).json();
  assert.deepEqual(pools.pools, {
    available: true,
    pools: [
      {
        name: 'model:gpt',
        kind: 'model',
        queued: 3,
        running: 2,
        concurrency: 2,
        oldestQueuedAgeMs: 1500,
        state: 'breaker open',
      },
    ],
  });
  const nodes = (await app.inject({ url: '/v1/dashboard/nodes' })).json();
  assert.equal(nodes.available, true);
  assert.equal(nodes.nodes[0].isolation, 'bubblewrap');
  const disabled = await app.inject({
    url: '/v1/admin/dashboard/tenants',
    headers: { authorization: 'Bearer anything' },
  });
  assert.equal(disabled.statusCode, 404, 'without KEEL_ADMIN_KEY the operator view is off');
  const overview = (await app.inject({ url: '/v1/dashboard/tenant' })).json();
  assert.deepEqual(overview.quotas, {
    available: true,
    maxConcurrentRuns: 10,
    requestsPerMinute: null,
    tokensPerMinute: 50_000,
    weight: 2,
  });
});
