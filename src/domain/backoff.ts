// How long to wait before the next attempt of anything Keel retries (a tool, a step, a model call,
// a webhook, a stream reconnect): exponential growth capped at a maximum, with jitter so failures
// that happened together do not retry in lockstep. Pure arithmetic: it never sleeps and never
// decides *whether* to retry.

export interface BackoffPolicy {
  /** Ceiling of the first wait (after attempt 1), in ms. */
  initialDelayMs: number;
  /** No wait is longer than this, in ms. */
  maxDelayMs: number;
  /** Each attempt multiplies the ceiling by this (≥ 1). */
  multiplier: number;
  /**
   * `full`: uniform in [0, ceiling) — the widest spread, for work many runs retry at once. `equal`:
   * uniform in [ceiling/2, ceiling] — a guaranteed minimum wait, for a remote peer that needs a
   * pause.
   */
  jitter: 'full' | 'equal';
}

/**
 * The wait after failed attempt `attempt` (1-based): the ceiling is min(maxDelayMs, initialDelayMs
 * × multiplier^(attempt−1)), spread by the policy's jitter.
 * @example
 * backoffDelayMs({ initialDelayMs: 100, maxDelayMs: 10_000, multiplier: 2, jitter: 'full' }, 3, () => 0.5); // 200
 */
export function backoffDelayMs(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(
    policy.maxDelayMs,
    policy.initialDelayMs * policy.multiplier ** Math.max(0, attempt - 1),
  );
  return policy.jitter === 'full'
    ? Math.floor(random() * ceiling)
    : Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
