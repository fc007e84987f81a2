// Model rate limits counted across every process of a deployment (distributed mode): RPM and TPM of
// a model, an account or a tenant are reserved in the store's shared rate windows, so N processes
// together stay within each limit instead of allowing N times it. Concurrency limits stay per
// process (this process's RateLimiter): they protect what this process holds open. When the windows
// cannot be reached the call waits and asks again rather than going out unmetered.
import type { RateWindows, WindowKey } from '../store/rate-windows.ts';
import type { ModelRateLimits } from '../sdk/types.ts';
import type { Clock } from '../domain/clock.ts';
import {
  requestTooLarge,
  type LimitedKey,
  type RateGate,
  type RateLimiter,
  type Reservation,
} from './rate-limiter.ts';

/**
 * Longest single sleep before asking the windows again (capacity freed early elsewhere is seen this
 * late at most).
 */
export const SHARED_WINDOW_MAX_SLEEP_MS = 2_000;
/** Spread of wake-ups, so waiters released by the same expiring second do not all ask at once. */
const WAKE_JITTER_MS = 100;
const UNREACHABLE_RETRY_MS = 1_000;

export class SharedRateLimiter implements RateGate {
  readonly #local: RateLimiter;
  readonly #windows: RateWindows;
  readonly #clock: Clock;
  readonly #random: () => number;

  constructor(
    local: RateLimiter,
    windows: RateWindows,
    clock: Clock,
    random: () => number = Math.random,
  ) {
    this.#local = local;
    this.#windows = windows;
    this.#clock = clock;
    this.#random = random;
  }

  async reserve(
    keys: readonly LimitedKey[],
    tokens: number,
    signal: AbortSignal,
    onWait?: (reason: string, waitMs: number | undefined) => void,
  ): Promise<Reservation> {
    const metered = keys.filter(
      ({ limits }) => limits.rpm !== undefined || limits.tpm !== undefined,
    );
    if (metered.length === 0) return this.#local.reserve(keys, tokens, signal, onWait);
    for (const { key, limits } of metered)
      if (limits.tpm !== undefined && tokens > limits.tpm)
        throw requestTooLarge(key, tokens, limits.tpm);
    const local = await this.#local.reserve(
      keys.map(({ key, limits }) => ({ key, limits: concurrencyOnly(limits) })),
      tokens,
      signal,
      onWait,
    );
    const windowKeys: WindowKey[] = metered
      .map(({ key, limits }) => ({ key, rpm: limits.rpm, tpm: limits.tpm }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    try {
      for (;;) {
        signal.throwIfAborted();
        let waitMs: number;
        try {
          const verdict = await this.#windows.reserve(windowKeys, tokens);
          if (verdict.granted)
            return this.#settleBoth(
              local,
              windowKeys.map((k) => k.key),
              verdict.second,
              tokens,
            );
          waitMs = Math.min(verdict.waitMs, SHARED_WINDOW_MAX_SLEEP_MS);
          onWait?.(describe(verdict.blocked, windowKeys), verdict.waitMs);
        } catch {
          waitMs = UNREACHABLE_RETRY_MS;
          onWait?.(
            'shared rate windows unreachable (the store): waiting to meter the call',
            undefined,
          );
        }
        await this.#clock.sleep(waitMs + Math.floor(this.#random() * WAKE_JITTER_MS), signal);
      }
    } catch (error) {
      local.settle(0);
      throw error;
    }
  }

  #settleBoth(local: Reservation, keys: string[], second: number, reserved: number): Reservation {
    let settled = false;
    return {
      settle: (actualTokens) => {
        if (settled) return;
        settled = true;
        local.settle(actualTokens);
        // A correction that cannot be written leaves the window counting the estimate:
        // conservative, never over.
        this.#windows.settle(keys, second, actualTokens - reserved).catch(() => {});
      },
    };
  }
}

function concurrencyOnly(limits: ModelRateLimits): ModelRateLimits {
  return limits.maxConcurrency === undefined ? {} : { maxConcurrency: limits.maxConcurrency };
}

function describe(blocked: string, keys: readonly WindowKey[]): string {
  const key = keys.find((k) => k.key === blocked);
  const limits = [
    key?.rpm === undefined ? undefined : `${key.rpm} requests per minute`,
    key?.tpm === undefined ? undefined : `${key.tpm} tokens per minute`,
  ].filter(Boolean);
  return `${blocked}: ${limits.join(', ')} (all processes)`;
}
