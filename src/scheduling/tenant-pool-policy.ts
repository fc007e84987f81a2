// Keeps the pools' view of tenants current: reads the tenant records every
// TENANT_WEIGHTS_REFRESH_MS and hands their weights and per-pool caps (`poolCaps`) to the pool
// registry, so a weight or cap changed through the admin API reaches the effect pools within that
// interval. It only reads tenants; a store that cannot answer leaves the previous view.
import type { TenantRecord } from '../domain/records.ts';
import type { PoolRegistry } from './pool-registry.ts';

export const TENANT_WEIGHTS_REFRESH_MS = 5_000;

/**
 * @example
 * const weights = followTenantPoolPolicy(store, pools);
 * await weights.ready; // first read done
 * weights.close();
 */
export function followTenantPoolPolicy(
  store: { listTenants(): Promise<TenantRecord[]> },
  pools: PoolRegistry,
  intervalMs: number = TENANT_WEIGHTS_REFRESH_MS,
): { ready: Promise<void>; close(): void } {
  let weights = new Map<string, number>();
  let caps = new Map<string, Readonly<Record<string, number>>>();
  pools.setTenantWeightResolver((tenantId) => weights.get(tenantId));
  pools.setTenantCapResolver((tenantId, pool) => caps.get(tenantId)?.[pool]);
  const read = async (): Promise<void> => {
    try {
      const tenants = await store.listTenants();
      const next = new Map(tenants.map((t) => [t.id, t.weight]));
      const nextCaps = new Map(tenants.map((t) => [t.id, t.poolCaps]));
      const changed =
        next.size !== weights.size ||
        [...next].some(([id, w]) => weights.get(id) !== w) ||
        [...nextCaps].some(([id, c]) => JSON.stringify(caps.get(id) ?? {}) !== JSON.stringify(c));
      weights = next;
      caps = nextCaps;
      if (changed) pools.refresh();
    } catch {
      // the store is unavailable: keep the weights we have
    }
  };
  const timer = setInterval(() => void read(), intervalMs);
  timer.unref();
  return { ready: read(), close: () => clearInterval(timer) };
}
