// Pool slots leased from the database: the contract behind pool limits that hold across every
// process sharing a store (scheduling/global-slots.ts is the client). A holder is one process
// incarnation with a fencing token and a lease it renews; it holds slots per (pool, tenant). The
// store refuses any grant past the pool's limit or the tenant's cap, counting only live holders, so
// a lost process's slots come back at its lease's expiry. No I/O here: the types both stores share.

/** A holder incarnation: its fencing token and when its lease ends (ms since the epoch). */
export interface PoolSlotHolder {
  token: number;
  expiresAt: number;
}

export interface PoolSlotRequest {
  pool: string;
  tenantId: string;
  /** The holder's fencing token (openPoolSlotHolder). */
  token: number;
  /** The pool's limit over every process. */
  limit: number;
  /** Most slots of this pool the tenant may hold over every process; null when uncapped. */
  tenantCap: number | null;
  /** Slots asked for now (≥ 1). */
  count: number;
  /**
   * Slots this holder waits for in all, for this tenant (≥ count); what is not granted is recorded
   * as its `wanted`, which other holders read to give surplus back.
   */
  wanted: number;
}

export interface PoolSlotGrant {
  /** Slots granted now, 0 ≤ granted ≤ count. */
  granted: number;
  /**
   * Slots this holder should hold at most while others wait (ceil(limit / active holders)), or null
   * when no other holder waits: above it, a released slot goes back rather than to a local waiter.
   */
  fairShare: number | null;
}

/** One live slot row (operators, tests). */
export interface PoolSlotLease {
  pool: string;
  tenantId: string;
  holder: string;
  token: number;
  slots: number;
  wanted: number;
  expiresAt: number;
}

/** The renewal's answer: whether the lease still holds, and where others wait. */
export interface PoolSlotRenewal {
  renewed: boolean;
  expiresAt: number;
  /** Pools in which another live holder waits for slots. */
  poolsWantedByOthers: string[];
}
