// Dominant-resource fairness across pools, on real pools of a real registry: the grant order it
// gives where weighted fair queuing gives another, and properties over random tenants, weights and
// pool limits (fast-check): each slot goes to the least weighted dominant share, tenants competing in
// the same pools converge to equal weighted dominant shares, and no backlogged tenant falls below
// the dominant share a static partition by weight would give it (by more than one slot).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { dominantShare } from './drf-chooser.ts';
import { PoolRegistry, type FairnessPolicy } from './pool-registry.ts';

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A registry whose tenants keep `demand` pools backlogged: every grant is replaced by a new waiter. */
class Backlog {
  readonly pools: PoolRegistry;
  /** Held slots, oldest grant first: [tenant, pool, release]. */
  readonly held: Array<[string, string, () => void]> = [];
  readonly grants: Array<[string, string]> = [];
  readonly #demand: ReadonlyMap<string, readonly string[]>;

  constructor(
    fairness: FairnessPolicy,
    limits: Record<string, number>,
    weights: ReadonlyMap<string, number>,
    demand: ReadonlyMap<string, readonly string[]>,
  ) {
    this.pools = new PoolRegistry({ fairness });
    this.pools.setTenantWeightResolver((t) => weights.get(t));
    for (const [name, limit] of Object.entries(limits)) this.pools.setDefaultLimit(name, limit);
    this.#demand = demand;
  }

  async start(): Promise<void> {
    for (const [tenant, pools] of this.#demand) for (const pool of pools) this.#wait(tenant, pool);
    await flush();
  }

  #wait(tenant: string, pool: string): void {
    void this.pools.acquire(pool, { tenantId: tenant, priority: 'batch' }).then((release) => {
      this.held.push([tenant, pool, release]);
      this.grants.push([tenant, pool]);
      this.#wait(tenant, pool);
    });
  }

  /** Releases the oldest held slot (its pool grants it again) and lets the grant land. */
  async turnOver(): Promise<void> {
    const [, , release] = this.held.shift()!;
    release();
    await flush();
  }

  weightedShare(tenant: string, limits: Record<string, number>, weight: number): number {
    return (
      dominantShare(
        Object.entries(limits).map(([pool, limit]) => [
          this.pools.pool(pool).heldBy(tenant),
          limit,
        ]),
      ) / weight
    );
  }
}

describe('DRF across pools', () => {
  it('grants a freed slot to the tenant with the least dominant share, where weighted fair queuing grants the older head', async () => {
    const order = async (fairness: FairnessPolicy): Promise<string[]> => {
      const pools = new PoolRegistry({ fairness });
      pools.setDefaultLimit('model:m', 1);
      pools.setDefaultLimit('sandbox:s', 2);
      const blocker = await pools.acquire('model:m', { tenantId: 'other', priority: 'batch' });
      await pools.acquire('sandbox:s', { tenantId: 'a', priority: 'batch' }); // a: dominant share 1/2
      const granted: string[] = [];
      // a queues first (the older head); b has no slots anywhere (dominant share 0).
      const a = pools.acquire('model:m', {
        tenantId: 'a',
        priority: 'batch',
        run: { admittedAt: 1, deadlineAt: null },
      });
      const b = pools.acquire('model:m', {
        tenantId: 'b',
        priority: 'batch',
        run: { admittedAt: 2, deadlineAt: null },
      });
      void a.then((release) => {
        granted.push('a');
        release();
      });
      void b.then((release) => {
        granted.push('b');
        release();
      });
      blocker();
      await flush();
      await flush();
      return granted;
    };
    assert.deepEqual(await order('weighted'), ['a', 'b']);
    assert.deepEqual(await order('drf'), ['b', 'a']);
  });

  const scenario = fc.record({
    limits: fc.record({
      'model:m': fc.integer({ min: 1, max: 12 }),
      'sandbox:s': fc.integer({ min: 1, max: 12 }),
      browser: fc.integer({ min: 1, max: 12 }),
    }),
    weights: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 2, maxLength: 5 }),
    demand: fc.array(fc.subarray(['model:m', 'sandbox:s', 'browser'], { minLength: 1 }), {
      minLength: 5,
      maxLength: 5,
    }),
  });

  it('gives every freed slot to the waiting tenant with the least weighted dominant share', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ limits, weights, demand }) => {
        const tenants = weights.map((_, i) => `t${i}`);
        const w = new Map(tenants.map((t, i) => [t, weights[i]!]));
        const d = new Map(tenants.map((t, i) => [t, demand[i]!]));
        const backlog = new Backlog('drf', limits, w, d);
        await backlog.start();
        for (let i = 0; i < 60; i++) {
          const [, pool] = backlog.held[0]!;
          const before = backlog.grants.length;
          await backlog.turnOver();
          assert.equal(backlog.grants.length, before + 1, 'the freed slot was granted again');
          const [tenant, grantedPool] = backlog.grants[before]!;
          assert.equal(grantedPool, pool);
          const waiting = tenants.filter((t) => d.get(t)!.includes(pool));
          // The chosen tenant's share before this grant is the least among the pool's waiters.
          const chosenBefore =
            dominantShare(
              Object.entries(limits).map(([p, limit]) => [
                backlog.pools.pool(p).heldBy(tenant) - (p === pool ? 1 : 0),
                limit,
              ]),
            ) / w.get(tenant)!;
          const others = waiting
            .filter((t) => t !== tenant)
            .map(
              (t) =>
                dominantShare(
                  Object.entries(limits).map(([p, limit]) => [
                    backlog.pools.pool(p).heldBy(t),
                    limit,
                  ]),
                ) / w.get(t)!,
            );
          assert.ok(
            others.every((s) => chosenBefore <= s + 1e-12),
            `${tenant} was not the least (${chosenBefore} vs ${others})`,
          );
        }
      }),
      { numRuns: 40 },
    );
  });

  it('tenants backlogged in the same pools converge to equal weighted dominant shares (within one slot)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ limits, weights }) => {
        const tenants = weights.map((_, i) => `t${i}`);
        const w = new Map(tenants.map((t, i) => [t, weights[i]!]));
        const all = ['model:m', 'sandbox:s', 'browser'];
        const backlog = new Backlog('drf', limits, w, new Map(tenants.map((t) => [t, all])));
        await backlog.start();
        const slots = Object.values(limits).reduce((a, b) => a + b, 0);
        for (let i = 0; i < slots * 6; i++) await backlog.turnOver();
        const shares = tenants.map((t) => backlog.weightedShare(t, limits, w.get(t)!));
        // One slot of the smallest pool, for the lightest tenant: the granularity of a share.
        const slot = 1 / Math.min(...Object.values(limits)) / Math.min(...weights);
        assert.ok(
          Math.max(...shares) - Math.min(...shares) <= slot + 1e-9,
          `shares ${shares} differ by more than ${slot}`,
        );
      }),
      { numRuns: 40 },
    );
  });

  // Not claimed: that a tenant gains nothing by asking for pools it does not need. DRF is
  // strategy-proof when a task takes one slot of every pool it needs at once; Keel's pools are taken
  // one at a time, and then it is not: with model 4, sandbox 3, browser 7, weights 3/2/2/3 and t0
  // needing sandbox + browser, t0 settles on 2 sandbox and 0 browser, but on 1 sandbox and 4 browser
  // when it also asks for model slots (the order in which slots turn over decides the equilibrium).
  it('no backlogged tenant holds a dominant share below its weight’s part by more than one slot', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ limits, weights, demand }) => {
        const tenants = weights.map((_, i) => `t${i}`);
        const w = new Map(tenants.map((t, i) => [t, weights[i]!]));
        const needs = new Map(tenants.map((t, i) => [t, demand[i]!]));
        const backlog = new Backlog('drf', limits, w, needs);
        await backlog.start();
        const slots = Object.values(limits).reduce((a, b) => a + b, 0);
        for (let i = 0; i < slots * 6; i++) await backlog.turnOver();
        const totalWeight = weights.reduce((a, b) => a + b, 0);
        for (const tenant of tenants) {
          const pools = needs.get(tenant)!;
          const share = dominantShare(
            pools.map((p) => [
              backlog.pools.pool(p).heldBy(tenant),
              limits[p as keyof typeof limits],
            ]),
          );
          // What a static partition by weight would give it in every pool, less one slot of the
          // coarsest pool it asks for.
          const floor = w.get(tenant)! / totalWeight;
          const slot = Math.max(...pools.map((p) => 1 / limits[p as keyof typeof limits]));
          assert.ok(
            share + slot >= floor - 1e-9,
            `${tenant} holds a dominant share of ${share}, below ${floor} by more than ${slot}`,
          );
        }
      }),
      { numRuns: 100 },
    );
  });
});
