// Keel's own failures during an effect: a TypeError in the gateway, a bug in a provider adapter.
// They become `internal_error` with a correlation id that the error (API, journal) and the log
// line both carry, so an operator finds the stack from the run. They must never be reported as a
// provider outage (`model_unavailable`): that sends the operator to the wrong system.
import { randomUUID } from 'node:crypto';
import { KeelError, isKeelError } from './keel-error.ts';

/**
 * An error Keel's code raised (not the provider's answer) as `internal_error`; a KeelError is
 * returned as it is.
 * @example
 * internalError(new TypeError("Cannot read properties of undefined (reading 'length')"), 'model gpt');
 * // KeelError internal_error, details { correlationId: 'err_…', during: 'model gpt', name: 'TypeError' }
 */
export function internalError(error: unknown, during: string): KeelError {
  if (isKeelError(error)) return error;
  const correlationId = `err_${randomUUID()}`;
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return new KeelError(
    'internal_error',
    `internal error in Keel during ${during} (${name}: ${message.slice(0, 300)}); correlation id ${correlationId}, logged with its stack`,
    { details: { correlationId, during, name }, cause: error },
  );
}

/**
 * A JavaScript error that only a bug raises (reading a property of undefined, a bad array length),
 * as opposed to an HTTP or network failure, which provider SDKs raise as their own error classes.
 * `fetch failed` (undici's TypeError for a refused connection) is a network failure.
 */
export function isProgrammingError(error: unknown): boolean {
  if (
    !(error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError)
  )
    return false;
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return error.message !== 'fetch failed' && typeof cause?.code !== 'string';
}

/** Whether `error` is an internal_error with its correlation id and original cause (to log). */
export function internalErrorCause(
  error: unknown,
): { correlationId: string; cause: unknown } | undefined {
  if (!isKeelError(error) || error.code !== 'internal_error') return undefined;
  const correlationId = error.details?.correlationId;
  return typeof correlationId === 'string' ? { correlationId, cause: error.cause } : undefined;
}
