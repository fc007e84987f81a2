// Per-key request rate limits: each tenant API key may make at most its `requestsPerMinute`
// requests a minute (or the default, KEEL_KEY_REQUESTS_PER_MINUTE); past it a request answers
// `429 key_rate_limited` with Retry-After, before its body is read. On a store shared by several
// API processes (Postgres) every request is counted in the database's rate windows (the per-second
// counters behind the shared model limits, one statement per request), so N processes together
// admit the key's limit in any minute, not N times it. A store one process uses alone (SQLite)
// counts in memory with @fastify/rate-limit's fixed one-minute window. Requests without a tenant
// identity (health, the dashboard's files, the platform admin) are not counted.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KeelError } from '../domain/keel-error.ts';
import type { RateWindows } from '../store/rate-windows.ts';
import type { Identity } from './auth.ts';

const WINDOW_MS = 60_000;
/** Keys counted at once in this process; past it the least recently seen are forgotten. */
const COUNTED_KEYS_MAX = 10_000;
/** The rate-window key of an API key (model limits use model:, account:, tenant:). */
const WINDOW_KEY_PREFIX = 'apikey:';

export interface KeyRateLimitOptions {
  /** Requests a minute for a key without its own limit; undefined: unlimited. */
  defaultPerMinute: number | undefined;
  /** The request's authenticated identity, if it is a tenant request. */
  identityOf(request: FastifyRequest): Identity | undefined;
  /** The deployment's shared rate windows (a multi-process store); undefined: count in memory. */
  windows?: RateWindows | undefined;
}

function limited(keyId: string, limit: number, retryAfterMs: number, after: string): KeelError {
  return new KeelError(
    'key_rate_limited',
    `the API key ${keyId} made more than ${limit} requests this minute; retry after ${after}`,
    { details: { limitPerMinute: limit }, retryAfterMs },
  );
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
  const windows = options.windows;
  if (windows !== undefined) {
    // Added after the app's authenticating hook, so it runs after it (hooks run in order).
    app.addHook('onRequest', async (request) => {
      const limit = limitOf(request);
      if (limit === undefined) return;
      const keyId = options.identityOf(request)!.key.id;
      const verdict = await windows.reserve(
        [{ key: `${WINDOW_KEY_PREFIX}${keyId}`, rpm: limit, tpm: undefined }],
        0,
      );
      if (!verdict.granted)
        throw limited(keyId, limit, verdict.waitMs, `${Math.ceil(verdict.waitMs / 1000)} seconds`);
    });
    return;
  }
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
      limited(options.identityOf(request)?.key.id ?? '', context.max, context.ttl, context.after),
  });
}
