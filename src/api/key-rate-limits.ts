// Per-key request rate limits: each tenant API key may make at most its `requestsPerMinute`
// requests a minute (or the process default, KEEL_KEY_REQUESTS_PER_MINUTE) through this API
// process; past it a request answers `429 key_rate_limited` with Retry-After, before its body is
// read. Counting is @fastify/rate-limit's fixed one-minute window in this process's memory, so N
// API processes admit up to N times a key's limit. Requests without a tenant identity (health,
// the dashboard's files, the platform admin) are not counted.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KeelError } from '../domain/keel-error.ts';
import type { Identity } from './auth.ts';

const WINDOW_MS = 60_000;
/** Keys counted at once in this process; past it the least recently seen are forgotten. */
const COUNTED_KEYS_MAX = 10_000;

export interface KeyRateLimitOptions {
  /** Requests a minute for a key without its own limit; undefined: unlimited. */
  defaultPerMinute: number | undefined;
  /** The request's authenticated identity, if it is a tenant request. */
  identityOf(request: FastifyRequest): Identity | undefined;
}

export async function registerKeyRateLimits(
  app: FastifyInstance,
  options: KeyRateLimitOptions,
): Promise<void> {
  const limitOf = (request: FastifyRequest): number | undefined => {
    const identity = options.identityOf(request);
    return identity === undefined
      ? undefined
      : (identity.key.requestsPerMinute ?? options.defaultPerMinute);
  };
  await app.register(rateLimit, {
    global: true,
    // Route-level onRequest: after the app's own hook authenticated the key and checked its scope.
    hook: 'onRequest',
    timeWindow: WINDOW_MS,
    cache: COUNTED_KEYS_MAX,
    keyGenerator: (request) => options.identityOf(request)?.key.id ?? '',
    allowList: (request) => limitOf(request) === undefined,
    max: (request) => limitOf(request) ?? 0,
    addHeadersOnExceeding: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
    },
    // Retry-After comes from the error (error-boundary.ts), like every other 429 of the API.
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': false,
    },
    errorResponseBuilder: (request, context) =>
      new KeelError(
        'key_rate_limited',
        `the API key ${options.identityOf(request)?.key.id ?? ''} made more than ${context.max} requests this minute; retry after ${context.after}`,
        { details: { limitPerMinute: context.max }, retryAfterMs: context.ttl },
      ),
  });
}
