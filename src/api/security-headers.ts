// The browser-facing hardening of every response: security headers (helmet) with the one Content
// Security Policy, which the dashboard runs under (it loads nothing from outside Keel), and CORS, off unless origins are configured
// (KEEL_CORS_ORIGINS). The API authenticates with bearer keys, never cookies, so CORS never
// allows credentials.
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

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
  await app.register(helmet, {
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
