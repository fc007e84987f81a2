// Retry budgets: a retry is allowed only while retries stay within `ratio` × first attempts over a
// sliding window (per provider), plus a small floor so a quiet provider can still retry, and within
// a per-run cap. So a provider outage multiplies load by at most 1 + ratio. It counts; it never
// sleeps, and never reads the wall clock itself.
import type { Clock } from '../domain/clock.ts';

export interface RetryBudgetSettings {
  /** Retries allowed per first attempt over the window (0.2 = at most 20% extra load). */
  ratio: number;
  /** Retries always allowed per window, so a provider with little traffic can still retry. */
  minRetriesPerWindow: number;
  windowMs: number;
  /** Retries one run may spend across all its model calls. */
  perRun: number;
}

export const RETRY_BUDGET_DEFAULTS: RetryBudgetSettings = {
  ratio: 0.2,
  minRetriesPerWindow: 10,
  windowMs: 10_000,
  perRun: 20,
};
/** Window resolution: the window slides in this many buckets. */
const BUCKETS = 10;
/**
 * Runs whose retry counts are remembered; the oldest is forgotten first (a bound, not a correctness
 * need).
 */
const RUNS_TRACKED_MAX = 10_000;

interface Bucket {
  start: number;
  first: number;
  retries: number;
}

class SlidingCounts {
  readonly #buckets: Bucket[] = [];
  readonly #bucketMs: number;
  readonly #windowMs: number;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
    this.#bucketMs = Math.max(1, Math.floor(windowMs / BUCKETS));
  }

  add(now: number, field: 'first' | 'retries'): void {
    const start = now - (now % this.#bucketMs);
    let last = this.#buckets.at(-1);
    if (last === undefined || last.start !== start) {
      last = { start, first: 0, retries: 0 };
      this.#buckets.push(last);
    }
    last[field] += 1;
    this.#trim(now);
  }

  totals(now: number): { first: number; retries: number } {
    this.#trim(now);
    let first = 0;
    let retries = 0;
    for (const bucket of this.#buckets) {
      first += bucket.first;
      retries += bucket.retries;
    }
    return { first, retries };
  }

  #trim(now: number): void {
    while (
      this.#buckets.length > 0 &&
      this.#buckets[0]!.start + this.#bucketMs <= now - this.#windowMs
    )
      this.#buckets.shift();
  }
}

export type RetryVerdict =
  | { allowed: true }
  | { allowed: false; reason: 'provider_retry_budget' | 'run_retry_budget' };

export class RetryBudget {
  readonly settings: RetryBudgetSettings;
  readonly #clock: Clock;
  readonly #providers = new Map<string, SlidingCounts>();
  readonly #runs = new Map<string, number>();

  constructor(settings: RetryBudgetSettings, clock: Clock) {
    this.settings = settings;
    this.#clock = clock;
  }

  /** Records a logical call's first attempt against `provider`. */
  firstAttempt(provider: string): void {
    this.#counts(provider).add(this.#clock.now(), 'first');
  }

  /**
   * Asks for one retry of a call of `runId` against `provider`; when allowed, the retry is counted
   * at once.
   * @example
   * if (!budget.tryRetry('openai', runId).allowed) throw exhausted;
   */
  tryRetry(provider: string, runId: string | undefined): RetryVerdict {
    const now = this.#clock.now();
    const counts = this.#counts(provider);
    const { first, retries } = counts.totals(now);
    if (retries + 1 > this.settings.ratio * first + this.settings.minRetriesPerWindow)
      return { allowed: false, reason: 'provider_retry_budget' };
    if (runId !== undefined) {
      const used = this.#runs.get(runId) ?? 0;
      if (used + 1 > this.settings.perRun) return { allowed: false, reason: 'run_retry_budget' };
      this.#runs.delete(runId);
      this.#runs.set(runId, used + 1);
      if (this.#runs.size > RUNS_TRACKED_MAX)
        this.#runs.delete(this.#runs.keys().next().value as string);
    }
    counts.add(now, 'retries');
    return { allowed: true };
  }

  #counts(provider: string): SlidingCounts {
    let counts = this.#providers.get(provider);
    if (counts === undefined) {
      counts = new SlidingCounts(this.settings.windowMs);
      this.#providers.set(provider, counts);
    }
    return counts;
  }
}
