// Maps what the provider SDKs throw (HTTP status + headers, connection failures, unparsable bodies)
// to typed KeelErrors: 429/408/409/5xx/network/timeouts/broken bodies are retryable (with
// Retry-After when given); 400/401/403/404/422 and context-length errors are final. It reads status
// and headers only: never the API key.
import { KeelError } from '../../domain/keel-error.ts';
import { internalError, isProgrammingError } from '../../domain/internal-error.ts';

/**
 * Retry-After values above this are treated as this (the gateway clamps again to its own maximum).
 */
const RETRY_AFTER_PARSE_MAX_MS = 24 * 3_600_000;

interface HttpLikeError {
  status?: number;
  headers?: Headers | Record<string, string> | undefined;
  message?: string;
  code?: string | null;
  error?: unknown;
}

/**
 * The KeelError for a failed attempt against `endpoint` (an id such as `gpt/east`, safe to show).
 * @example
 * classifyProviderError(rateLimitErrorWithRetryAfter2s, 'gpt/east');
 * // KeelError model_rate_limited, retryable, retryAfterMs 2000
 */
export function classifyProviderError(
  error: unknown,
  endpoint: string,
  key?: KeySource,
): KeelError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as HttpLikeError;
  const status = typeof e.status === 'number' ? e.status : undefined;
  const detail = `${endpoint}: ${(e.message ?? String(error)).slice(0, 500)}`;
  const details = { endpoint, ...(status === undefined ? {} : { status }) };
  if (status === undefined) {
    // A bug in the adapter (not the provider's answer): never reported as the provider's outage.
    if (isProgrammingError(error)) return internalError(error, `a call to ${endpoint}`);
    const name = error instanceof Error ? error.name : '';
    if (error instanceof SyntaxError || /JSON|parse/i.test(e.message ?? '')) {
      return new KeelError('model_response_invalid', `malformed response from ${detail}`, {
        retryable: true,
        details,
        cause: error,
      });
    }
    const timedOut = /timeout|timed out/i.test(name + (e.message ?? ''));
    return new KeelError(
      timedOut ? 'model_timeout' : 'model_unavailable',
      `could not reach ${detail}`,
      { retryable: true, details, cause: error },
    );
  }
  const retryAfterMs = retryAfter(e.headers);
  const retryOptions = {
    retryable: true,
    details,
    cause: error,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
  if (status === 429)
    return new KeelError('model_rate_limited', `rate limited by ${detail}`, retryOptions);
  if (status === 408 || status === 409 || status >= 500)
    return new KeelError(
      'model_unavailable',
      `provider error ${status} from ${detail}`,
      retryOptions,
    );
  if (isContextLength(e))
    return new KeelError(
      'model_context_length_exceeded',
      `the request is longer than the model's context (${detail})`,
      { details, cause: error },
    );
  if (status === 401 || status === 403)
    return new KeelError(
      'model_auth_failed',
      `the provider refused the credentials (${status}) at ${endpoint}; ${describeKey(key)}`,
      {
        details: {
          ...details,
          ...(key?.variable === undefined ? {} : { apiKeyEnv: key.variable, keySet: key.set }),
        },
        cause: error,
      },
    );
  if (status === 404)
    return new KeelError(
      'model_endpoint_not_found',
      `the provider has no such model or path (${detail})`,
      { details, cause: error },
    );
  return new KeelError(
    'model_request_invalid',
    `the provider rejected the request (${status}): ${detail}`,
    { details, cause: error },
  );
}

/** Where an endpoint's key came from: the variable's name and whether it held a value. */
export interface KeySource {
  variable: string | undefined;
  set: boolean;
}

export function keySource(endpoint: {
  apiKey: string | undefined;
  apiKeyEnv?: string | undefined;
}): KeySource {
  return { variable: endpoint.apiKeyEnv, set: endpoint.apiKey !== undefined };
}

/** Says which variable the refused key came from (never the key), and whether it was unset. */
function describeKey(key: KeySource | undefined): string {
  if (key === undefined) return 'check the key';
  if (key.variable === undefined)
    return 'the model declares no apiKeyEnv, so no key was sent (name the variable holding the key)';
  return key.set
    ? `the key came from ${key.variable}: check its value`
    : `the key comes from ${key.variable}, which is unset in this process: set it`;
}

/**
 * A model answer that the SDK parsed but that is not usable (e.g. tool arguments that are not
 * JSON): retryable.
 */
export function invalidResponse(endpoint: string, what: string): KeelError {
  return new KeelError('model_response_invalid', `${endpoint}: ${what}`, {
    retryable: true,
    details: { endpoint },
  });
}

function isContextLength(e: HttpLikeError): boolean {
  const text = `${e.code ?? ''} ${e.message ?? ''} ${JSON.stringify(e.error ?? '')}`;
  return /context_length_exceeded|context length|maximum context|prompt is too long|too many tokens/i.test(
    text,
  );
}

/**
 * Milliseconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date); undefined when
 * absent or bad.
 */
export function retryAfter(headers: HttpLikeError['headers']): number | undefined {
  if (headers === undefined) return undefined;
  const get = (name: string): string | null | undefined =>
    headers instanceof Headers ? headers.get(name) : headers[name];
  const ms = Number(get('retry-after-ms'));
  if (
    Number.isFinite(ms) &&
    ms >= 0 &&
    get('retry-after-ms') !== null &&
    get('retry-after-ms') !== undefined
  )
    return Math.min(ms, RETRY_AFTER_PARSE_MAX_MS);
  const value = get('retry-after');
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds))
    return seconds < 0 ? undefined : Math.min(seconds * 1_000, RETRY_AFTER_PARSE_MAX_MS);
  const at = Date.parse(value);
  return Number.isNaN(at)
    ? undefined
    : Math.min(Math.max(0, at - Date.now()), RETRY_AFTER_PARSE_MAX_MS);
}
