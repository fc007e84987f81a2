// Weighted fair queuing of claims across tenants (start-time fair queuing over claims): which backlogged tenants the
// next claims go to, and how each tenant's virtual time advances. Pure and deterministic; it never reads the store.
// Service is proportional to weight, never to queue length: a claim costs its tenant 1/weight of virtual time, the
// tenant with the smallest virtual time is served next, and a tenant that was idle restarts at the clock (the virtual
// start time of the latest claim), so idling banks no credit.

/**
 * Aging of batch runs, in ms: inside one tenant a batch run is ordered as if it had become claimable this much later,
 * so interactive runs go first, yet a batch run that has waited this long beats any interactive run that became
 * claimable after it did: batch work is never starved. The claim SQL of both stores uses the same constant.
 */
export const BATCH_AGING_MS = 60_000;
export const TENANT_WEIGHT_MAX = 10_000;
/** Claim rounds in one claim: a round re-plans the slots left by tenants that had fewer runs than planned. */
export const FAIR_CLAIM_ROUNDS_MAX = 4;

export interface BackloggedTenant {
  tenantId: string;
  weight: number;
  /** Virtual time: claims served so far / weight (0 for a tenant never served). */
  vtime: number;
  /** Claims it may take now (max concurrent runs minus those it holds); Infinity when uncapped. */
  room: number;
  /** Order key of its first claimable run (claimable-since, plus BATCH_AGING_MS for batch): breaks ties of virtual times. */
  headKey: number;
}

export interface FairPick {
  tenantId: string;
  /** Virtual start and finish times of this claim. */
  start: number;
  finish: number;
}

interface HeapItem {
  tenant: BackloggedTenant;
  start: number;
  taken: number;
}

const finishOf = (item: HeapItem): number => item.start + 1 / item.tenant.weight;

/**
 * Serve the smallest virtual start time (start-time fair queuing), then the smallest finish time (the heavier
 * tenant), then the older head. Ordering by start keeps the clock (the start of the latest claim) at or below every
 * backlogged tenant's virtual time, so the clock only ever lifts a tenant that was idle.
 */
function before(a: HeapItem, b: HeapItem): boolean {
  if (a.start !== b.start) return a.start < b.start;
  const fa = finishOf(a);
  const fb = finishOf(b);
  if (fa !== fb) return fa < fb;
  if (a.tenant.headKey !== b.tenant.headKey) return a.tenant.headKey < b.tenant.headKey;
  return a.tenant.tenantId < b.tenant.tenantId;
}

/** A binary min-heap of tenants in serving order (`before`). */
class TenantHeap {
  readonly #items: HeapItem[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(item: HeapItem): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): HeapItem | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < items.length && before(items[l]!, items[min]!)) min = l;
        if (r < items.length && before(items[r]!, items[min]!)) min = r;
        if (min === i) break;
        [items[i], items[min]] = [items[min]!, items[i]!];
        i = min;
      }
    }
    return top;
  }
}

/**
 * The next `slots` claims in fair order: picks in the order they should be served, each tenant at most `room` times.
 * @example
 * allocateClaims([{ tenantId: 'a', weight: 1, vtime: 0, room: Infinity, headKey: 0 },
 *                 { tenantId: 'b', weight: 2, vtime: 0, room: Infinity, headKey: 0 }], 0, 3).map((p) => p.tenantId);
 * // ['b', 'a', 'b']
 */
export function allocateClaims(tenants: readonly BackloggedTenant[], clock: number, slots: number): FairPick[] {
  const heap = new TenantHeap();
  for (const tenant of tenants) {
    if (tenant.room > 0 && tenant.weight > 0) heap.push({ tenant, start: Math.max(tenant.vtime, clock), taken: 0 });
  }
  const picks: FairPick[] = [];
  while (picks.length < slots && heap.size > 0) {
    const item = heap.pop()!;
    const finish = finishOf(item);
    picks.push({ tenantId: item.tenant.tenantId, start: item.start, finish });
    item.taken += 1;
    item.start = finish;
    if (item.taken < item.tenant.room) heap.push(item);
  }
  return picks;
}

/** Picks per tenant, in first-pick order. */
export function countPicks(picks: readonly FairPick[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const pick of picks) counts.set(pick.tenantId, (counts.get(pick.tenantId) ?? 0) + 1);
  return counts;
}

/**
 * One claim, in rounds: plan picks, let the store claim them per tenant, record how many each tenant really had, and
 * re-plan the slots a short tenant left among the others. Usable from a synchronous (SQLite) or asynchronous
 * (Postgres) transaction alike: the caller drives `next()` / `record()`.
 */
export class FairClaim<R> {
  readonly #tenants: Map<string, BackloggedTenant>;
  #clock: number;
  #slots: number;
  #rounds = 0;
  #picks: FairPick[] = [];
  /** Claimed items in the order of the picks they filled. */
  readonly #claimed: R[] = [];
  /** New virtual times of the tenants served. */
  readonly #vtimes = new Map<string, number>();

  constructor(tenants: readonly BackloggedTenant[], clock: number, slots: number) {
    this.#tenants = new Map(tenants.map((t) => [t.tenantId, { ...t }]));
    this.#clock = clock;
    this.#slots = slots;
  }

  /** Claims to make per tenant in this round, or null when the claim is complete. */
  next(): Map<string, number> | null {
    if (this.#slots <= 0 || this.#rounds >= FAIR_CLAIM_ROUNDS_MAX || this.#tenants.size === 0) return null;
    this.#rounds += 1;
    this.#picks = allocateClaims([...this.#tenants.values()], this.#clock, this.#slots);
    return this.#picks.length === 0 ? null : countPicks(this.#picks);
  }

  /** What the store claimed for each tenant in this round, in the tenant's own order (at most what was asked). */
  record(claimed: ReadonlyMap<string, readonly R[]>): void {
    const asked = countPicks(this.#picks);
    const index = new Map<string, number>();
    for (const pick of this.#picks) {
      const i = index.get(pick.tenantId) ?? 0;
      index.set(pick.tenantId, i + 1);
      const item = claimed.get(pick.tenantId)?.[i];
      if (item === undefined) continue;
      const tenant = this.#tenants.get(pick.tenantId)!;
      tenant.vtime = pick.finish;
      tenant.room -= 1;
      this.#clock = Math.max(this.#clock, pick.start);
      this.#vtimes.set(pick.tenantId, pick.finish);
      this.#claimed.push(item);
      this.#slots -= 1;
    }
    for (const [tenantId, n] of asked) {
      // Fewer than asked: the tenant has no more claimable runs now (or they are locked); leave it out of the next round.
      if ((claimed.get(tenantId)?.length ?? 0) < n) this.#tenants.delete(tenantId);
    }
  }

  /** The claimed items in fair order, the new virtual times of the tenants served, and the new clock. */
  result(): { items: R[]; vtimes: Map<string, number>; clock: number } {
    return { items: [...this.#claimed], vtimes: new Map(this.#vtimes), clock: this.#clock };
  }
}
