// Keeps the pools' view of tenant weights current: reads the tenant records every TENANT_WEIGHTS_REFRESH_MS and hands
// the weights to the pool registry, so a weight changed through the admin API reaches the effect pools within that
// interval. It only reads tenants; a store that cannot answer leaves the previous weights.
import type { TenantRecord } from '../store/records.ts';
import type { PoolRegistry } from './pool-registry.ts';

export const TENANT_WEIGHTS_REFRESH_MS = 5_000;

/**
 * @example
 * const weights = followTenantWeights(store, pools);
 * await weights.ready; // first read done
 * weights.close();
 */
export function followTenantWeights(
  store: { listTenants(): Promise<TenantRecord[]> }, pools: PoolRegistry, intervalMs: number = TENANT_WEIGHTS_REFRESH_MS,
): { ready: Promise<void>; close(): void } {
  let weights = new Map<string, number>();
  pools.setTenantWeightResolver((tenantId) => weights.get(tenantId));
  const read = async (): Promise<void> => {
    try {
      const next = new Map((await store.listTenants()).map((t) => [t.id, t.weight]));
      const changed = next.size !== weights.size || [...next].some(([id, w]) => weights.get(id) !== w);
      weights = next;
      if (changed) pools.refresh();
    } catch {
      // the store is unavailable: keep the weights we have
    }
  };
  const timer = setInterval(() => void read(), intervalMs);
  timer.unref();
  return { ready: read(), close: () => clearInterval(timer) };
}
