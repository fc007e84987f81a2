// Pool limits across processes: this process's holder of pool slots leased from the shared store
// (store/pool-slot-leases.ts). The local pool orders waiters and bounds the process; a call it
// admits then takes one cluster-wide slot of (pool, tenant) here. Slots are asked for in blocks (as
// many as wait), handed straight to the next local waiter of the same tenant on release unless
// another process waits and this one holds its fair share or more, otherwise given back (returns
// coalesced per tick). The holder's lease is renewed every leaseMs / 3; a lost lease (renewal
// refused) opens a new holder with a new fencing token, and the slots of the old one are neither
// reused nor returned. It never grants a call without a slot the store granted under a live lease
// it knows of, and never decides order among tenants (the local pool did).
import { KeelError } from '../domain/keel-error.ts';
import type { PoolSlotGrant, PoolSlotHolder, PoolSlotRenewal } from '../store/pool-slot-leases.ts';
import type { Store } from '../store/store.ts';

/** The store methods the holder uses. */
export type PoolSlotStore = Pick<
  Store,
  | 'openPoolSlotHolder'
  | 'grantPoolSlots'
  | 'returnPoolSlots'
  | 'renewPoolSlotHolder'
  | 'dropPoolSlotHolder'
>;

/** Hears what the holder does (telemetry); must be cheap and never throw. */
export interface GlobalSlotsObserver {
  /** Slots of `pool` this process holds from the store now. */
  slotsHeld(pool: string, held: number): void;
  /** A call waited `waitedMs` for its cluster-wide slot (0 when one was at hand). */
  grantWaited(pool: string, waitedMs: number): void;
  /** A renewal failed: `lost` (the lease had expired: a new holder is opened) or `error`. */
  renewFailed(reason: 'lost' | 'error'): void;
}

export interface GlobalSlotsOptions {
  store: PoolSlotStore;
  /** Names the holder in the store (this process's lease owner id). */
  holder: string;
  /** Lease of the holder's slots, ms (KEEL_POOL_LEASE_MS): a lost process's slots come back after it. */
  leaseMs: number;
  /** How long a refused ask waits before asking again, ms (KEEL_POOL_GRANT_RETRY_MS), ±50 % jitter. */
  retryMs: number;
  limitOf(pool: string): number;
  capOf(tenantId: string, pool: string): number | undefined;
  observer?: GlobalSlotsObserver;
  /** Told store errors the holder survives (it retries). */
  onError?(what: string, error: unknown): void;
  now?: () => number;
}

interface Waiter {
  since: number;
  grant(release: () => void): void;
}

/** One tenant's slots of one pool under the current holder. */
interface TenantSlots {
  /** Granted by the store under the current token and not returned. */
  held: number;
  inUse: number;
  /** Local calls waiting for a slot, first come first served. */
  readonly waiters: Set<Waiter>;
  asking: boolean;
  /** Slots released and not yet sent back (one store call per tick). */
  returning: number;
}

/** The part of the lease kept back for the renewal's round trip: past it, no slot is reused. */
const LEASE_SAFETY_FRACTION = 0.2;

export class GlobalSlots {
  readonly #o: GlobalSlotsOptions;
  readonly #now: () => number;
  readonly #pools = new Map<string, Map<string, TenantSlots>>();
  /** Pools where another holder waits (from the last grant or renewal). */
  readonly #wantedByOthers = new Map<string, number>();
  /** Wakes ask loops of a pool early (a slot was given back here). */
  readonly #nudges = new Map<string, Set<() => void>>();
  #holder: PoolSlotHolder | undefined;
  #opening: Promise<PoolSlotHolder> | undefined;
  /** Until when (local clock) the lease is surely live: renewal sent at + lease − safety. */
  #validUntil = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: GlobalSlotsOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** Opens the holder and starts renewing it. */
  async start(): Promise<void> {
    await this.#open();
    this.#timer = setInterval(() => void this.#renew(), Math.max(50, this.#o.leaseMs / 3));
    this.#timer.unref();
  }

  /** Stops renewing and gives every slot back (calls still running keep theirs locally). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const holder = this.#holder;
    this.#holder = undefined;
    if (holder !== undefined) await this.#o.store.dropPoolSlotHolder(holder.token);
  }

  /**
   * Waits for a cluster-wide slot of `pool` for `tenantId`; `onQueued` is called once if it has to
   * wait. Rejects with `signal.reason` if the signal aborts first.
   */
  acquire(
    pool: string,
    tenantId: string,
    signal?: AbortSignal,
    onQueued?: () => void,
  ): Promise<() => void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const slots = this.#slots(pool, tenantId);
    if (slots.held - slots.inUse > 0 && this.#leaseLive()) {
      this.#o.observer?.grantWaited(pool, 0);
      return Promise.resolve(this.#use(pool, tenantId, slots));
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (slots.waiters.delete(waiter)) reject(signal!.reason);
      };
      const waiter: Waiter = {
        since: this.#now(),
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          this.#o.observer?.grantWaited(pool, this.#now() - waiter.since);
          resolve(release);
        },
      };
      slots.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      onQueued?.();
      void this.#ask(pool, tenantId, slots);
    });
  }

  /** Slots held from the store now, per pool (for probes and tests). */
  held(): Map<string, number> {
    const held = new Map<string, number>();
    for (const [pool, tenants] of this.#pools) {
      let n = 0;
      for (const slots of tenants.values()) n += slots.held;
      held.set(pool, n);
    }
    return held;
  }

  #slots(pool: string, tenantId: string): TenantSlots {
    let tenants = this.#pools.get(pool);
    if (tenants === undefined) {
      tenants = new Map();
      this.#pools.set(pool, tenants);
    }
    let slots = tenants.get(tenantId);
    if (slots === undefined) {
      slots = { held: 0, inUse: 0, waiters: new Set(), asking: false, returning: 0 };
      tenants.set(tenantId, slots);
    }
    return slots;
  }

  #leaseLive(): boolean {
    return this.#holder !== undefined && this.#now() < this.#validUntil;
  }

  /** Takes a held slot for a call; its release hands it on or gives it back. */
  #use(pool: string, tenantId: string, slots: TenantSlots): () => void {
    slots.inUse += 1;
    const token = this.#holder!.token;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A slot of a lost holder is gone with it: nothing to hand on or give back.
      if (this.#holder?.token !== token) return;
      slots.inUse -= 1;
      const next = slots.waiters.values().next();
      if (next.done !== true && this.#leaseLive() && !this.#owesSurplus(pool)) {
        slots.waiters.delete(next.value);
        next.value.grant(this.#use(pool, tenantId, slots));
        return;
      }
      this.#giveBack(pool, tenantId, slots, 1);
    };
  }

  /** Another holder waits and this one holds its fair share or more of the pool. */
  #owesSurplus(pool: string): boolean {
    const fairShare = this.#wantedByOthers.get(pool);
    if (fairShare === undefined) return false;
    let held = 0;
    for (const slots of this.#pools.get(pool)!.values()) held += slots.held;
    return held >= fairShare;
  }

  #giveBack(pool: string, tenantId: string, slots: TenantSlots, count: number): void {
    slots.held -= count;
    this.#o.observer?.slotsHeld(pool, this.held().get(pool) ?? 0);
    slots.returning += count;
    if (slots.returning === count)
      queueMicrotask(() => void this.#flushReturn(pool, tenantId, slots));
  }

  async #flushReturn(pool: string, tenantId: string, slots: TenantSlots): Promise<void> {
    const count = slots.returning;
    slots.returning = 0;
    const holder = this.#holder;
    if (count === 0 || holder === undefined) return;
    try {
      await this.#o.store.returnPoolSlots(pool, tenantId, holder.token, count, slots.waiters.size);
    } catch (error) {
      // Kept as held (so it is not counted free here) and retried by the next renewal tick.
      if (this.#holder === holder) slots.held += count;
      this.#o.onError?.(`returning ${count} slots of pool ${pool}`, error);
    }
    for (const nudge of this.#nudges.get(pool) ?? []) nudge();
  }

  /** Asks the store for as many slots as wait, until none waits (one loop per pool and tenant). */
  async #ask(pool: string, tenantId: string, slots: TenantSlots): Promise<void> {
    if (slots.asking) return;
    slots.asking = true;
    try {
      while (slots.waiters.size > 0 && !this.#closed) {
        const grant = await this.#grant(pool, tenantId, slots);
        if (grant !== undefined && grant.granted > 0) {
          slots.held += grant.granted;
          this.#o.observer?.slotsHeld(pool, this.held().get(pool) ?? 0);
          for (let n = 0; n < grant.granted; n++) {
            const next = slots.waiters.values().next();
            if (next.done === true) {
              this.#giveBack(pool, tenantId, slots, grant.granted - n); // its waiters gave up meanwhile
              break;
            }
            slots.waiters.delete(next.value);
            next.value.grant(this.#use(pool, tenantId, slots));
          }
        }
        if (slots.waiters.size > 0 && (grant === undefined || grant.granted === 0))
          await this.#pause(pool);
      }
    } finally {
      slots.asking = false;
    }
  }

  async #grant(
    pool: string,
    tenantId: string,
    slots: TenantSlots,
  ): Promise<PoolSlotGrant | undefined> {
    let holder: PoolSlotHolder | undefined;
    try {
      holder = this.#holder ?? (await this.#open());
      const grant = await this.#o.store.grantPoolSlots({
        pool,
        tenantId,
        token: holder.token,
        limit: this.#o.limitOf(pool),
        tenantCap: this.#o.capOf(tenantId, pool) ?? null,
        count: slots.waiters.size,
        wanted: slots.waiters.size,
      });
      if (this.#holder !== holder) {
        // The lease was lost while the grant was under way: those slots belong to the old token.
        return undefined;
      }
      if (grant.fairShare === null) this.#wantedByOthers.delete(pool);
      else this.#wantedByOthers.set(pool, grant.fairShare);
      return grant;
    } catch (error) {
      if (error instanceof KeelError && error.code === 'pool_slot_lease_lost') {
        if (this.#holder === holder) this.#lost(); // else a newer holder is open already
      } else this.#o.onError?.(`asking for slots of pool ${pool}`, error);
      return undefined;
    }
  }

  /** Waits retryMs ± 50 %, or less if a slot of this pool is given back here meanwhile. */
  #pause(pool: string): Promise<void> {
    return new Promise((resolve) => {
      let nudges = this.#nudges.get(pool);
      if (nudges === undefined) {
        nudges = new Set();
        this.#nudges.set(pool, nudges);
      }
      const done = (): void => {
        clearTimeout(timer);
        nudges.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.#o.retryMs * (0.5 + Math.random()));
      nudges.add(done);
    });
  }

  #open(): Promise<PoolSlotHolder> {
    this.#opening ??= (async () => {
      const sentAt = this.#now();
      try {
        const holder = await this.#o.store.openPoolSlotHolder(this.#o.holder, this.#o.leaseMs);
        this.#holder = holder;
        this.#validUntil = sentAt + this.#o.leaseMs * (1 - LEASE_SAFETY_FRACTION);
        return holder;
      } finally {
        this.#opening = undefined;
      }
    })();
    return this.#opening;
  }

  /** The lease expired: forget every slot of the old token; waiters ask again under a new one. */
  #lost(): void {
    this.#o.observer?.renewFailed('lost');
    this.#o.onError?.(
      'keeping the pool-slot lease',
      new KeelError('pool_slot_lease_lost', 'the lease expired before it was renewed'),
    );
    this.#holder = undefined;
    this.#validUntil = 0;
    this.#wantedByOthers.clear();
    for (const [pool, tenants] of this.#pools) {
      for (const slots of tenants.values()) {
        slots.held = 0;
        slots.inUse = 0;
        slots.returning = 0;
      }
      this.#o.observer?.slotsHeld(pool, 0);
    }
  }

  async #renew(): Promise<void> {
    const holder = this.#holder;
    if (holder === undefined || this.#closed) return;
    const sentAt = this.#now();
    let renewal: PoolSlotRenewal;
    try {
      renewal = await this.#o.store.renewPoolSlotHolder(holder.token, this.#o.leaseMs);
    } catch (error) {
      this.#o.observer?.renewFailed('error');
      this.#o.onError?.('renewing the pool-slot lease', error);
      return;
    }
    if (this.#holder !== holder) return;
    if (!renewal.renewed) {
      this.#lost();
      for (const [pool, tenants] of this.#pools)
        for (const [tenantId, slots] of tenants) void this.#ask(pool, tenantId, slots);
      return;
    }
    this.#validUntil = sentAt + this.#o.leaseMs * (1 - LEASE_SAFETY_FRACTION);
    const wanted = new Set(renewal.poolsWantedByOthers);
    for (const pool of this.#wantedByOthers.keys())
      if (!wanted.has(pool)) this.#wantedByOthers.delete(pool);
    for (const [pool, tenants] of this.#pools) {
      if (wanted.has(pool) && !this.#wantedByOthers.has(pool))
        this.#wantedByOthers.set(pool, Math.ceil(this.#o.limitOf(pool) / 2));
      for (const [tenantId, slots] of tenants) {
        // Idle slots go back when someone else waits; returns that failed are sent again.
        const idle = slots.held - slots.inUse - slots.waiters.size;
        if (idle > 0 && wanted.has(pool) && slots.returning === 0)
          this.#giveBack(pool, tenantId, slots, idle);
        if (slots.waiters.size > 0) void this.#ask(pool, tenantId, slots);
      }
    }
  }
}
