// Reports one model call to telemetry from inside the gateway's retry loop: counts the attempts the
// provider rate-limited (HTTP 429) and reports the call once, when it ends, whichever way it ends.
import { isKeelError } from '../domain/keel-error.ts';
import { telemetry, type ModelCallReport } from './telemetry.ts';

const HTTP_TOO_MANY_REQUESTS = 429;

/** Whether a provider error was a rate limit: a KeelError whose details carry HTTP status 429. */
export function isRateLimit(error: unknown): boolean {
  if (!isKeelError(error)) return false;
  const details = error.details as { status?: unknown; httpStatus?: unknown } | undefined;
  return (
    details?.status === HTTP_TOO_MANY_REQUESTS || details?.httpStatus === HTTP_TOO_MANY_REQUESTS
  );
}

/**
 * @example
 * const report = modelCallReporter('mock', 'planner');
 * try { … report.end('ok', attempt) } catch (e) { report.attemptFailed(e); throw report.end('error', attempt, e); }
 */
export function modelCallReporter(provider: string, model: string) {
  let rateLimited = 0;
  let ended = false;
  return {
    attemptFailed(error: unknown): void {
      if (isRateLimit(error)) rateLimited += 1;
    },
    /**
     * Reports the call (once) and returns `error`, so a caller can `throw report.end(…, error)`.
     */
    end<E>(outcome: ModelCallReport['outcome'], attempts: number, error?: E): E {
      if (!ended) telemetry.modelCall({ provider, model, outcome, attempts, rateLimited });
      ended = true;
      return error as E;
    },
  };
}
