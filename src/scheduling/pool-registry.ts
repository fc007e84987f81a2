// The process's effect pools by name: creates each pool on first use with its configured or default
// limit, applies a new pools configuration to live pools (limits, queue bounds, per-tenant caps)
// and answers which weight and cap a tenant has. Kinds by name: `model:<model>`,
// `sandbox:<profile>`, `inline`, anything else a tool-declared pool. It never decides the order of
// waiters (pool.ts does) and never reads files or the environment. Where processes share a
// database, a pool of `cluster` scope also takes a slot from the global layer (global-slots.ts)
// after its local grant; without one (embedded) nothing more happens: no store round trip.
import type { GlobalSlots } from './global-slots.ts';
import { DominantResourceChooser, type WaiterChooser } from './drf-chooser.ts';
import { Pool, type PoolObserver, type PoolRequest, type PoolSnapshot } from './pool.ts';
import { EMPTY_POOLS_CONFIG, POOL_NAME, type PoolsConfig } from './pool-config.ts';

/** Inline tools running at once per process when no pools file says otherwise. */
export const INLINE_POOL_LIMIT_DEFAULT = 256;
export const INLINE_POOL_MAX_QUEUED_DEFAULT = 100_000;
/** Sandbox executions per profile at once per process (each holds a sandboxed process). */
export const SANDBOX_POOL_LIMIT_DEFAULT = 32;
/** Executions at once in a pool a tool declares (`defineTool({ pool })`). */
export const DECLARED_POOL_LIMIT_DEFAULT = 32;
export const POOL_MAX_QUEUED_DEFAULT = 10_000;
/** The tenant of effects that belong to no run (direct gateway calls). */
export const POOL_SYSTEM_TENANT = '-';

export type PoolKind = 'model' | 'sandbox' | 'inline' | 'declared';
export type PoolScope = 'cluster' | 'process';

export const poolKind = (name: string): PoolKind =>
  name === 'inline'
    ? 'inline'
    : name.startsWith('model:')
      ? 'model'
      : name.startsWith('sandbox:')
        ? 'sandbox'
        : 'declared';

/** Where pools report: the telemetry's pool probes plus admissions, releases and rejections. */
export interface PoolTelemetry extends PoolObserver {
  registerPool(name: string, probe: Pool): () => void;
}

export interface PoolRegistryOptions {
  telemetry?: PoolTelemetry;
  /** Limit of the `inline` pool when the configuration names none. */
  inlineLimit?: number;
  now?: () => number;
  /**
   * How a pool's free slot picks among waiting tenants: `weighted` (default: weighted fair queuing
   * in each pool) or `drf` (dominant-resource fairness across every pool of this registry).
   */
  fairness?: FairnessPolicy;
}

export const FAIRNESS_POLICIES = ['weighted', 'drf'] as const;
export type FairnessPolicy = (typeof FAIRNESS_POLICIES)[number];

export type TenantCapResolver = (tenantId: string, pool: string) => number | undefined;
export type TenantWeightResolver = (tenantId: string) => number | undefined;

export class PoolRegistry {
  readonly #pools = new Map<string, Pool>();
  readonly #unregister: Array<() => void> = [];
  /** Default limits set by their owners (a model's maxConcurrency), below the configuration. */
  readonly #defaultLimits = new Map<string, number>();
  readonly #telemetry: PoolTelemetry | undefined;
  readonly #inlineLimit: number;
  readonly #now: () => number;
  #config: PoolsConfig = EMPTY_POOLS_CONFIG;
  #global: GlobalSlots | undefined;
  #capResolver: TenantCapResolver = () => undefined;
  #weightResolver: TenantWeightResolver = () => undefined;
  readonly #chooser: WaiterChooser | undefined;

  constructor(options: PoolRegistryOptions = {}) {
    this.#chooser =
      options.fairness === 'drf'
        ? new DominantResourceChooser({ holdings: (tenantId) => this.#holdings(tenantId) })
        : undefined;
    this.#telemetry = options.telemetry;
    this.#inlineLimit = options.inlineLimit ?? INLINE_POOL_LIMIT_DEFAULT;
    this.#now = options.now ?? Date.now;
  }

  /** [held, limit] of every pool where the tenant holds slots (for DRF). */
  *#holdings(tenantId: string): Iterable<readonly [number, number]> {
    for (const pool of this.#pools.values()) {
      const held = pool.heldBy(tenantId);
      if (held > 0) yield [held, pool.limit] as const;
    }
  }

  /** The live configuration (the pools file last applied). */
  get config(): PoolsConfig {
    return this.#config;
  }

  /**
   * Waits for a slot of pool `name` (created on first use) and returns its release function.
   * @example
   * const release = await pools.acquire('sandbox:shell', { tenantId: run.tenantId, priority: run.priority, signal });
   */
  acquire(name: string, request: PoolRequest): Promise<() => void> {
    const pool = this.pool(name);
    if (this.#global === undefined || this.scopeOf(name) === 'process')
      return pool.acquire(request);
    return this.#acquireInCluster(pool, this.#global, request);
  }

  /**
   * Makes pools of `cluster` scope hold their limits and caps over every process sharing the
   * database (distributed mode); undefined: each process alone.
   */
  useGlobalSlots(global: GlobalSlots | undefined): void {
    this.#global = global;
  }

  /** Where a pool's limit and caps hold (see PoolSettings.scope). */
  scopeOf(name: string): PoolScope {
    const kind = poolKind(name);
    return (
      this.#config.pools[name]?.scope ??
      (kind === 'inline' || kind === 'sandbox' ? 'process' : 'cluster')
    );
  }

  /** The pool's limit and a tenant's cap in it, as the global layer asks for them. */
  limitOf(name: string): number {
    return this.pool(name).limit;
  }

  capOf(tenantId: string, name: string): number | undefined {
    return this.#capOf(tenantId, name);
  }

  /** The local slot first (fair order inside the process), then the cluster-wide one. */
  async #acquireInCluster(
    pool: Pool,
    global: GlobalSlots,
    request: PoolRequest,
  ): Promise<() => void> {
    let queued = false;
    const onQueued = (): void => {
      if (queued) return;
      queued = true;
      request.onQueued?.();
    };
    const releaseLocal = await pool.acquire({ ...request, onQueued });
    let releaseGlobal: () => void;
    try {
      releaseGlobal = await global.acquire(pool.name, request.tenantId, request.signal, onQueued);
    } catch (error) {
      releaseLocal();
      throw error;
    }
    return () => {
      releaseGlobal();
      releaseLocal();
    };
  }

  pool(name: string): Pool {
    let pool = this.#pools.get(name);
    if (pool !== undefined) return pool;
    if (!POOL_NAME.test(name)) throw new RangeError(`${JSON.stringify(name)} is not a pool name`);
    const settings = this.#settings(name);
    pool = new Pool(
      name,
      settings,
      {
        weightOf: (tenantId) => this.#weightResolver(tenantId) ?? 1,
        capOf: (tenantId) => this.#capOf(tenantId, name),
        chooser: () => this.#chooser,
      },
      this.#telemetry,
      this.#now,
    );
    this.#pools.set(name, pool);
    if (this.#telemetry !== undefined)
      this.#unregister.push(this.#telemetry.registerPool(name, pool));
    return pool;
  }

  /**
   * The limit a pool has when the configuration names none (a model's maxConcurrency); creates the
   * pool.
   */
  setDefaultLimit(name: string, limit: number): void {
    this.#defaultLimits.set(name, limit);
    const pool = this.pool(name);
    if (this.#config.pools[name]?.limit === undefined) pool.setLimit(limit);
  }

  /**
   * Applies a configuration to every pool now: raised limits admit at once, lowered ones let
   * holders finish.
   */
  configure(config: PoolsConfig): void {
    this.#config = config;
    for (const name of Object.keys(config.pools)) this.pool(name);
    for (const [name, pool] of this.#pools) {
      const settings = this.#settings(name);
      pool.setMaxQueued(settings.maxQueued);
      pool.setLimit(settings.limit); // also re-reads the caps
    }
  }

  /**
   * Where tenant records supply per-pool caps. A cap it returns wins over the pools file's
   * `tenantCaps`; undefined falls back to the file (the tenant's own entry, then `default`).
   */
  setTenantCapResolver(resolver: TenantCapResolver): void {
    this.#capResolver = resolver;
    this.refresh();
  }

  /** Where tenant weights come from (tenant records); undefined means weight 1. */
  setTenantWeightResolver(resolver: TenantWeightResolver): void {
    this.#weightResolver = resolver;
    this.refresh();
  }

  /** Caps or weights changed at their source: let every pool admit whoever may go now. */
  refresh(): void {
    for (const pool of this.#pools.values()) pool.refresh();
  }

  snapshot(): PoolSnapshot[] {
    const now = this.#now();
    return [...this.#pools.values()]
      .map((pool) => pool.snapshot(now))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Stops reporting to telemetry (pools keep working for holders still running). */
  close(): void {
    for (const unregister of this.#unregister.splice(0)) unregister();
  }

  #settings(name: string): { limit: number; maxQueued: number } {
    const configured = this.#config.pools[name];
    const kind = poolKind(name);
    const fallback =
      kind === 'inline'
        ? this.#inlineLimit
        : kind === 'sandbox'
          ? SANDBOX_POOL_LIMIT_DEFAULT
          : DECLARED_POOL_LIMIT_DEFAULT;
    return {
      limit: configured?.limit ?? this.#defaultLimits.get(name) ?? fallback,
      maxQueued:
        configured?.maxQueued ??
        (kind === 'inline' ? INLINE_POOL_MAX_QUEUED_DEFAULT : POOL_MAX_QUEUED_DEFAULT),
    };
  }

  #capOf(tenantId: string, name: string): number | undefined {
    const fromRecord = this.#capResolver(tenantId, name);
    if (fromRecord !== undefined) return fromRecord;
    const caps = this.#config.pools[name]?.tenantCaps;
    return caps?.[tenantId] ?? caps?.default;
  }
}
