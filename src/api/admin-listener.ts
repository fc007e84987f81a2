// The admin surface on a listener of its own (KEEL_ADMIN_PORT). With it, the public listener
// answers 404 for the admin routes (/v1/admin/*, GET /metrics) as if they did not exist, and the
// admin listener — bound where only operators reach it — serves the whole API and the dashboard,
// so an operator's browser keeps working there. One Fastify instance serves both: the admin
// server hands its requests to the same router, marked as having come through it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KeelError } from '../domain/keel-error.ts';

const throughAdminListener = new WeakSet<IncomingMessage>();

/** Whether a path is part of the admin surface (a platform admin's routes). */
export function isAdminSurface(path: string): boolean {
  return path.startsWith('/v1/admin/') || path === '/metrics';
}

/**
 * onRequest hook of the public side when the admin surface is separated: an admin route reached
 * through the public listener does not exist there.
 */
export async function refuseAdminOffItsListener(request: FastifyRequest): Promise<void> {
  const path = request.url.split('?')[0] ?? '';
  if (isAdminSurface(path) && !throughAdminListener.has(request.raw))
    throw new KeelError('not_found', `no route ${request.method} ${path}`);
}

export interface AdminListener {
  address: string;
  close(): Promise<void>;
}

/** Starts the admin listener on a ready `app`; its requests go through the app's own router. */
export async function startAdminListener(
  app: FastifyInstance,
  host: string,
  port: number,
): Promise<AdminListener> {
  await app.ready();
  const server: Server = createServer((request, response) => {
    throughAdminListener.add(request);
    app.routing(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address();
  const shown = host.includes(':') ? `[${host}]` : host;
  const address = `http://${shown}:${typeof bound === 'object' && bound !== null ? bound.port : port}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
