// A tenant's model policy as its record sets it: RPM/TPM limits and daily token and cost budgets,
// read from the store through a small interface and cached in this process. Records are re-read
// after TENANT_POLICY_TTL_MS or at once after `invalidate` (an admin PATCH in this process); daily
// usage is re-read after TENANT_USAGE_TTL_MS and grows in between with what this process's calls
// spend. A verdict of "exhausted" is always confirmed on fresh reads, so a raised budget is never
// refused from a stale cache. It never blocks or parks anything itself: callers decide.
import type { ModelRateLimits } from '../sdk/types.ts';
import { SYSTEM_CLOCK, type Clock } from '../domain/clock.ts';

/** How long a tenant's record (limits, budgets) is trusted before it is read again, in ms. */
export const TENANT_POLICY_TTL_MS = 5_000;
/**
 * How long a tenant's daily usage read from the store is trusted (other processes' spend shows up
 * after this), in ms.
 */
export const TENANT_USAGE_TTL_MS = 5_000;
/** Tenants whose record and usage are cached, at most (least recently read are dropped first). */
export const TENANT_POLICY_CACHE_MAX = 10_000;
const DAY_MS = 86_400_000;

/** The fields of a tenant record this policy reads. */
export interface TenantPolicyFields {
  rpm: number | null;
  tpm: number | null;
  dailyTokenBudget: number | null;
  dailyCostBudgetUsd: number | null;
}

/** Where records and usage come from: the store satisfies it. */
export interface TenantPolicySource {
  getTenant(id: string): Promise<TenantPolicyFields | null>;
  /**
   * Model tokens (input + output) and USD the tenant's committed model calls spent since `sinceMs`.
   */
  tenantUsageSince(id: string, sinceMs: number): Promise<{ tokens: number; costUsd: number }>;
}

export interface BudgetVerdict {
  budget:
    | 'dailyTokenBudget'
    | 'dailyCostBudgetUsd'
    /** The platform-wide caps (platform-caps.ts), across all tenants. */
    | 'platformTokenCapPerDay'
    | 'platformCostCapPerDay';
  used: number;
  limit: number;
  /** When the budget renews: the next midnight UTC (ms since the epoch). */
  until: number;
  detail: string;
}

interface Cached<T> {
  value: T;
  at: number;
}

export const startOfUtcDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

export class TenantPolicy {
  readonly #source: TenantPolicySource;
  readonly #clock: Clock;
  readonly #records = new Map<string, Cached<TenantPolicyFields | null>>();
  readonly #usage = new Map<string, Cached<{ day: number; tokens: number; costUsd: number }>>();
  /**
   * Reads in flight by key: the calls of a busy tenant that find its cache expired share one read.
   */
  readonly #reading = new Map<string, Promise<unknown>>();

  constructor(source: TenantPolicySource, options: { clock?: Clock } = {}) {
    this.#source = source;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
  }

  /**
   * The tenant's own RPM/TPM (fields it leaves null are absent: the models file's tenantLimits fill
   * them).
   */
  async limits(tenantId: string): Promise<ModelRateLimits> {
    const record = await this.#record(tenantId);
    return {
      ...(record?.rpm == null ? {} : { rpm: record.rpm }),
      ...(record?.tpm == null ? {} : { tpm: record.tpm }),
    };
  }

  /** Null while the tenant may spend; else which daily budget is spent, and until when. */
  async budgetExhausted(tenantId: string): Promise<BudgetVerdict | null> {
    const cached = await this.#judge(tenantId);
    if (cached === null) return null;
    this.invalidate(tenantId);
    return this.#judge(tenantId);
  }

  /**
   * Share (0 to 1) of the tenant's daily budget still unspent, the tighter of tokens and cost; null
   * when it has none. From the cache (tiering reads it before every call, so it never forces a read).
   */
  async budgetRemaining(tenantId: string): Promise<number | null> {
    const record = await this.#record(tenantId);
    if (record === null || (record.dailyTokenBudget === null && record.dailyCostBudgetUsd === null))
      return null;
    const usage = await this.#usageToday(tenantId);
    const shares: number[] = [];
    if (record.dailyTokenBudget !== null) shares.push(share(usage.tokens, record.dailyTokenBudget));
    if (record.dailyCostBudgetUsd !== null)
      shares.push(share(usage.costUsd, record.dailyCostBudgetUsd));
    return Math.min(...shares);
  }

  /**
   * What the tenant has left today of each daily budget it has (null: no such budget) and when they
   * renew; null when it has none.
   */
  async budgetLeft(
    tenantId: string,
  ): Promise<{ tokens: number | null; costUsd: number | null; until: number } | null> {
    const record = await this.#record(tenantId);
    if (record === null || (record.dailyTokenBudget === null && record.dailyCostBudgetUsd === null))
      return null;
    const usage = await this.#usageToday(tenantId);
    return {
      tokens:
        record.dailyTokenBudget === null
          ? null
          : Math.max(0, record.dailyTokenBudget - usage.tokens),
      costUsd:
        record.dailyCostBudgetUsd === null
          ? null
          : Math.max(0, record.dailyCostBudgetUsd - usage.costUsd),
      until: usage.day + DAY_MS,
    };
  }

  /** Adds what a call of this process spent to the tenant's cached usage of today. */
  charge(tenantId: string, tokens: number, costUsd: number): void {
    const entry = this.#usage.get(tenantId);
    if (entry === undefined || entry.value.day !== startOfUtcDay(this.#clock.now())) return;
    entry.value.tokens += tokens;
    entry.value.costUsd += costUsd;
  }

  /** Forgets what is cached for the tenant (its record changed): the next call reads it again. */
  invalidate(tenantId: string): void {
    this.#records.delete(tenantId);
    this.#usage.delete(tenantId);
    this.#reading.delete(`record:${tenantId}`); // a read begun before the change must not answer later calls
    this.#reading.delete(`usage:${tenantId}`);
  }

  #once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let reading = this.#reading.get(key) as Promise<T> | undefined;
    if (reading === undefined) {
      reading = read().finally(() => {
        if (this.#reading.get(key) === reading) this.#reading.delete(key);
      });
      this.#reading.set(key, reading);
    }
    return reading;
  }

  async #judge(tenantId: string): Promise<BudgetVerdict | null> {
    const record = await this.#record(tenantId);
    if (record === null || (record.dailyTokenBudget === null && record.dailyCostBudgetUsd === null))
      return null;
    const usage = await this.#usageToday(tenantId);
    const until = usage.day + DAY_MS;
    if (record.dailyTokenBudget !== null && usage.tokens >= record.dailyTokenBudget) {
      return {
        budget: 'dailyTokenBudget',
        used: usage.tokens,
        limit: record.dailyTokenBudget,
        until,
        detail: `the tenant used ${usage.tokens} of its ${record.dailyTokenBudget} model tokens today (UTC)`,
      };
    }
    if (record.dailyCostBudgetUsd !== null && usage.costUsd >= record.dailyCostBudgetUsd) {
      return {
        budget: 'dailyCostBudgetUsd',
        used: usage.costUsd,
        limit: record.dailyCostBudgetUsd,
        until,
        detail: `the tenant spent $${usage.costUsd.toFixed(6)} of its $${record.dailyCostBudgetUsd} on models today (UTC)`,
      };
    }
    return null;
  }

  async #record(tenantId: string): Promise<TenantPolicyFields | null> {
    const now = this.#clock.now();
    const cached = this.#records.get(tenantId);
    if (cached !== undefined && now - cached.at < TENANT_POLICY_TTL_MS) return cached.value;
    return this.#once(`record:${tenantId}`, async () => {
      try {
        const tenant = await this.#source.getTenant(tenantId);
        const value =
          tenant === null
            ? null
            : {
                rpm: tenant.rpm,
                tpm: tenant.tpm,
                dailyTokenBudget: tenant.dailyTokenBudget,
                dailyCostBudgetUsd: tenant.dailyCostBudgetUsd,
              };
        remember(this.#records, tenantId, { value, at: now });
        return value;
      } catch {
        return cached?.value ?? null; // the store is unavailable: the last known record, else none (the call's commit will fail anyway)
      }
    });
  }

  async #usageToday(tenantId: string): Promise<{ day: number; tokens: number; costUsd: number }> {
    const now = this.#clock.now();
    const day = startOfUtcDay(now);
    const cached = this.#usage.get(tenantId);
    if (cached !== undefined && cached.value.day === day && now - cached.at < TENANT_USAGE_TTL_MS)
      return cached.value;
    return this.#once(`usage:${tenantId}`, async () => {
      try {
        const used = await this.#source.tenantUsageSince(tenantId, day);
        const value = { day, tokens: used.tokens, costUsd: used.costUsd };
        remember(this.#usage, tenantId, { value, at: now });
        return value;
      } catch {
        return cached !== undefined && cached.value.day === day
          ? cached.value
          : { day, tokens: 0, costUsd: 0 };
      }
    });
  }
}

function remember<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > TENANT_POLICY_CACHE_MAX) map.delete(map.keys().next().value!);
}

/** What is left of `limit` after `used`, as a share in [0, 1] (a zero budget has nothing left). */
function share(used: number, limit: number): number {
  return limit <= 0 ? 0 : Math.min(1, Math.max(0, (limit - used) / limit));
}
