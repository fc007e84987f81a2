// Requests-per-minute, tokens-per-minute and concurrency limits, keyed (`model:<name>`,
// `tenant:<id>`), over an exact sliding 60-second log. Tokens are reserved before a call (estimated
// input + max output) and settled to the actual usage afterwards. Callers that do not fit wait
// (abortably) with a reason; the limiter never holds a worker's lease state and never reads the
// wall clock itself (tests drive it with a ManualClock). Hand-written: token-bucket libraries
// (bottleneck, limiter) refill continuously, which lets a full bucket plus a minute of refill
// through in the first minute (up to 2 × TPM); a sliding log keeps every 60 s window within the
// limit.
import { KeelError } from '../domain/keel-error.ts';
import type { Clock } from '../domain/clock.ts';
import type { ModelRateLimits } from '../sdk/types.ts';

export const RATE_WINDOW_MS = 60_000;

interface Entry {
  at: number;
  tokens: number;
  /** Left the 60 s window: settling it must no longer change the window's total. */
  expired: boolean;
}

interface KeyState {
  limits: ModelRateLimits;
  log: Entry[];
  tokens: number;
  inFlight: number;
}

export interface LimitedKey {
  key: string;
  limits: ModelRateLimits;
}

export interface Reservation {
  /**
   * Settles the reserved tokens to what the call really used and frees its concurrency slot.
   * Idempotent.
   */
  settle(actualTokens: number): void;
}

export type Verdict =
  | { ok: true; reservation: Reservation }
  | { ok: false; waitMs: number | undefined; reason: string };

/**
 * What a model call reserves capacity through: this process's limiter, or limits shared by all
 * processes.
 */
export interface RateGate {
  reserve(
    keys: readonly LimitedKey[],
    tokens: number,
    signal: AbortSignal,
    onWait?: (reason: string, waitMs: number | undefined) => void,
  ): Promise<Reservation>;
}

export class RateLimiter implements RateGate {
  readonly #clock: Clock;
  readonly #keys = new Map<string, KeyState>();
  #released: Array<() => void> = [];

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * Reserves one request and `tokens` tokens under every key, or says how long to wait (undefined:
   * until a concurrent call ends). Throws `model_request_too_large` when `tokens` exceeds a key's
   * TPM on its own.
   */
  tryReserve(keys: readonly LimitedKey[], tokens: number): Verdict {
    const now = this.#clock.now();
    let worst: { waitMs: number | undefined; reason: string } | undefined;
    for (const { key, limits } of keys) {
      const state = this.#state(key, limits, now);
      const blocked = blockedFor(state, key, tokens, now);
      if (
        blocked !== undefined &&
        (worst === undefined || (worst.waitMs ?? Infinity) < (blocked.waitMs ?? Infinity))
      )
        worst = blocked;
    }
    if (worst !== undefined) return { ok: false, ...worst };
    const held: Array<{ state: KeyState; entry: Entry }> = [];
    for (const { key } of keys) {
      const state = this.#keys.get(key)!;
      const entry: Entry = { at: now, tokens, expired: false };
      state.log.push(entry);
      state.tokens += tokens;
      state.inFlight += 1;
      held.push({ state, entry });
    }
    let settled = false;
    return {
      ok: true,
      reservation: {
        settle: (actualTokens) => {
          if (settled) return;
          settled = true;
          for (const { state, entry } of held) {
            if (!entry.expired) state.tokens += actualTokens - entry.tokens;
            entry.tokens = actualTokens;
            state.inFlight -= 1;
          }
          for (const wake of this.#released.splice(0)) wake();
        },
      },
    };
  }

  /**
   * Waits until the call fits, then reserves it. `onWait` hears each wait's reason (for the
   * effect's attributes).
   * @example
   * const reservation = await limiter.reserve([{ key: 'tenant:t1', limits: { tpm: 90_000 } }], 1_200, signal);
   * try { usage = await call(); } finally { reservation.settle(usage?.total ?? 0); }
   */
  async reserve(
    keys: readonly LimitedKey[],
    tokens: number,
    signal: AbortSignal,
    onWait?: (reason: string, waitMs: number | undefined) => void,
  ): Promise<Reservation> {
    for (;;) {
      signal.throwIfAborted();
      const verdict = this.tryReserve(keys, tokens);
      if (verdict.ok) return verdict.reservation;
      onWait?.(verdict.reason, verdict.waitMs);
      await this.#waitFor(verdict.waitMs, signal);
    }
  }

  /** Tokens and requests counted in the last minute under `key` (for stats and tests). */
  usage(key: string): { requests: number; tokens: number; inFlight: number } {
    const state = this.#keys.get(key);
    if (state === undefined) return { requests: 0, tokens: 0, inFlight: 0 };
    prune(state, this.#clock.now());
    return { requests: state.log.length, tokens: state.tokens, inFlight: state.inFlight };
  }

  /**
   * Sleeps until `waitMs` passes (on the clock) or a reservation settles, whichever is first;
   * leaves no listener.
   */
  async #waitFor(waitMs: number | undefined, signal: AbortSignal): Promise<void> {
    const wake = new AbortController();
    const onAbort = (): void => wake.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const onRelease = (): void => wake.abort();
    this.#released.push(onRelease);
    try {
      if (waitMs === undefined) {
        await new Promise<void>((resolve) =>
          wake.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
      } else {
        await this.#clock.sleep(Math.max(1, waitMs), wake.signal).catch(() => {});
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#released = this.#released.filter((fn) => fn !== onRelease);
      if (!wake.signal.aborted) wake.abort();
    }
    signal.throwIfAborted();
  }

  #state(key: string, limits: ModelRateLimits, now: number): KeyState {
    let state = this.#keys.get(key);
    if (state === undefined) {
      state = { limits, log: [], tokens: 0, inFlight: 0 };
      this.#keys.set(key, state);
    }
    state.limits = limits;
    prune(state, now);
    return state;
  }
}

function prune(state: KeyState, now: number): void {
  let drop = 0;
  while (drop < state.log.length && state.log[drop]!.at + RATE_WINDOW_MS <= now) {
    state.tokens -= state.log[drop]!.tokens;
    state.log[drop]!.expired = true;
    drop += 1;
  }
  if (drop > 0) state.log.splice(0, drop);
}

function blockedFor(
  state: KeyState,
  key: string,
  tokens: number,
  now: number,
): { waitMs: number | undefined; reason: string } | undefined {
  const { rpm, tpm, maxConcurrency } = state.limits;
  if (maxConcurrency !== undefined && state.inFlight >= maxConcurrency)
    return { waitMs: undefined, reason: `${key}: ${maxConcurrency} concurrent calls` };
  if (rpm !== undefined && state.log.length + 1 > rpm) {
    return {
      waitMs: state.log[state.log.length - rpm]!.at + RATE_WINDOW_MS - now,
      reason: `${key}: ${rpm} requests per minute`,
    };
  }
  if (tpm !== undefined && state.tokens + tokens > tpm) {
    if (tokens > tpm) {
      throw requestTooLarge(key, tokens, tpm);
    }
    let freed = 0;
    for (const entry of state.log) {
      freed += entry.tokens;
      if (state.tokens - freed + tokens <= tpm)
        return {
          waitMs: entry.at + RATE_WINDOW_MS - now,
          reason: `${key}: ${tpm} tokens per minute`,
        };
    }
    // Only in-flight reservations hold the window (settled entries expire): wait for one to settle.
    return { waitMs: undefined, reason: `${key}: ${tpm} tokens per minute` };
  }
  return undefined;
}

export function requestTooLarge(key: string, tokens: number, tpm: number): KeelError {
  return new KeelError(
    'model_request_too_large',
    `${key}: a call needing ${tokens} tokens can never fit a limit of ${tpm} tokens per minute`,
    { details: { key, tokens, tpm } },
  );
}
