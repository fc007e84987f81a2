// Retries of failed attempts (a tool's or a step's code threw): how many, how long to back off
// (exponential with full jitter, so synchronized failures do not retry in lockstep), which errors
// never retry, and the run's retry budget that every retry spends. Crash recovery is not a retry
// and spends nothing; this module never decides that.
import { backoffDelayMs } from '../domain/backoff.ts';
import type { Clock } from '../domain/clock.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import type { RetryPolicy } from '../sdk/types.ts';

export const RETRY_INITIAL_DELAY_MS_DEFAULT = 100;
export const RETRY_MAX_DELAY_MS_DEFAULT = 10_000;
export const RETRY_MULTIPLIER_DEFAULT = 2;
/** Retries one run may spend in all when its budget does not say. */
export const RUN_MAX_RETRIES_DEFAULT = 100;

/** Errors the engine raises about the run itself: retrying the attempt cannot help. */
const NEVER_RETRIED = new Set([
  'cancelled',
  'budget_exceeded',
  'non_determinism',
  'tool_input_invalid',
  'retry_budget_exhausted',
  'tool_arguments_too_large',
]);

export interface ResolvedRetryPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  multiplier: number;
  nonRetryable: ReadonlySet<string>;
}

export function resolveRetryPolicy(
  policy: RetryPolicy | undefined,
  maxAttempts: number | undefined,
): ResolvedRetryPolicy {
  return {
    maxAttempts: Math.max(1, Math.floor(policy?.maxAttempts ?? maxAttempts ?? 1)),
    initialDelayMs: Math.max(0, policy?.initialDelayMs ?? RETRY_INITIAL_DELAY_MS_DEFAULT),
    maxDelayMs: Math.max(0, policy?.maxDelayMs ?? RETRY_MAX_DELAY_MS_DEFAULT),
    multiplier: Math.max(1, policy?.multiplier ?? RETRY_MULTIPLIER_DEFAULT),
    nonRetryable: new Set(policy?.nonRetryable ?? []),
  };
}

/**
 * Full jitter: uniform in [0, min(max, initial × multiplier^(attempt−1))], for the wait after
 * failed `attempt`.
 */
export function backoffMs(
  policy: ResolvedRetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  return backoffDelayMs({ ...policy, jitter: 'full' }, attempt, random);
}

export function isRetryable(policy: ResolvedRetryPolicy, error: unknown): boolean {
  const code = isKeelError(error) ? error.code : (error as { code?: unknown } | null)?.code;
  const name = error instanceof Error ? error.name : undefined;
  if (typeof code === 'string' && (NEVER_RETRIED.has(code) || policy.nonRetryable.has(code)))
    return false;
  return !(name !== undefined && policy.nonRetryable.has(name));
}

/** What happens after attempt number `attempt` failed with `error`. */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; error: unknown };

export interface RetryBudget {
  /** Takes one retry from the run's budget; false when it is spent. */
  take(): boolean;
  limit: number;
}

export function decideRetry(
  policy: ResolvedRetryPolicy,
  attempt: number,
  error: unknown,
  budget: RetryBudget,
): RetryDecision {
  if (attempt >= policy.maxAttempts || !isRetryable(policy, error)) return { retry: false, error };
  if (!budget.take()) {
    return {
      retry: false,
      error: new KeelError(
        'retry_budget_exhausted',
        `the run spent its budget of ${budget.limit} retries; the last attempt failed: ${messageOf(error)}`,
        {
          details: { maxRetries: budget.limit, attempt },
          cause: error,
        },
      ),
    };
  }
  return { retry: true, delayMs: backoffMs(policy, attempt) };
}

/**
 * Waits out a backoff on the run's clock; rejects at once (with the abort's reason) if the run is
 * stopped meanwhile.
 */
export function backoff(delayMs: number, signal: AbortSignal, clock: Clock): Promise<void> {
  return delayMs <= 0 ? Promise.resolve() : clock.sleep(delayMs, signal);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
