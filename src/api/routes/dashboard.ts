// The web dashboard at `/`: serves the single-page app built into dist/web (by `npm run build`),
// with a fallback to its index.html for the app's own routes, plus the dashboard's JSON routes. The
// assets are public; every byte of data comes from /v1 with the tenant's API key. Never serves
// anything outside dist/web, never loads from a CDN.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { DashboardDataDeps } from './dashboard-data.ts';
import { registerDashboardDataRoutes } from './dashboard-data.ts';

/**
 * Resolves to <package>/dist/web both from src/api/routes (running from source) and dist/api/routes
 * (built).
 */
export const DASHBOARD_ASSETS_DIR = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

/** The app's client-side routes: a reload or a deep link on one of them gets index.html. */
export const DASHBOARD_PAGES = [
  '/',
  '/runs',
  '/runs/:id',
  '/tenant',
  '/tenants',
  '/pools',
  '/nodes',
] as const;

/** Only our own scripts and styles; inline style attributes are what the chart library writes. */
export interface DashboardOptions extends DashboardDataDeps {
  /** Where the built app lives (tests may point elsewhere). */
  assetsDir?: string;
}

export async function registerDashboard(
  app: FastifyInstance,
  options: DashboardOptions,
): Promise<void> {
  registerDashboardDataRoutes(app, options);
  const root = options.assetsDir ?? DASHBOARD_ASSETS_DIR;
  const built = existsSync(`${root}/index.html`);
  if (built) {
    // Hashed file names under /assets never change content: cache them for good; index.html is
    // always revalidated.
    await app.register(fastifyStatic, {
      root,
      prefix: '/',
      index: false,
      wildcard: false,
      serveDotFiles: false,
      preCompressed: true,
      setHeaders: (reply, path) =>
        void reply.header(
          'cache-control',
          path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        ),
    });
  }
  const page = (reply: FastifyReply) => {
    // Its Content-Security-Policy and the other security headers are every response's
    // (security-headers.ts).
    if (built)
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .sendFile('index.html');
    return reply
      .status(503)
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><title>Keel</title><p>The Keel dashboard is not built. Run <code>npm run build</code> (it writes dist/web), then reload.</p>',
      );
  };
  for (const path of DASHBOARD_PAGES)
    app.get(path, { schema: { hide: true } }, async (_request, reply) => page(reply));
}
