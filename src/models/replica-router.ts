// Replica routing with prompt-cache affinity: for each replica, estimated completion = queue wait +
// prefill (cached part at the cached rate, the rest at the uncached rate) + network, from measured
// values; the least wins (the earlier replica on a tie). It keeps per-replica measurements and a
// bounded, expiring set of prefixes each replica has seen. It must never send anything; the gateway
// does, and reports outcomes back.
import type { Clock } from '../domain/clock.ts';
import type { PrefixPoint } from './prefix-fingerprint.ts';

/**
 * How long a replica is assumed to keep a prompt prefix cached (providers keep them ~5–10 minutes).
 */
export const PREFIX_CACHE_TTL_MS = 5 * 60_000;
export const PREFIX_CACHE_MAX_ENTRIES = 10_000;
/** Weight of a new measurement in the moving averages. */
const EWMA_ALPHA = 0.2;
const DEFAULTS = {
  networkMs: 20,
  prefillMsPerKTok: 50,
  cachedPrefillMsPerKTok: 5,
  serviceMs: 1_000,
};

export interface ReplicaEstimate {
  replica: string;
  queueMs: number;
  cachedTokens: number;
  prefillMs: number;
  networkMs: number;
  totalMs: number;
}

export interface RouteDecision {
  chosen: string;
  candidates: ReplicaEstimate[];
}

export class ReplicaStats {
  readonly name: string;
  readonly maxConcurrency: number;
  readonly #clock: Clock;
  readonly #prefixes = new Map<string, number>();
  networkMs: number;
  prefillMsPerKTok: number;
  cachedPrefillMsPerKTok: number;
  serviceMs = DEFAULTS.serviceMs;
  /** Calls sent and not finished, plus calls waiting for one of this replica's slots. */
  inFlight = 0;
  queued = 0;

  constructor(
    name: string,
    maxConcurrency: number,
    clock: Clock,
    estimates: {
      networkMs?: number;
      prefillMsPerKTok?: number;
      cachedPrefillMsPerKTok?: number;
    } = {},
  ) {
    this.name = name;
    this.maxConcurrency = maxConcurrency;
    this.#clock = clock;
    this.networkMs = estimates.networkMs ?? DEFAULTS.networkMs;
    this.prefillMsPerKTok = estimates.prefillMsPerKTok ?? DEFAULTS.prefillMsPerKTok;
    this.cachedPrefillMsPerKTok =
      estimates.cachedPrefillMsPerKTok ?? DEFAULTS.cachedPrefillMsPerKTok;
  }

  /** Estimated tokens of the longest prefix of `points` this replica saw within the cache TTL. */
  cachedTokens(points: readonly PrefixPoint[]): number {
    const now = this.#clock.now();
    for (let i = points.length - 1; i >= 0; i -= 1) {
      const seenAt = this.#prefixes.get(points[i]!.hash);
      if (seenAt !== undefined && now - seenAt < PREFIX_CACHE_TTL_MS) return points[i]!.tokens;
    }
    return 0;
  }

  /** The replica now holds every prefix of this request (it just processed it). */
  remember(points: readonly PrefixPoint[]): void {
    const now = this.#clock.now();
    for (const point of points) {
      this.#prefixes.delete(point.hash);
      this.#prefixes.set(point.hash, now);
    }
    while (this.#prefixes.size > PREFIX_CACHE_MAX_ENTRIES)
      this.#prefixes.delete(this.#prefixes.keys().next().value as string);
  }

  estimate(points: readonly PrefixPoint[]): ReplicaEstimate {
    const inputTokens = points.at(-1)?.tokens ?? 0;
    const cachedTokens = this.cachedTokens(points);
    const prefillMs =
      (cachedTokens * this.cachedPrefillMsPerKTok +
        (inputTokens - cachedTokens) * this.prefillMsPerKTok) /
      1_000;
    // A free slot means no wait; past that, each call ahead of us holds a slot for about one
    // service time.
    const ahead = Math.max(0, this.inFlight + this.queued - this.maxConcurrency + 1);
    const queueMs = (ahead * this.serviceMs) / this.maxConcurrency;
    return {
      replica: this.name,
      queueMs: round(queueMs),
      cachedTokens,
      prefillMs: round(prefillMs),
      networkMs: round(this.networkMs),
      totalMs: round(queueMs + prefillMs + this.networkMs),
    };
  }

  /**
   * Folds in a finished call: its service time, and its time to first token split into prefill at
   * the rate the provider's reported cached tokens imply (network time stays the configured
   * estimate).
   */
  observe(call: {
    serviceMs: number;
    firstTokenMs: number | undefined;
    inputTokens: number;
    cachedInputTokens: number;
  }): void {
    this.serviceMs = ewma(this.serviceMs, call.serviceMs);
    if (call.firstTokenMs === undefined || call.inputTokens <= 0) return;
    const prefillMs = Math.max(0, call.firstTokenMs - this.networkMs);
    const uncached = call.inputTokens - call.cachedInputTokens;
    if (call.cachedInputTokens === 0) {
      this.prefillMsPerKTok = ewma(this.prefillMsPerKTok, (prefillMs * 1_000) / uncached);
    } else {
      const cachedPart = Math.max(0, prefillMs - (uncached * this.prefillMsPerKTok) / 1_000);
      this.cachedPrefillMsPerKTok = ewma(
        this.cachedPrefillMsPerKTok,
        (cachedPart * 1_000) / call.cachedInputTokens,
      );
    }
  }
}

/**
 * Picks the replica with the least estimated completion time among `replicas` (already filtered to
 * those whose breakers admit calls); `undefined` when the list is empty.
 * @example
 * const decision = route(replicas, prefixFingerprint(messages, tools));
 * decision?.chosen; // 'east'
 */
export function route(
  replicas: readonly ReplicaStats[],
  points: readonly PrefixPoint[],
): RouteDecision | undefined {
  let best: ReplicaEstimate | undefined;
  const candidates: ReplicaEstimate[] = [];
  for (const replica of replicas) {
    const estimate = replica.estimate(points);
    candidates.push(estimate);
    if (best === undefined || estimate.totalMs < best.totalMs) best = estimate;
  }
  return best === undefined ? undefined : { chosen: best.replica, candidates };
}

function ewma(previous: number, sample: number): number {
  return Number.isFinite(sample) ? previous + EWMA_ALPHA * (sample - previous) : previous;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
