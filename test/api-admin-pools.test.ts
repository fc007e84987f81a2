// GET /v1/admin/pools over real HTTP: operator-only, and it shows each pool's limit, holders,
// waiters and oldest wait, overall and per tenant, as the process's pool registry has them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildApi } from '../src/api/server.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { parsePoolsConfig } from '../src/scheduling/pool-config.ts';
import { PoolRegistry } from '../src/scheduling/pool-registry.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const ADMIN_KEY = 'admin-key-for-pools-0123456789';

test('GET /v1/admin/pools shows every pool and its tenants to the operator only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-admin-pools-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const pools = new PoolRegistry();
  pools.configure(
    parsePoolsConfig(
      { pools: { 'sandbox:shell': { limit: 1, tenantCaps: { default: 1 } } } },
      'test',
    ),
  );
  pools.setDefaultLimit('model:gpt', 8);
  const app = await buildApi({
    store,
    registry: new AgentRegistry(),
    adminKey: ADMIN_KEY,
    pools: () => pools.snapshot(),
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const release = await pools.acquire('sandbox:shell', { tenantId: 't1', priority: 'batch' });
  const waiting = pools.acquire('sandbox:shell', { tenantId: 't2', priority: 'interactive' });

  assert.equal((await fetch(`${url}/v1/admin/pools`)).status, 401);
  assert.equal(
    (
      await fetch(`${url}/v1/admin/pools`, {
        headers: { authorization: 'Bearer not-the-admin-key-000' },
      })
    ).status,
    401,
  );
  const res = await fetch(`${url}/v1/admin/pools`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  assert.equal(res.status, 200);
  const { pools: listed } = (await res.json()) as { pools: any[] };
  assert.deepEqual(
    listed.map((p) => [p.name, p.kind, p.limit]),
    [
      ['model:gpt', 'model', 8],
      ['sandbox:shell', 'sandbox', 1],
    ],
  );
  const shell = listed.find((p) => p.name === 'sandbox:shell');
  assert.equal(shell.running, 1);
  assert.equal(shell.queued, 1);
  assert.equal(typeof shell.oldestWaitMs, 'number');
  assert.deepEqual(
    shell.tenants.map((x: any) => [x.tenantId, x.running, x.queued, x.cap]),
    [
      ['t1', 1, 0, 1],
      ['t2', 0, 1, 1],
    ],
  );
  release();
  (await waiting)();
});
