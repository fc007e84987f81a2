// Weighted fair queuing of claims across tenants (start-time fair queuing over claims): which
// backlogged tenants the next claims go to, and how each tenant's virtual time advances. Pure and
// deterministic; it never reads the store. Service is proportional to weight, never to queue
// length: a claim costs its tenant 1/weight of virtual time, the tenant with the smallest virtual
// time is served next, and a tenant that was idle restarts at the clock (the least virtual time
// among the tenants backlogged at the latest claim), so idling banks no credit. Priority class
// counts across tenants within a bound: a tenant whose next run is interactive may run ahead of its
// weighted share by its share of INTERACTIVE_LEAD_CLAIMS claims.

/**
 * Aging of batch runs, in ms: inside one tenant a batch run is ordered as if it had become
 * claimable this much later, so interactive runs go first, yet a batch run that has waited this
 * long beats any interactive run that became claimable after it did: batch work is never starved.
 * The claim SQL of both stores uses the same constant.
 */
export const BATCH_AGING_MS = 60_000;
/**
 * Priority class across tenants, bounded: a tenant whose next run is interactive competes as if it
 * were its weighted share of this many claims behind (lead in virtual time: INTERACTIVE_LEAD_CLAIMS
 * / the backlogged tenants' total weight). So interactive work passes another tenant's flood of
 * batch work at once, yet a tenant never runs more than its share of INTERACTIVE_LEAD_CLAIMS claims
 * ahead of its weighted share: over 1,000 claims, under 6.4% of its share.
 */
export const INTERACTIVE_LEAD_CLAIMS = 64;
export const TENANT_WEIGHT_MAX = 10_000;
/**
 * Claim rounds in one claim: a round re-plans the slots left by tenants that had fewer runs than
 * planned.
 */
export const FAIR_CLAIM_ROUNDS_MAX = 4;

export interface BackloggedTenant {
  tenantId: string;
  weight: number;
  /** Virtual time: claims served so far / weight (0 for a tenant never served). */
  vtime: number;
  /** Claims it may take now (max concurrent runs minus those it holds); Infinity when uncapped. */
  room: number;
  /**
   * Order key of its first claimable run (claimable-since, plus BATCH_AGING_MS for batch): breaks
   * ties of virtual times.
   */
  headKey: number;
  /**
   * Its first claimable run (by that key) is interactive: its first pick of a claim gets the
   * interactive lead.
   */
  interactiveHead: boolean;
}

export interface FairPick {
  tenantId: string;
  /** Virtual finish time of this claim: the tenant's virtual time once it is made. */
  finish: number;
}

interface HeapItem {
  tenant: BackloggedTenant;
  start: number;
  taken: number;
  /** Virtual time its first pick is moved forward by (interactive head), 0 otherwise. */
  lead: number;
}

const finishOf = (item: HeapItem): number => item.start + 1 / item.tenant.weight;
/**
 * The virtual time a pick competes with: its start, less the interactive lead for a tenant's first
 * pick.
 */
const keyOf = (item: HeapItem): number => (item.taken === 0 ? item.start - item.lead : item.start);

/**
 * Serve the smallest virtual start time (start-time fair queuing; less the interactive lead), then
 * the smallest finish time (the heavier tenant), then the older head.
 */
function before(a: HeapItem, b: HeapItem): boolean {
  return servedBefore(keyOf(a), finishOf(a), a.tenant, keyOf(b), finishOf(b), b.tenant);
}

/** The serving order itself, on a candidate's key (start less any lead), finish time and head. */
function servedBefore(
  ka: number,
  fa: number,
  a: BackloggedTenant,
  kb: number,
  fb: number,
  b: BackloggedTenant,
): boolean {
  if (ka !== kb) return ka < kb;
  if (fa !== fb) return fa < fb;
  if (a.headKey !== b.headKey) return a.headKey < b.headKey;
  return a.tenantId < b.tenantId;
}

/** A binary min-heap of tenants in serving order (`before`), built in linear time. */
class TenantHeap {
  readonly #items: HeapItem[];

  constructor(items: HeapItem[]) {
    this.#items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.#down(i);
  }

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
      this.#down(0);
    }
    return top;
  }

  #down(from: number): void {
    const items = this.#items;
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < items.length && before(items[l]!, items[min]!)) min = l;
      if (r < items.length && before(items[r]!, items[min]!)) min = r;
      if (min === i) return;
      [items[i], items[min]] = [items[min]!, items[i]!];
      i = min;
    }
  }
}

/**
 * The next `slots` claims in fair order: picks in the order they should be served, each tenant at
 * most `room` times.
 * @example
 * allocateClaims([{ tenantId: 'a', weight: 1, vtime: 0, room: Infinity, headKey: 0 },
 *                 { tenantId: 'b', weight: 2, vtime: 0, room: Infinity, headKey: 0 }], 0, 3).map((p) => p.tenantId);
 * // ['b', 'a', 'b']
 */
export function allocateClaims(
  tenants: readonly BackloggedTenant[],
  clock: number,
  slots: number,
  backlogWeight = 0,
): FairPick[] {
  const open = tenants.filter((t) => t.room > 0 && t.weight > 0);
  const lead =
    INTERACTIVE_LEAD_CLAIMS /
    Math.max(
      backlogWeight,
      open.reduce((sum, t) => sum + t.weight, 0),
    );
  const heap = new TenantHeap(
    open.map((tenant) => ({
      tenant,
      start: Math.max(tenant.vtime, clock),
      taken: 0,
      lead: tenant.interactiveHead ? lead : 0,
    })),
  );
  const picks: FairPick[] = [];
  while (picks.length < slots && heap.size > 0) {
    const item = heap.pop()!;
    const finish = finishOf(item);
    picks.push({ tenantId: item.tenant.tenantId, finish });
    item.taken += 1;
    item.start = finish;
    if (item.taken < item.tenant.room) heap.push(item);
  }
  return picks;
}

/**
 * The one next claim among `tenants`, exactly as a one-slot FairClaim over them would make it (the
 * served tenant, its new virtual time, the new clock), in three passes that allocate nothing per
 * tenant. For an effect pool, where each released slot is granted at once among possibly thousands
 * of backlogged tenants.
 * @example
 * pickOne([{ tenantId: 'a', weight: 1, vtime: 0, room: 1, headKey: 0, interactiveHead: false }], 0);
 * // { tenantId: 'a', vtime: 1, clock: 1 }
 */
export function pickOne(
  tenants: readonly BackloggedTenant[],
  clock: number,
): { tenantId: string; vtime: number; clock: number } | null {
  const open = (t: BackloggedTenant): boolean => t.room > 0 && t.weight > 0;
  let totalWeight = 0;
  let least = Infinity;
  for (const t of tenants) {
    if (!open(t)) continue;
    totalWeight += t.weight;
    if (t.vtime < least) least = t.vtime;
  }
  if (totalWeight === 0) return null;
  const from = Math.max(clock, least); // where FairClaim's clock starts
  const lead = INTERACTIVE_LEAD_CLAIMS / totalWeight;
  let best: BackloggedTenant | undefined;
  let bestKey = 0;
  let bestFinish = 0;
  for (const t of tenants) {
    if (!open(t)) continue;
    const start = Math.max(t.vtime, from);
    const key = t.interactiveHead ? start - lead : start;
    const finish = start + 1 / t.weight;
    if (best === undefined || servedBefore(key, finish, t, bestKey, bestFinish, best)) {
      best = t;
      bestKey = key;
      bestFinish = finish;
    }
  }
  let after = Infinity;
  for (const t of tenants) {
    if (!open(t)) continue;
    const vtime = t === best ? bestFinish : Math.max(t.vtime, from);
    if (vtime < after) after = vtime;
  }
  return { tenantId: best!.tenantId, vtime: bestFinish, clock: Math.max(from, after) };
}

/** Picks per tenant, in first-pick order. */
export function countPicks(picks: readonly FairPick[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const pick of picks) counts.set(pick.tenantId, (counts.get(pick.tenantId) ?? 0) + 1);
  return counts;
}

/**
 * One claim, in rounds: plan picks, let the store claim them per tenant, record how many each
 * tenant really had, and re-plan the slots a short tenant left among the others. Usable from a
 * synchronous (SQLite) or asynchronous (Postgres) transaction alike: the caller drives `next()` /
 * `record()`.
 */
export class FairClaim<R> {
  readonly #tenants: Map<string, BackloggedTenant>;
  #clock: number;
  #slots: number;
  #rounds = 0;
  #picks: FairPick[] = [];
  /** Claimed items in the order of the picks they filled. */
  readonly #claimed: R[] = [];
  /** The tenants backlogged when the claim began. */
  readonly #backlogged: string[];
  /** New virtual times of the tenants served. */
  readonly #vtimes = new Map<string, number>();

  /**
   * `clock` as the previous claim left it. A claim starts at the least virtual time among the
   * tenants backlogged now (never less than `clock`) and leaves the least virtual time among them
   * after it: so the clock lifts no tenant that is backlogged, only one that was not at the
   * previous claim (idle, or at its concurrency cap), which restarts there instead of cashing in
   * credit from idling.
   */
  /**
   * `backlogWeight`: the total weight of the whole backlog when `tenants` are only a window of it
   * (the interactive lead is a share of the whole backlog's weight); 0 when they are all of it.
   */
  readonly #backlogWeight: number;

  constructor(
    tenants: readonly BackloggedTenant[],
    clock: number,
    slots: number,
    backlogWeight = 0,
  ) {
    this.#backlogWeight = backlogWeight;
    this.#tenants = new Map(tenants.map((t) => [t.tenantId, { ...t }]));
    this.#clock =
      tenants.length === 0 ? clock : Math.max(clock, Math.min(...tenants.map((t) => t.vtime)));
    this.#backlogged = tenants.map((t) => t.tenantId);
    this.#slots = slots;
  }

  /** Claims to make per tenant in this round, or null when the claim is complete. */
  next(): Map<string, number> | null {
    if (this.#slots <= 0 || this.#rounds >= FAIR_CLAIM_ROUNDS_MAX || this.#tenants.size === 0)
      return null;
    this.#rounds += 1;
    this.#picks = allocateClaims(
      [...this.#tenants.values()],
      this.#clock,
      this.#slots,
      this.#backlogWeight,
    );
    return this.#picks.length === 0 ? null : countPicks(this.#picks);
  }

  /**
   * What the store claimed for each tenant in this round, in the tenant's own order (at most what
   * was asked).
   */
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
      tenant.interactiveHead = false; // its next run's class is unknown: no second lead in one claim
      this.#vtimes.set(pick.tenantId, pick.finish);
      this.#claimed.push(item);
      this.#slots -= 1;
    }
    for (const [tenantId, n] of asked) {
      // Fewer than asked: the tenant has no more claimable runs now (or they are locked); leave it
      // out of the next round.
      if ((claimed.get(tenantId)?.length ?? 0) < n) this.#tenants.delete(tenantId);
    }
  }

  /** Whether the tenant is still backlogged: it was, and no round found it short of runs. */
  stillBacklogged(tenantId: string): boolean {
    return this.#tenants.has(tenantId);
  }

  /**
   * The claimed items in fair order, the new virtual times of the tenants served, and the new
   * clock.
   */
  result(): { items: R[]; vtimes: Map<string, number>; clock: number } {
    let least = Infinity;
    for (const id of this.#backlogged)
      least = Math.min(
        least,
        this.#vtimes.get(id) ?? Math.max(this.#tenants.get(id)?.vtime ?? Infinity, this.#clock),
      );
    return {
      items: [...this.#claimed],
      vtimes: new Map(this.#vtimes),
      clock: least === Infinity ? this.#clock : Math.max(this.#clock, least),
    };
  }
}
