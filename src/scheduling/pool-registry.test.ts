import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { defineTool } from '../sdk/define.ts';
import { parsePoolsConfig } from './pool-config.ts';
import { watchPoolsFile } from './pool-config-watch.ts';
import { followTenantPoolPolicy } from './tenant-pool-policy.ts';
import {
  DECLARED_POOL_LIMIT_DEFAULT,
  INLINE_POOL_LIMIT_DEFAULT,
  PoolRegistry,
  SANDBOX_POOL_LIMIT_DEFAULT,
} from './pool-registry.ts';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const config = (pools: unknown) => parsePoolsConfig({ pools }, 'test');

describe('PoolRegistry', () => {
  it('scopes model and declared pools to the cluster, inline and sandbox pools to the process; the file decides', () => {
    const pools = new PoolRegistry();
    assert.equal(pools.scopeOf('model:gpt'), 'cluster');
    assert.equal(pools.scopeOf('browser'), 'cluster');
    assert.equal(pools.scopeOf('inline'), 'process');
    assert.equal(pools.scopeOf('sandbox:shell'), 'process');
    pools.configure(
      config({ browser: { scope: 'process' }, 'sandbox:shell': { scope: 'cluster' } }),
    );
    assert.equal(pools.scopeOf('browser'), 'process');
    assert.equal(pools.scopeOf('sandbox:shell'), 'cluster');
    assert.throws(() => config({ browser: { scope: 'fleet' } }), /pools_config_invalid|scope/);
  });

  it('gives each kind of pool its default limit, below what the configuration says', () => {
    const pools = new PoolRegistry({ inlineLimit: 7 });
    pools.setDefaultLimit('model:gpt', 12);
    assert.equal(pools.pool('inline').limit, 7);
    assert.equal(new PoolRegistry().pool('inline').limit, INLINE_POOL_LIMIT_DEFAULT);
    assert.equal(pools.pool('sandbox:shell').limit, SANDBOX_POOL_LIMIT_DEFAULT);
    assert.equal(pools.pool('browser').limit, DECLARED_POOL_LIMIT_DEFAULT);
    assert.equal(pools.pool('model:gpt').limit, 12);
    pools.configure(config({ 'model:gpt': { limit: 3, maxQueued: 5 }, browser: { limit: 2 } }));
    assert.equal(pools.pool('model:gpt').limit, 3);
    assert.equal(pools.pool('model:gpt').maxQueued, 5);
    assert.equal(pools.pool('browser').limit, 2);
    pools.configure(config({}));
    assert.equal(
      pools.pool('model:gpt').limit,
      12,
      'dropped from the file: back to the model’s own limit',
    );
    assert.equal(pools.pool('browser').limit, DECLARED_POOL_LIMIT_DEFAULT);
    assert.throws(() => pools.pool('not a pool'), RangeError);
  });

  it('applies a new configuration to waiting effects at once', async () => {
    const pools = new PoolRegistry();
    pools.configure(config({ browser: { limit: 1 } }));
    const granted: string[] = [];
    for (const tag of ['a', 'b', 'c'])
      void pools
        .acquire('browser', { tenantId: 't', priority: 'batch' })
        .then(() => granted.push(tag));
    await flush();
    assert.deepEqual(granted, ['a']);
    pools.configure(config({ browser: { limit: 3 } }));
    await flush();
    assert.deepEqual(granted, ['a', 'b', 'c']);
  });

  it('caps a tenant by its record first, then the file’s entry for it, then the file’s default', async () => {
    const pools = new PoolRegistry();
    pools.configure(config({ inline: { limit: 10, tenantCaps: { default: 1, big: 3 } } }));
    const held = async (tenantId: string, n: number) => {
      let granted = 0;
      for (let i = 0; i < n; i++)
        void pools.acquire('inline', { tenantId, priority: 'interactive' }).then(() => granted++);
      await flush();
      return granted;
    };
    assert.equal(await held('small', 4), 1);
    assert.equal(await held('big', 4), 3);
    pools.setTenantCapResolver((tenantId, pool) =>
      tenantId === 'small' && pool === 'inline' ? 2 : undefined,
    );
    await flush();
    assert.equal(
      pools
        .pool('inline')
        .snapshot()
        .tenants.find((t) => t.tenantId === 'small')?.running,
      2,
      'a raised cap admits at once',
    );
    assert.equal(
      pools
        .pool('inline')
        .snapshot()
        .tenants.find((t) => t.tenantId === 'small')?.cap,
      2,
    );
  });

  it('serves tenants by the weights its resolver gives', async () => {
    const pools = new PoolRegistry();
    pools.configure(config({ browser: { limit: 1 } }));
    pools.setTenantWeightResolver((tenantId) => (tenantId === 'heavy' ? 3 : undefined));
    const order: string[] = [];
    const releases: Array<() => void> = [];
    const want = (tenantId: string) =>
      void pools.acquire('browser', { tenantId, priority: 'batch' }).then((release) => {
        order.push(tenantId);
        releases.push(release);
      });
    want('light'); // holds the slot
    for (let i = 0; i < 8; i++) {
      want('heavy');
      want('light');
    }
    await flush();
    for (let i = 0; i < 8; i++) {
      releases.shift()!();
      await flush();
    }
    const served = order.slice(1, 9);
    assert.equal(served.filter((t) => t === 'heavy').length, 6, served.join(' '));
  });

  it('snapshots every pool for the admin API', async () => {
    const pools = new PoolRegistry();
    pools.configure(config({ 'sandbox:shell': { limit: 1 } }));
    const release = await pools.acquire('sandbox:shell', { tenantId: 't1', priority: 'batch' });
    void pools.acquire('sandbox:shell', { tenantId: 't2', priority: 'batch' });
    const [snapshot] = pools.snapshot();
    assert.equal(snapshot?.name, 'sandbox:shell');
    assert.equal(snapshot?.running, 1);
    assert.equal(snapshot?.queued, 1);
    assert.deepEqual(
      snapshot?.tenants.map((t) => [t.tenantId, t.running, t.queued]),
      [
        ['t1', 1, 0],
        ['t2', 0, 1],
      ],
    );
    release();
  });
});

describe('tenant weights', () => {
  it('come from the tenant records, re-read on an interval; a store error keeps the last ones', async () => {
    const pools = new PoolRegistry();
    pools.configure(config({ browser: { limit: 1 } }));
    let tenants = [
      { id: 'heavy', weight: 3 },
      { id: 'light', weight: 1 },
    ];
    let failing = false;
    const store = {
      listTenants: async () => {
        if (failing) throw new Error('database down');
        return tenants as never;
      },
    };
    const weights = followTenantPoolPolicy(store, pools, 20);
    await weights.ready;
    const order: string[] = [];
    const releases: Array<() => void> = [];
    const want = (tenantId: string) =>
      void pools.acquire('browser', { tenantId, priority: 'batch' }).then((release) => {
        order.push(tenantId);
        releases.push(release);
      });
    want('light');
    for (let i = 0; i < 4; i++) {
      want('heavy');
      want('light');
    }
    await flush();
    for (let i = 0; i < 4; i++) {
      releases.shift()!();
      await flush();
    }
    assert.equal(order.slice(1, 5).filter((t) => t === 'heavy').length, 3, order.join(' '));
    failing = true;
    tenants = [];
    await new Promise((r) => setTimeout(r, 60));
    weights.close();
    for (const release of releases) release();
  });
});

describe('tenant pool caps', () => {
  it('come from the tenant records (poolCaps), win over the pools file, and a raised cap admits waiters', async () => {
    const pools = new PoolRegistry();
    pools.configure(config({ browser: { limit: 4, tenantCaps: { default: 3 } } }));
    let tenants = [
      { id: 'capped', weight: 1, poolCaps: { browser: 1 } },
      { id: 'free', weight: 1, poolCaps: {} },
    ];
    const follower = followTenantPoolPolicy(
      { listTenants: async () => tenants as never },
      pools,
      20,
    );
    await follower.ready;
    const granted: string[] = [];
    for (const tenantId of ['capped', 'capped', 'capped', 'free'])
      void pools
        .acquire('browser', { tenantId, priority: 'batch' })
        .then(() => granted.push(tenantId));
    await flush();
    assert.deepEqual(
      granted.sort(),
      ['capped', 'free'],
      'the record caps capped at 1 though the pool has room',
    );
    tenants = [
      { id: 'capped', weight: 1, poolCaps: { browser: 2 } },
      { id: 'free', weight: 1, poolCaps: {} },
    ];
    const deadline = Date.now() + 2_000;
    while (granted.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    follower.close();
    assert.deepEqual(
      granted.sort(),
      ['capped', 'capped', 'free'],
      'a raised cap in the record admitted one more',
    );
  });
});

describe('pools file', () => {
  it('names every bad field by its path', () => {
    assert.throws(
      () => parsePoolsConfig({ pools: { inline: { limit: 0, maxQueud: 3 } } }, 'pools.json'),
      (error: Error & { code?: string }) =>
        error.code === 'pools_config_invalid' &&
        /inline\.limit/.test(error.message) &&
        /maxQueud/.test(error.message),
    );
    assert.throws(
      () => parsePoolsConfig({ pools: { 'bad name': {} } }, 'pools.json'),
      /pools\.bad name/,
    );
    assert.throws(
      () => parsePoolsConfig({ pools: { inline: { tenantCaps: { default: 1.5 } } } }, 'pools.json'),
      /tenantCaps\.default/,
    );
  });

  it('is applied when it changes and on reload; a bad file keeps the previous configuration', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-pools-file-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'pools.json');
    writeFileSync(path, JSON.stringify({ pools: { browser: { limit: 2 } } }));
    const pools = new PoolRegistry();
    const logs: Array<{ level: string; message: string }> = [];
    const watcher = watchPoolsFile(
      path,
      (c) => pools.configure(c),
      (level, message) => void logs.push({ level, message }),
    );
    t.after(() => watcher.close());
    assert.equal(watcher.reload(), true);
    assert.equal(pools.pool('browser').limit, 2);

    writeFileSync(path, JSON.stringify({ pools: { browser: { limit: 5 } } }));
    const deadline = Date.now() + 5_000;
    while (pools.pool('browser').limit !== 5 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(pools.pool('browser').limit, 5, 'the change was noticed without a reload');

    writeFileSync(path, '{ "pools": { "browser": { "limit": -1 } } }');
    assert.equal(watcher.reload(), false);
    assert.equal(pools.pool('browser').limit, 5);
    assert.ok(
      logs.some((l) => l.level === 'error' && /previous pool configuration stays/.test(l.message)),
    );
    writeFileSync(path, 'not json');
    assert.equal(watcher.reload(), false);
    assert.equal(pools.pool('browser').limit, 5);
  });
});

describe('tool-declared pools', () => {
  it('defineTool accepts a pool name and refuses a bad one or a model pool', () => {
    const base = {
      description: 'd',
      effect: 'read' as const,
      input: z.object({}),
      run: () => ({}),
    };
    assert.equal(defineTool({ ...base, name: 'browse', pool: 'browser' }).pool, 'browser');
    assert.throws(
      () => defineTool({ ...base, name: 'browse2', pool: 'has space' }),
      /pool must match/,
    );
    assert.throws(() => defineTool({ ...base, name: 'browse3', pool: 'model:gpt' }), /model pool/);
  });
});
