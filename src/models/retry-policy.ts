// How long to wait before the next attempt: the provider's Retry-After when it sent one (clamped),
// else exponential backoff with full jitter (src/domain/backoff.ts). Pure arithmetic: it never
// sleeps and never decides *whether* to retry.
import { backoffDelayMs } from '../domain/backoff.ts';

export const RETRY_BASE_DELAY_MS = 100;
export const RETRY_MAX_DELAY_MS = 5_000;
/**
 * A provider's Retry-After is honoured up to this; longer hints are clamped so a call stays
 * bounded.
 */
export const RETRY_AFTER_MAX_MS = 60_000;

/**
 * Delay before attempt `attempt + 1`: the provider's Retry-After when given (clamped to
 * `RETRY_AFTER_MAX_MS`), else full jitter over `min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS *
 * 2^(attempt-1))`.
 * @example
 * retryDelayMs(2, undefined, Math.random); // somewhere in [0, 200)
 * retryDelayMs(1, 750, Math.random);       // 750
 */
export function retryDelayMs(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), RETRY_AFTER_MAX_MS);
  return backoffDelayMs(
    {
      initialDelayMs: RETRY_BASE_DELAY_MS,
      maxDelayMs: RETRY_MAX_DELAY_MS,
      multiplier: 2,
      jitter: 'full',
    },
    attempt,
    random,
  );
}
