// /v1/admin/tenants/:id/retention: a tenant's retention override (docs/guides/operations.md), read,
// put and deleted by the platform admin. A tenant without one follows the platform default
// (KEEL_RETENTION_DAYS, KEEL_RETENTION_RUNS). The archiver reads it on its next pass.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import { archiveAreaOf } from '../../store/archive-area.ts';
import type { Store } from '../../store/store.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import { ErrorBody, errorResponse, TenantParams } from '../schemas.ts';

const Retention = z
  .object({
    keepDays: z
      .number()
      .int()
      .min(0)
      .max(36_500)
      .nullable()
      .describe('Days an ended run’s journal and events stay live; null: no day limit'),
    keepRuns: z
      .number()
      .int()
      .min(0)
      .max(100_000_000)
      .nullable()
      .describe('How many of the newest ended runs stay live; null: no count limit'),
  })
  .strict()
  .meta({ id: 'Retention' });

export interface AdminRetentionRoutesDeps {
  store: Store;
  adminKey: string | undefined;
}

export function registerAdminRetentionRoutes(
  app: FastifyInstance,
  deps: AdminRetentionRoutesDeps,
): void {
  const authorize = (request: FastifyRequest) => authorizeAdmin(request, deps.adminKey);
  const api = app.withTypeProvider<ZodTypeProvider>();
  const archives = () => archiveAreaOf(deps.store);
  const known = async (id: string) => {
    if ((await deps.store.getTenant(id)) === null)
      throw new KeelError('tenant_not_found', `no tenant ${id}`);
  };

  api.get(
    '/v1/admin/tenants/:id/retention',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'A tenant’s retention override (null: the platform default applies)',
        tags: ['admin'],
        params: TenantParams,
        response: {
          200: z.object({ retention: Retention.nullable() }),
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request) => {
      await known(request.params.id);
      return { retention: await archives().getRetention(request.params.id) };
    },
  );

  api.put(
    '/v1/admin/tenants/:id/retention',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'Set a tenant’s retention override',
        tags: ['admin'],
        params: TenantParams,
        body: Retention,
        response: {
          200: z.object({ retention: Retention }),
          400: errorResponse('validation_failed: the body breaks its schema'),
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request) => {
      await known(request.params.id);
      return { retention: await archives().putRetention(request.params.id, request.body) };
    },
  );

  api.delete(
    '/v1/admin/tenants/:id/retention',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'Remove a tenant’s retention override (the platform default applies again)',
        tags: ['admin'],
        params: TenantParams,
        response: { 204: z.null(), 401: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      await known(request.params.id);
      await archives().deleteRetention(request.params.id);
      return reply.code(204).send(null);
    },
  );
}
