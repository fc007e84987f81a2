import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BATCH_AGING_MS } from '../domain/fair-share.ts';
import { runDueAt } from '../domain/run-order.ts';
import { Pool, type PoolObserver, type PoolPolicy, type PoolRejection } from './pool.ts';

const uncapped = (
  weights: Record<string, number> = {},
  caps: Record<string, number> = {},
): PoolPolicy => ({
  weightOf: (t) => weights[t] ?? 1,
  capOf: (t) => caps[t],
});

/** Holds granted releases in grant order and records which tenant got each slot. */
function harness(pool: Pool) {
  const granted: Array<{ tenant: string; tag: string; release: () => void }> = [];
  const want = (
    tenant: string,
    tag = tenant,
    priority: 'interactive' | 'batch' = 'batch',
    signal?: AbortSignal,
  ) =>
    pool
      .acquire({ tenantId: tenant, priority, ...(signal === undefined ? {} : { signal }) })
      .then((release) => void granted.push({ tenant, tag, release }));
  const releaseFirst = async () => {
    granted.shift()!.release();
    await flush();
  };
  return { granted, want, releaseFirst };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Pool', () => {
  it('never grants past its limit and serves a small tenant next to a flood', async () => {
    const pool = new Pool('inline', { limit: 1, maxQueued: 100 }, uncapped());
    const h = harness(pool);
    for (let i = 0; i < 10; i++) void h.want('a', `a${i}`);
    void h.want('b', 'b0');
    void h.want('b', 'b1');
    await flush();
    assert.equal(pool.running, 1);
    assert.equal(pool.queued, 11);
    const order: string[] = [h.granted[0]!.tag];
    while (h.granted.length > 0) {
      await h.releaseFirst();
      if (h.granted[0] !== undefined) order.push(h.granted[0].tag);
      assert.ok(pool.running <= 1);
    }
    // B is served alternately with A, not after A's whole backlog.
    assert.ok(order.indexOf('b1') <= 4, order.join(' '));
    assert.equal(pool.running, 0);
    assert.equal(pool.queued, 0);
  });

  it('serves interactive before batch inside a tenant, but an aged batch item first', async () => {
    let now = 1_000_000;
    const pool = new Pool('p', { limit: 1, maxQueued: 100 }, uncapped(), undefined, () => now);
    const h = harness(pool);
    void h.want('a', 'holder');
    void h.want('a', 'batch-old', 'batch');
    now += 10;
    void h.want('a', 'interactive', 'interactive');
    now += BATCH_AGING_MS; // the old batch item has now waited longer than the aging
    void h.want('a', 'interactive-late', 'interactive');
    await flush();
    const order: string[] = [];
    while (h.granted.length > 0) {
      await h.releaseFirst();
      if (h.granted[0] !== undefined) order.push(h.granted[0].tag);
    }
    assert.deepEqual(order, ['interactive', 'batch-old', 'interactive-late']);
  });

  it('serves inside a tenant the effect of the run admitted first, not the call queued first', async () => {
    let now = 1_000_000;
    const pool = new Pool(
      'model:m',
      { limit: 1, maxQueued: 100 },
      uncapped(),
      undefined,
      () => now,
    );
    const granted: string[] = [];
    const held: Array<() => void> = [];
    const want = (tag: string, admittedAt: number, deadlineAt: number | null = null) =>
      void pool
        .acquire({ tenantId: 'a', priority: 'interactive', run: { admittedAt, deadlineAt } })
        .then((release) => {
          granted.push(tag);
          held.push(release);
        });
    want('holder', now);
    // Under saturation every run's next call queues after other runs' earlier calls: the run
    // admitted first (its second round) must still go first, and a nearer deadline before both.
    want('young-run', now - 100);
    now += 10;
    want('old-run', now - 5_000);
    now += 10;
    want('urgent-run', now - 50, now + 1_000);
    await flush();
    while (held.length > 0) {
      held.shift()!();
      await flush();
    }
    assert.deepEqual(granted, ['holder', 'urgent-run', 'old-run', 'young-run']);
  });

  it("grants inside one tenant and class in the order of the runs' due times (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            admittedAt: fc.integer({ min: 0, max: 1_000_000 }),
            deadline: fc.option(fc.integer({ min: 0, max: 1_000_000 })),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        async (runs) => {
          const pool = new Pool(
            'p',
            { limit: 1, maxQueued: 1_000 },
            uncapped(),
            undefined,
            () => 0,
          );
          const hold = await pool.acquire({ tenantId: 'a', priority: 'batch' });
          const order: number[] = [];
          const held: Array<() => void> = [];
          for (const [i, r] of runs.entries())
            void pool
              .acquire({
                tenantId: 'a',
                priority: 'batch',
                run: { admittedAt: r.admittedAt, deadlineAt: r.deadline },
              })
              .then((release) => {
                order.push(i);
                held.push(release);
              });
          hold();
          await flush();
          while (held.length > 0) {
            held.shift()!();
            await flush();
          }
          const due = (i: number) =>
            runDueAt({ admittedAt: runs[i]!.admittedAt, deadlineAt: runs[i]!.deadline });
          const expected = runs.map((_, i) => i).sort((x, y) => due(x) - due(y) || x - y);
          assert.deepEqual(order, expected);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('reports the age of the oldest run waiting, by admission', async () => {
    const now = 1_000_000;
    const pool = new Pool('p', { limit: 1, maxQueued: 100 }, uncapped(), undefined, () => now);
    const release = await pool.acquire({ tenantId: 'a', priority: 'batch' });
    assert.equal(pool.oldestRunAgeMs(now), null);
    void pool.acquire({
      tenantId: 'a',
      priority: 'batch',
      run: { admittedAt: now - 10, deadlineAt: null },
    });
    void pool.acquire({
      tenantId: 'b',
      priority: 'batch',
      run: { admittedAt: now - 7_000, deadlineAt: null },
    });
    assert.equal(pool.oldestRunAgeMs(now), 7_000);
    assert.equal(pool.oldestWaitMs(now), 0); // the calls themselves just queued
    assert.equal(pool.snapshot(now).oldestRunAgeMs, 7_000);
    release();
  });

  it('keeps a tenant at its cap waiting while other tenants use the free slots', async () => {
    const pool = new Pool('sandbox:shell', { limit: 3, maxQueued: 100 }, uncapped({}, { a: 1 }));
    const h = harness(pool);
    void h.want('a', 'a0');
    void h.want('a', 'a1');
    void h.want('b', 'b0');
    void h.want('b', 'b1');
    await flush();
    assert.deepEqual(
      h.granted.map((g) => g.tag),
      ['a0', 'b0', 'b1'],
    );
    assert.equal(pool.snapshot().tenants.find((t) => t.tenantId === 'a')?.queued, 1);
    await h.releaseFirst(); // a0 ends: a1 may go
    assert.deepEqual(
      h.granted.map((g) => g.tag),
      ['b0', 'b1', 'a1'],
    );
  });

  it('admits at once when its limit is raised and lets holders finish when it is lowered', async () => {
    const pool = new Pool('model:m', { limit: 1, maxQueued: 100 }, uncapped());
    const h = harness(pool);
    for (let i = 0; i < 4; i++) void h.want('a', `a${i}`);
    await flush();
    assert.equal(h.granted.length, 1);
    pool.setLimit(3);
    await flush();
    assert.equal(h.granted.length, 3);
    pool.setLimit(1);
    assert.equal(pool.running, 3); // nobody is interrupted
    await h.releaseFirst();
    await h.releaseFirst();
    assert.equal(pool.running, 1);
    assert.equal(pool.queued, 1); // still over the new limit: no admission
    await h.releaseFirst();
    assert.equal(pool.running, 1);
    assert.equal(pool.queued, 0);
  });

  it('rejects past maxQueued with a retryable pool_queue_full and withdraws an aborted waiter', async () => {
    const rejected: PoolRejection[] = [];
    const observer: PoolObserver = {
      admitted: () => {},
      released: () => {},
      rejected: (_p, _t, reason) => void rejected.push(reason),
    };
    const pool = new Pool('browser', { limit: 1, maxQueued: 1 }, uncapped(), observer);
    const release = await pool.acquire({ tenantId: 'a', priority: 'batch' });
    const controller = new AbortController();
    const waiting = pool.acquire({ tenantId: 'a', priority: 'batch', signal: controller.signal });
    await assert.rejects(
      pool.acquire({ tenantId: 'b', priority: 'interactive' }),
      (e: unknown) =>
        (e as { code?: string; retryable?: boolean }).code === 'pool_queue_full' &&
        (e as { retryable: boolean }).retryable,
    );
    controller.abort(new Error('cancelled'));
    await assert.rejects(waiting, /cancelled/);
    assert.equal(pool.queued, 0);
    assert.deepEqual(rejected, ['queue_full', 'aborted']);
    release();
    release(); // harmless
    assert.equal(pool.running, 0);
    assert.equal(pool.oldestWaitMs(Date.now()), null);
  });

  it('gives backlogged tenants service in proportion to their weights over any window of 1,000 grants', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 2, maxLength: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 50, maxLength: 400 }),
        async (weights, limit, arrivals) => {
          const tenants = weights.map((_, i) => `t${i}`);
          const pool = new Pool(
            'p',
            { limit, maxQueued: 1_000_000 },
            uncapped(Object.fromEntries(tenants.map((t, i) => [t, weights[i]!]))),
          );
          const held: Array<() => void> = [];
          const served: string[] = [];
          const want = (tenant: string, interactive: boolean) =>
            void pool
              .acquire({ tenantId: tenant, priority: interactive ? 'interactive' : 'batch' })
              .then((release) => {
                served.push(tenant);
                held.push(release);
              });
          // A random arrival order first, then every tenant stays backlogged: each grant is replaced
          // by a new arrival.
          for (const [pick, interactive] of arrivals)
            want(tenants[pick % tenants.length]!, interactive);
          for (const tenant of tenants) for (let i = 0; i < limit + 1; i++) want(tenant, false);
          await flush();
          let k = 0;
          while (served.length < 2_000 + limit) {
            const tenant = served[served.length - held.length]!;
            held.shift()!();
            want(tenant, arrivals[k++ % arrivals.length]![1]);
            await flush();
          }
          const total = weights.reduce((a, b) => a + b, 0);
          for (let start = 0; start + 1_000 <= served.length; start += 250) {
            const window = served.slice(start, start + 1_000);
            for (const [i, tenant] of tenants.entries()) {
              const share = window.filter((t) => t === tenant).length / 1_000;
              const expected = weights[i]! / total;
              assert.ok(
                Math.abs(share - expected) <= 0.1 * expected,
                `tenant ${tenant} weight ${weights[i]}: share ${share} vs ${expected.toFixed(3)} (window at ${start})`,
              );
            }
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
