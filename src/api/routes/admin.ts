// /v1/admin: operator routes, authorised by KEEL_ADMIN_KEY and disabled entirely when it is unset.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authorizeAdmin } from '../admin-auth.ts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../../store/store.ts';
import { generateApiKey, hashApiKey } from '../auth.ts';
import { CreateTenantBody, ErrorBody } from '../schemas.ts';

export interface AdminRoutesDeps {
  store: Store;
  adminKey: string | undefined;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): void {
  const authorize = (request: FastifyRequest) => authorizeAdmin(request, deps.adminKey);

  app.withTypeProvider<ZodTypeProvider>().post('/v1/admin/tenants', {
    onRequest: async (request) => authorize(request),
    schema: {
      summary: 'Create a tenant; its API key is returned once', tags: ['admin'], body: CreateTenantBody,
      response: { 201: z.object({ tenant: z.object({ id: z.string(), name: z.string() }), apiKey: z.string() }), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
    },
  }, async (request, reply) => {
    const apiKey = generateApiKey();
    const tenant = await deps.store.createTenant(request.body.name, hashApiKey(apiKey));
    return reply.status(201).send({ tenant: { id: tenant.id, name: tenant.name }, apiKey });
  });
}
