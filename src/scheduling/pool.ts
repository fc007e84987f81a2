// A named pool: the concurrency limit and bounded wait queue of one kind of effect (a model, a
// sandbox profile, inline tools, a tool-declared pool). Waiters are served fairly across tenants by
// weight (start-time fair queuing, shared with run claims through fair-share.ts), inside a tenant
// interactive before batch (batch aged by BATCH_AGING_MS), then by their run's due time (its
// deadline, else its admission: run-order.ts), never by when the call itself queued, so under
// saturation the runs started first finish first. A tenant at its cap in this pool waits without
// holding up other tenants. It never grants past its limit, never queues past maxQueued, and never
// keeps a waiter that gave up. A policy with a chooser (drf-chooser.ts) decides instead which
// tenant each free slot goes to, one slot at a time.
import { KeelError } from '../domain/keel-error.ts';
import type { Priority } from '../domain/records.ts';
import { BATCH_AGING_MS, FairClaim, pickOne, type BackloggedTenant } from '../domain/fair-share.ts';
import { runDueAt, type RunOrder } from '../domain/run-order.ts';
import type { WaiterChooser } from './drf-chooser.ts';
import { WaiterHeap } from './waiter-heap.ts';

export type PoolRejection = 'queue_full' | 'aborted';

/**
 * What a pool asks about tenants each time it picks waiters (so a changed weight or cap applies at
 * once).
 */
export interface PoolPolicy {
  weightOf(tenantId: string): number;
  /** Most slots of this pool the tenant may hold at once; undefined when uncapped. */
  capOf(tenantId: string): number | undefined;
  /**
   * Chooses the tenant each free slot goes to, instead of weighted fair queuing in this pool (e.g.
   * dominant-resource fairness across pools); read at each dispatch.
   */
  chooser?(): WaiterChooser | undefined;
}

/** Hears admissions, releases and rejections (telemetry); must be cheap and never throw. */
export interface PoolObserver {
  admitted(pool: string, tenantId: string, waitedMs: number): void;
  released(pool: string, tenantId: string, heldMs: number): void;
  rejected(pool: string, tenantId: string, reason: PoolRejection): void;
}

export interface PoolRequest {
  tenantId: string;
  priority: Priority;
  signal?: AbortSignal;
  /**
   * The run the effect belongs to: orders it inside its tenant and class by the run's due time
   * (run-order.ts). Absent (an effect of no run): the call counts as a run admitted when it queued.
   */
  run?: RunOrder;
  /**
   * Called once, synchronously, when the request has to wait in the queue (it was not granted at
   * once).
   */
  onQueued?: () => void;
}

export interface TenantPoolSnapshot {
  tenantId: string;
  running: number;
  queued: number;
  oldestWaitMs: number | null;
  cap: number | null;
}

export interface PoolSnapshot {
  name: string;
  limit: number;
  maxQueued: number;
  running: number;
  queued: number;
  oldestWaitMs: number | null;
  /** Age of the oldest run (by admission) with an effect waiting here, ms; null when none waits. */
  oldestRunAgeMs: number | null;
  tenants: TenantPoolSnapshot[];
}

interface Waiter {
  tenantId: string;
  priority: Priority;
  /** When it started waiting (ms since the epoch). */
  since: number;
  /** When its run was admitted (ms since the epoch). */
  admittedAt: number;
  /** Order inside its tenant: its run's due time, plus BATCH_AGING_MS for batch. */
  key: number;
  seq: number;
  queued: boolean;
  grant(): void;
}

/**
 * One tenant's waiters (two heaps by key whose heads are compared, and all of them in arrival
 * order) and the slots it holds.
 */
class TenantLane {
  readonly interactive = new WaiterHeap<Waiter>();
  readonly batch = new WaiterHeap<Waiter>();
  /** Every queued waiter, in arrival order (the first waited longest). */
  readonly waiters = new Set<Waiter>();
  running = 0;
  /** Virtual time in this pool: slots granted / weight (see fair-share.ts). */
  vtime = 0;
  /**
   * This lane as a fair-share candidate, refreshed at each dispatch (reused: a grant allocates
   * nothing per tenant).
   */
  readonly candidate: BackloggedTenant;

  constructor(tenantId: string) {
    this.candidate = { tenantId, weight: 1, vtime: 0, room: 0, headKey: 0, interactiveHead: false };
  }

  get size(): number {
    return this.waiters.size;
  }

  head(): Waiter | undefined {
    const i = this.interactive.peek();
    const b = this.batch.peek();
    if (i === undefined || b === undefined) return i ?? b;
    return b.key < i.key ? b : i;
  }

  oldestSince(): number | null {
    const first = this.waiters.values().next().value;
    return first === undefined ? null : first.since;
  }

  /** The earliest admission among the runs waiting here (a scan: for probes, not for grants). */
  oldestAdmittedAt(): number | null {
    let oldest: number | null = null;
    for (const w of this.waiters)
      if (oldest === null || w.admittedAt < oldest) oldest = w.admittedAt;
    return oldest;
  }

  add(waiter: Waiter): void {
    this.waiters.add(waiter);
    (waiter.priority === 'interactive' ? this.interactive : this.batch).push(waiter);
  }

  delete(waiter: Waiter): boolean {
    if (!this.waiters.delete(waiter)) return false;
    waiter.queued = false;
    if (this.waiters.size === 0) {
      this.interactive.clear();
      this.batch.clear();
    }
    return true;
  }
}

/** Weights below this are treated as this (a weight of 0 would never be served). */
const WEIGHT_MIN = 1e-6;
/** Every this many dispatches, lanes of idle tenants left behind by the clock are dropped. */
const IDLE_SWEEP_DISPATCHES = 1024;

export class Pool {
  readonly name: string;
  #limit: number;
  #maxQueued: number;
  #running = 0;
  #queued = 0;
  /** Virtual clock: the least virtual time among the tenants backlogged at the latest dispatch. */
  #clock = 0;
  readonly #tenants = new Map<string, TenantLane>();
  /**
   * Tenants that may be granted a slot now, rebuilt by each dispatch (kept to avoid allocating an
   * array per grant).
   */
  readonly #candidates: BackloggedTenant[] = [];
  /** Tenants with waiters: what a dispatch looks at (not every tenant holding a slot). */
  readonly #waiting = new Set<string>();
  #dispatches = 0;
  /** Arrivals so far: ties of order keys go to the first come. */
  #arrivals = 0;
  readonly #policy: PoolPolicy;
  readonly #observer: PoolObserver | undefined;
  readonly #now: () => number;

  constructor(
    name: string,
    settings: { limit: number; maxQueued: number },
    policy: PoolPolicy,
    observer?: PoolObserver,
    now: () => number = Date.now,
  ) {
    this.name = name;
    this.#limit = checkLimit(name, 'limit', settings.limit, 1);
    this.#maxQueued = checkLimit(name, 'maxQueued', settings.maxQueued, 0);
    this.#policy = policy;
    this.#observer = observer;
    this.#now = now;
  }

  get limit(): number {
    return this.#limit;
  }

  get maxQueued(): number {
    return this.#maxQueued;
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#queued;
  }

  /** Slots the tenant holds in this pool now. */
  heldBy(tenantId: string): number {
    return this.#tenants.get(tenantId)?.running ?? 0;
  }

  /**
   * Changes the limit now: raising it admits waiters at once; lowering it lets holders finish and
   * admits none until below.
   */
  setLimit(limit: number): void {
    this.#limit = checkLimit(this.name, 'limit', limit, 1);
    this.#dispatch();
  }

  /** Changes the queue bound for new arrivals; waiters already queued stay. */
  setMaxQueued(maxQueued: number): void {
    this.#maxQueued = checkLimit(this.name, 'maxQueued', maxQueued, 0);
  }

  /**
   * Re-reads weights and caps (after the policy's sources changed) and admits whoever may go now.
   */
  refresh(): void {
    this.#dispatch();
  }

  /**
   * Waits for a slot and returns its release function (calling it twice is harmless). Rejects with
   * `signal.reason` if the signal aborts first, and with a retryable `pool_queue_full` when the
   * queue is at its bound.
   * @example
   * const release = await pool.acquire({ tenantId, priority: 'interactive', signal });
   * try { await work(); } finally { release(); }
   */
  acquire(request: PoolRequest): Promise<() => void> {
    const { tenantId, priority, signal } = request;
    if (signal?.aborted === true) {
      this.#observer?.rejected(this.name, tenantId, 'aborted');
      return Promise.reject(signal.reason);
    }
    return new Promise((resolve, reject) => {
      const since = this.#now();
      const order = request.run ?? { admittedAt: since, deadlineAt: null };
      const due = runDueAt(order);
      let granted = false;
      const onAbort = (): void => {
        if (!this.#remove(waiter)) return;
        this.#observer?.rejected(this.name, tenantId, 'aborted');
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        tenantId,
        priority,
        since,
        admittedAt: order.admittedAt,
        key: priority === 'batch' ? due + BATCH_AGING_MS : due,
        seq: this.#arrivals++,
        queued: true,
        grant: () => {
          granted = true;
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#lease(tenantId, since));
        },
      };
      this.#lane(tenantId).add(waiter);
      this.#waiting.add(tenantId);
      this.#queued += 1;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#dispatch();
      if (this.#queued > this.#maxQueued && this.#remove(waiter)) {
        signal?.removeEventListener('abort', onAbort);
        this.#observer?.rejected(this.name, tenantId, 'queue_full');
        reject(
          new KeelError(
            'pool_queue_full',
            `pool ${this.name} has ${this.#maxQueued} effects queued already`,
            {
              retryable: true,
              details: { pool: this.name, maxQueued: this.#maxQueued },
            },
          ),
        );
      } else if (!granted) {
        request.onQueued?.();
      }
    });
  }

  /** Items waiting (a telemetry pool probe). */
  depth(): number {
    return this.#queued;
  }

  /**
   * How long the oldest waiter has waited (ms), or null when none waits (a telemetry pool probe).
   */
  oldestWaitMs(now: number): number | null {
    let oldest: number | null = null;
    for (const tenantId of this.#waiting) {
      const since = this.#tenants.get(tenantId)!.oldestSince();
      if (since !== null && (oldest === null || since < oldest)) oldest = since;
    }
    return oldest === null ? null : Math.max(0, now - oldest);
  }

  /**
   * Age (ms) of the oldest run, by admission, with an effect waiting here, or null when none waits
   * (a telemetry pool probe: how long the run that should finish next has been in the system).
   */
  oldestRunAgeMs(now: number): number | null {
    let oldest: number | null = null;
    for (const tenantId of this.#waiting) {
      const at = this.#tenants.get(tenantId)!.oldestAdmittedAt();
      if (at !== null && (oldest === null || at < oldest)) oldest = at;
    }
    return oldest === null ? null : Math.max(0, now - oldest);
  }

  snapshot(now: number = this.#now()): PoolSnapshot {
    const tenants: TenantPoolSnapshot[] = [];
    for (const [tenantId, lane] of this.#tenants) {
      if (lane.running === 0 && lane.size === 0) continue;
      const since = lane.oldestSince();
      tenants.push({
        tenantId,
        running: lane.running,
        queued: lane.size,
        oldestWaitMs: since === null ? null : Math.max(0, now - since),
        cap: this.#policy.capOf(tenantId) ?? null,
      });
    }
    return {
      name: this.name,
      limit: this.#limit,
      maxQueued: this.#maxQueued,
      running: this.#running,
      queued: this.#queued,
      oldestWaitMs: this.oldestWaitMs(now),
      oldestRunAgeMs: this.oldestRunAgeMs(now),
      tenants,
    };
  }

  #lane(tenantId: string): TenantLane {
    let lane = this.#tenants.get(tenantId);
    if (lane === undefined) {
      lane = new TenantLane(tenantId);
      this.#tenants.set(tenantId, lane);
    }
    return lane;
  }

  #remove(waiter: Waiter): boolean {
    const lane = this.#tenants.get(waiter.tenantId);
    if (lane === undefined || !lane.delete(waiter)) return false;
    this.#queued -= 1;
    if (lane.size === 0) this.#waiting.delete(waiter.tenantId);
    this.#forgetIfIdle(waiter.tenantId, lane);
    return true;
  }

  /**
   * An idle tenant whose virtual time is not ahead of the clock would restart at the clock anyway:
   * drop its lane.
   */
  #forgetIfIdle(tenantId: string, lane: TenantLane): void {
    if (lane.size === 0 && lane.running === 0 && lane.vtime <= this.#clock)
      this.#tenants.delete(tenantId);
  }

  /**
   * Grants free slots to waiters in fair order (fair-share.ts decides which tenants, each lane's
   * head goes first).
   */
  #dispatch(): void {
    const free = this.#limit - this.#running;
    if (free <= 0 || this.#queued === 0) return;
    if (++this.#dispatches % IDLE_SWEEP_DISPATCHES === 0) {
      for (const [tenantId, lane] of this.#tenants) this.#forgetIfIdle(tenantId, lane); // deleting while iterating a Map is safe
    }
    const backlogged = this.#candidates;
    backlogged.length = 0;
    for (const tenantId of this.#waiting) {
      const lane = this.#tenants.get(tenantId)!;
      const head = lane.head()!;
      const cap = this.#policy.capOf(tenantId);
      const room = Math.min(lane.size, cap === undefined ? Infinity : cap - lane.running);
      if (room <= 0) continue;
      const candidate = lane.candidate;
      candidate.weight = Math.max(WEIGHT_MIN, this.#policy.weightOf(tenantId));
      candidate.vtime = lane.vtime;
      candidate.room = room;
      candidate.headKey = head.key;
      candidate.interactiveHead = head.priority === 'interactive';
      backlogged.push(candidate);
    }
    if (backlogged.length === 0) return;
    const chooser = this.#policy.chooser?.();
    if (chooser !== undefined) {
      this.#dispatchChosen(chooser, backlogged, free);
      return;
    }
    if (free === 1) {
      // One slot (a release): the same pick a one-slot FairClaim makes, without building one.
      const pick = pickOne(backlogged, this.#clock)!;
      const lane = this.#tenants.get(pick.tenantId)!;
      const waiter = lane.head()!;
      lane.delete(waiter);
      if (lane.size === 0) this.#waiting.delete(pick.tenantId);
      lane.vtime = pick.vtime;
      this.#clock = pick.clock;
      this.#grant(waiter);
      return;
    }
    const claim = new FairClaim<Waiter>(backlogged, this.#clock, free);
    // Rooms are exact (no more than each lane holds), so one round fills every slot it can.
    for (let plan = claim.next(); plan !== null; plan = claim.next()) {
      const taken = new Map<string, Waiter[]>();
      for (const [tenantId, n] of plan) {
        const lane = this.#tenants.get(tenantId)!;
        const waiters: Waiter[] = [];
        for (let head = lane.head(); head !== undefined && waiters.length < n; head = lane.head()) {
          lane.delete(head);
          waiters.push(head);
        }
        if (lane.size === 0) this.#waiting.delete(tenantId);
        taken.set(tenantId, waiters);
      }
      claim.record(taken);
    }
    const { items, vtimes, clock } = claim.result();
    this.#clock = clock;
    for (const [tenantId, vtime] of vtimes) this.#tenants.get(tenantId)!.vtime = vtime;
    for (const waiter of items) this.#grant(waiter);
  }

  /**
   * Grants `free` slots one at a time, each to the head of the lane the chooser picks (the choice
   * sees the slot just granted); a lane out of room or waiters leaves the candidates.
   */
  #dispatchChosen(chooser: WaiterChooser, backlogged: BackloggedTenant[], free: number): void {
    for (let left = free; left > 0 && backlogged.length > 0; left--) {
      const pick = chooser.choose(this.name, backlogged);
      if (pick === undefined) return;
      const lane = this.#tenants.get(pick.tenantId)!;
      const waiter = lane.head()!;
      lane.delete(waiter);
      if (lane.size === 0) this.#waiting.delete(pick.tenantId);
      this.#grant(waiter);
      pick.room -= 1;
      const next = lane.head();
      if (pick.room <= 0 || next === undefined) backlogged.splice(backlogged.indexOf(pick), 1);
      else pick.headKey = next.key;
    }
  }

  #grant(waiter: Waiter): void {
    this.#queued -= 1;
    this.#running += 1;
    this.#tenants.get(waiter.tenantId)!.running += 1;
    waiter.grant();
  }

  #lease(tenantId: string, since: number): () => void {
    const grantedAt = this.#now();
    this.#observer?.admitted(this.name, tenantId, grantedAt - since);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      const lane = this.#tenants.get(tenantId)!;
      lane.running -= 1;
      this.#observer?.released(this.name, tenantId, this.#now() - grantedAt);
      this.#dispatch();
      this.#forgetIfIdle(tenantId, lane);
    };
  }
}

function checkLimit(pool: string, field: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`pool ${pool}: ${field} must be an integer ≥ ${min}, got ${value}`);
  return value;
}
