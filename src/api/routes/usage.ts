// GET /v1/usage: the caller's tenant's model usage — runs, steps, input and output tokens and cost
// — summed from the committed counters of its runs (durable, exact). It only reads, and only the
// caller's own tenant.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import { ErrorBody } from '../schemas.ts';

const TenantUsageBody = z
  .object({
    tenantId: z.string(),
    runs: z.number().int(),
    steps: z.number().int(),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    costUsd: z.number(),
  })
  .meta({ id: 'TenantUsage' });

export interface UsageRoutesDeps {
  store: Store;
  tenantOf(request: unknown): TenantRecord;
}

export function registerUsageRoutes(app: FastifyInstance, deps: UsageRoutesDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/usage',
    {
      schema: {
        summary: 'Tokens and cost used by the caller’s tenant (all its runs)',
        tags: ['usage'],
        response: { 200: TenantUsageBody, 401: ErrorBody },
      },
    },
    async (request) => {
      const tenant = deps.tenantOf(request);
      return { tenantId: tenant.id, ...(await deps.store.tenantUsage(tenant.id)) };
    },
  );
}
