// GET /v1/admin/pools: this process's effect pools (models, sandbox profiles, inline, declared)
// with their limit, queue bound, holders, waiters and oldest wait, overall and per tenant.
// Operator-only (KEEL_ADMIN_KEY). Read-only: limits change through the pools file, never through
// this route.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { PoolSnapshot } from '../../scheduling/pool.ts';
import { poolKind } from '../../scheduling/pool-registry.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import { ErrorBody } from '../schemas.ts';

const TenantPool = z.object({
  tenantId: z.string(),
  running: z.number().int(),
  queued: z.number().int(),
  oldestWaitMs: z.number().nullable(),
  cap: z.number().int().nullable(),
});
const PoolView = z.object({
  name: z.string(),
  kind: z.enum(['model', 'sandbox', 'inline', 'declared']),
  limit: z.number().int(),
  maxQueued: z.number().int(),
  running: z.number().int(),
  queued: z.number().int(),
  oldestWaitMs: z.number().nullable(),
  oldestRunAgeMs: z
    .number()
    .nullable()
    .describe(
      'Age, from its admission, of the oldest run with an effect waiting here; null when none waits',
    ),
  tenants: z.array(TenantPool),
});

export interface AdminPoolsDeps {
  adminKey: string | undefined;
  /** The process's pools now; absent when this process runs no effects. */
  pools: (() => PoolSnapshot[]) | undefined;
}

export function registerAdminPoolRoutes(app: FastifyInstance, deps: AdminPoolsDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/admin/pools',
    {
      onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
      schema: {
        summary:
          'This process’s effect pools: limit, running, queued and oldest wait, per pool and per tenant',
        tags: ['admin'],
        response: { 200: z.object({ pools: z.array(PoolView) }), 401: ErrorBody, 404: ErrorBody },
      },
    },
    async () => ({
      pools: (deps.pools?.() ?? []).map((pool) => ({ ...pool, kind: poolKind(pool.name) })),
    }),
  );
}
