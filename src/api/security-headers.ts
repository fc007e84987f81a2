// The browser-facing hardening of every response: security headers (helmet) with the one Content
// Security Policy, which the dashboard runs under (it loads nothing from outside Keel), and CORS, off unless origins are configured
// (KEEL_CORS_ORIGINS). The API authenticates with bearer keys, never cookies, so CORS never
// allows credentials.
import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

export interface BrowserPolicy {
  /**
   * Origins (scheme://host[:port]) whose pages may call the API from a browser; empty: none, no
   * CORS headers at all.
   */
  corsOrigins: readonly string[];
}

/** Request headers a cross-origin page may send (the API's own, nothing else). */
const CORS_REQUEST_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'last-event-id'];
/** Response headers a cross-origin page may read. */
const CORS_EXPOSED_HEADERS = ['retry-after'];

export async function registerBrowserPolicy(
  app: FastifyInstance,
  policy: BrowserPolicy,
): Promise<void> {
  const headers = securityHeaders({
    contentSecurityPolicy: {
      useDefaults: true,
      directives: {
        // The dashboard loads its own module scripts and styles only; its SSE and fetches go to
        // this origin. Served over plain HTTP on loopback too, so requests are not upgraded.
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'connect-src': ["'self'"],
        'img-src': ["'self'", 'data:'],
        'style-src': ["'self'", "'unsafe-inline'"],
        'frame-ancestors': ["'none'"],
        'base-uri': ["'none'"],
        'form-action': ["'none'"],
        'upgrade-insecure-requests': null,
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    // Keel does not terminate TLS: HSTS belongs to the proxy that does (on plain HTTP it is void).
    strictTransportSecurity: false,
    // A cross-origin caller allowed by CORS must be able to read the responses.
    crossOriginResourcePolicy: {
      policy: policy.corsOrigins.length > 0 ? 'cross-origin' : 'same-origin',
    },
  });
  app.addHook('onRequest', (_request, reply, done) => {
    const res = reply.raw;
    for (const [name, value] of headers) res.setHeader(name, value);
    res.removeHeader('x-powered-by');
    done();
  });
  if (policy.corsOrigins.length === 0) return;
  const allowed = new Set(policy.corsOrigins);
  await app.register(cors, {
    origin: (origin, done) => done(null, origin !== undefined && allowed.has(origin)),
    credentials: false,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
}

/**
 * The headers helmet sets, computed once: they do not depend on the request (no CSP nonces), and
 * building helmet's middleware per request (as @fastify/helmet does) re-parses the whole policy on
 * every call.
 */
function securityHeaders(options: HelmetOptions): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const res = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, String(value)]);
      return res;
    },
    removeHeader() {},
  };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (error?: unknown) => {
    if (error !== undefined && error !== null) throw error;
  });
  return headers;
}
