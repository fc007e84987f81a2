// What the dashboard can show beyond the store: live snapshots from other planes (scheduling pools,
// sandbox nodes, tenant quotas). Each source is optional; a missing one is reported as "not
// available" — never invented. Planes plug in by passing these callbacks to buildApi({ dashboard
// }); this module holds no state.

/** One in-process pool (model gateway, a tool pool) as the scheduling plane sees it right now. */
export interface PoolSnapshot {
  name: string;
  kind: 'model' | 'tool' | 'sandbox' | 'runs';
  queued: number;
  running: number;
  /** The pool's concurrency limit, when it has one. */
  concurrency: number | null;
  oldestQueuedAgeMs: number | null;
  /** Free-text state, e.g. a breaker that is open. */
  state?: string;
}

/** One sandbox node as the placement plane last heard from it. */
export interface NodeSnapshot {
  id: string;
  isolation: string;
  state: string;
  slotsUsed: number;
  slotsTotal: number;
  memoryUsedBytes: number | null;
  memoryTotalBytes: number | null;
  lastSeenAt: string;
}

/** A tenant's configured limits (quotas), when the scheduling plane has them. */
export interface TenantQuotaSnapshot {
  maxConcurrentRuns: number | null;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  weight: number | null;
}

export interface DashboardSources {
  pools?: () => PoolSnapshot[] | Promise<PoolSnapshot[]>;
  nodes?: () => NodeSnapshot[] | Promise<NodeSnapshot[]>;
  quotas?: (tenantId: string) => TenantQuotaSnapshot | null | Promise<TenantQuotaSnapshot | null>;
}
