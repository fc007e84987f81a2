// GET /metrics: the Prometheus exposition of this process. Behind the admin key (Authorization:
// Bearer
// <KEEL_ADMIN_KEY>), because its labels name every tenant and agent: a tenant's key must not read the others'
// usage. Disabled (404 admin_disabled) without an admin key; KEEL_METRICS_PORT serves it on a
// separate bind instead.
import type { FastifyInstance } from 'fastify';
import { telemetry } from '../../telemetry/telemetry.ts';
import { authorizeAdmin } from '../admin-auth.ts';

export function registerMetricsRoute(
  app: FastifyInstance,
  deps: { adminKey: string | undefined },
): void {
  app.get(
    '/metrics',
    {
      schema: { hide: true },
      onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
    },
    async (_request, reply) => {
      const { contentType, body } = await telemetry.render();
      return reply.type(contentType).send(body);
    },
  );
}
