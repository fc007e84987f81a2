// Dominant-resource fairness (DRF) across pools, as a waiter chooser a pool may use instead of
// weighted fair queuing per pool (KEEL_FAIRNESS_POLICY=drf). A tenant's dominant share is the
// largest, over the pools it holds slots of, of (slots held / pool limit); when a slot frees, the
// waiting tenant with the least dominant share divided by its weight gets it (ties: the older head,
// then the tenant id). It only chooses; it never grants, counts or reads the pools' waiters.
import type { BackloggedTenant } from '../domain/fair-share.ts';

/**
 * Chooses which backlogged tenant a pool's next free slot goes to. `candidates` are the tenants with
 * a waiter and room under their cap in `pool`.
 */
export interface WaiterChooser {
  choose(pool: string, candidates: readonly BackloggedTenant[]): BackloggedTenant | undefined;
}

/** What DRF reads about the pools: each one's limit and the slots a tenant holds in it. */
export interface PoolHoldings {
  /** [slots held, pool limit] for every pool the tenant holds slots of. */
  holdings(tenantId: string): Iterable<readonly [held: number, limit: number]>;
}

/** max over pools of held / limit (0 for a tenant that holds nothing). */
export function dominantShare(holdings: Iterable<readonly [number, number]>): number {
  let share = 0;
  for (const [held, limit] of holdings) if (limit > 0) share = Math.max(share, held / limit);
  return share;
}

/**
 * The candidate with the least weighted dominant share (dominant share / weight), then the older
 * head, then the smaller tenant id.
 * @example
 * leastWeightedDominantShare([{ tenantId: 'a', weight: 1, ... }, ...], (id) => shares.get(id)!);
 */
export function leastWeightedDominantShare<
  T extends { tenantId: string; weight: number; headKey: number },
>(candidates: readonly T[], shareOf: (tenantId: string) => number): T | undefined {
  let best: T | undefined;
  let bestShare = 0;
  for (const c of candidates) {
    const share = shareOf(c.tenantId) / c.weight;
    if (
      best === undefined ||
      share < bestShare ||
      (share === bestShare &&
        (c.headKey < best.headKey || (c.headKey === best.headKey && c.tenantId < best.tenantId)))
    ) {
      best = c;
      bestShare = share;
    }
  }
  return best;
}

export class DominantResourceChooser implements WaiterChooser {
  readonly #pools: PoolHoldings;

  constructor(pools: PoolHoldings) {
    this.#pools = pools;
  }

  choose(_pool: string, candidates: readonly BackloggedTenant[]): BackloggedTenant | undefined {
    return leastWeightedDominantShare(candidates, (tenantId) =>
      dominantShare(this.#pools.holdings(tenantId)),
    );
  }
}
