// Platform-wide daily model caps (KEEL_PLATFORM_TOKEN_CAP_PER_DAY, KEEL_PLATFORM_COST_CAP_PER_DAY):
// tokens and USD spent on models by every tenant together since midnight UTC, read from the store's
// committed model effects (on Postgres the whole cluster's) and cached for PLATFORM_USAGE_TTL_MS,
// growing in between with this process's own calls. A verdict of "spent" is confirmed on a fresh
// read, so a new day is never refused from a stale cache. It never parks or fails anything itself.
import { SYSTEM_CLOCK, type Clock } from '../domain/clock.ts';
import type { BudgetVerdict } from './tenant-policy.ts';
import { startOfUtcDay } from './tenant-policy.ts';

/**
 * How long the platform's usage read from the store is trusted, in ms: other processes' spend shows
 * up after this, so N processes may overshoot a cap by what they spend in this long.
 */
export const PLATFORM_USAGE_TTL_MS = 2_000;
const DAY_MS = 86_400_000;

export interface PlatformCapSettings {
  /** Model tokens (input + output) all tenants together may use per UTC day. */
  tokensPerDay?: number | undefined;
  /** USD all tenants together may spend on models per UTC day. */
  costUsdPerDay?: number | undefined;
}

/** Where usage comes from: the store satisfies it. */
export interface PlatformUsageSource {
  platformUsageSince(sinceMs: number): Promise<{ tokens: number; costUsd: number }>;
}

export interface PlatformUsage {
  day: number;
  tokens: number;
  costUsd: number;
}

export class PlatformCaps {
  readonly settings: PlatformCapSettings;
  readonly #source: PlatformUsageSource;
  readonly #clock: Clock;
  #cached: { value: PlatformUsage; at: number } | undefined;
  #reading: Promise<PlatformUsage> | undefined;

  constructor(
    source: PlatformUsageSource,
    settings: PlatformCapSettings,
    options: { clock?: Clock } = {},
  ) {
    this.#source = source;
    this.settings = settings;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
  }

  get enabled(): boolean {
    return this.settings.tokensPerDay !== undefined || this.settings.costUsdPerDay !== undefined;
  }

  /** Null while the platform may spend on models today; else which cap is spent, until when. */
  async exhausted(): Promise<BudgetVerdict | null> {
    if (!this.enabled) return null;
    if (this.#judge(await this.usage()) === null) return null;
    this.#cached = undefined;
    return this.#judge(await this.usage());
  }

  /** Today's platform-wide usage as last read (plus this process's spend since). */
  async usage(): Promise<PlatformUsage> {
    const now = this.#clock.now();
    const day = startOfUtcDay(now);
    const cached = this.#cached;
    if (cached !== undefined && cached.value.day === day && now - cached.at < PLATFORM_USAGE_TTL_MS)
      return cached.value;
    this.#reading ??= this.#source
      .platformUsageSince(day)
      .then(
        (used) => {
          const value = { day, tokens: used.tokens, costUsd: used.costUsd };
          this.#cached = { value, at: now };
          return value;
        },
        // The store is unavailable: the last known usage of today, else none (the call's commit
        // will fail anyway).
        () =>
          cached !== undefined && cached.value.day === day
            ? cached.value
            : { day, tokens: 0, costUsd: 0 },
      )
      .finally(() => {
        this.#reading = undefined;
      });
    return this.#reading;
  }

  /** Adds what a call of this process spent to today's cached usage. */
  charge(tokens: number, costUsd: number): void {
    const entry = this.#cached;
    if (entry === undefined || entry.value.day !== startOfUtcDay(this.#clock.now())) return;
    entry.value.tokens += tokens;
    entry.value.costUsd += costUsd;
  }

  #judge(usage: PlatformUsage): BudgetVerdict | null {
    const until = usage.day + DAY_MS;
    const { tokensPerDay, costUsdPerDay } = this.settings;
    if (tokensPerDay !== undefined && usage.tokens >= tokensPerDay)
      return {
        budget: 'platformTokenCapPerDay',
        used: usage.tokens,
        limit: tokensPerDay,
        until,
        detail: `the platform used ${usage.tokens} of its ${tokensPerDay} model tokens today (UTC), across all tenants`,
      };
    if (costUsdPerDay !== undefined && usage.costUsd >= costUsdPerDay)
      return {
        budget: 'platformCostCapPerDay',
        used: usage.costUsd,
        limit: costUsdPerDay,
        until,
        detail: `the platform spent $${usage.costUsd.toFixed(6)} of its $${costUsdPerDay} on models today (UTC), across all tenants`,
      };
    return null;
  }
}
