// /v1/admin: operator routes, authorised by KEEL_ADMIN_KEY and disabled entirely when it is unset.
// Tenants: create (the API key is returned once; a name in use is 409), change quotas, list.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KeelError, isKeelError } from '../../domain/keel-error.ts';
import type { TenantQuotas, TenantRecord } from '../../domain/records.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Store } from '../../store/store.ts';
import { generateApiKey, hashApiKey } from '../auth.ts';
import {
  CreateTenantBody,
  ErrorBody,
  POOL_CAPS_RULES,
  TENANT_PATCH_RULES,
  Tenant,
  TenantParams,
  UpdateTenantBody,
  errorResponse,
} from '../schemas.ts';
import { tenantView } from '../views.ts';

export interface AdminRoutesDeps {
  store: Store;
  adminKey: string | undefined;
  /**
   * This process's cache of tenants' model limits and budgets, invalidated by a PATCH (other
   * processes: on its TTL).
   */
  tenantPolicy?: { invalidate(tenantId: string): void };
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): void {
  const authorize = (request: FastifyRequest) => authorizeAdmin(request, deps.adminKey);
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.post(
    '/v1/admin/tenants',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'Create a tenant with its quotas; its API key is returned once',
        description: POOL_CAPS_RULES,
        tags: ['admin'],
        body: CreateTenantBody,
        response: {
          201: z.object({ tenant: Tenant, apiKey: z.string() }),
          400: errorResponse(`The body breaks its schema. ${POOL_CAPS_RULES}`),
          401: ErrorBody,
          404: ErrorBody,
          409: errorResponse('tenant_name_taken: another tenant has this name'),
        },
      },
    },
    async (request, reply) => {
      const apiKey = generateApiKey();
      const { name, ...quotas } = request.body;
      const tenant = await createTenant(deps.store, name, hashApiKey(apiKey), quotas);
      return reply.status(201).send({ tenant: tenantView(tenant), apiKey });
    },
  );

  api.patch(
    '/v1/admin/tenants/:id',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'Change a tenant’s weight and limits (null lifts a limit)',
        description: `${TENANT_PATCH_RULES} ${POOL_CAPS_RULES}`,
        tags: ['admin'],
        params: TenantParams,
        body: UpdateTenantBody,
        response: {
          200: z.object({ tenant: Tenant }),
          400: errorResponse(`${TENANT_PATCH_RULES} ${POOL_CAPS_RULES}`),
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request) => {
      const tenant = await deps.store.updateTenant(request.params.id, request.body);
      deps.tenantPolicy?.invalidate(tenant.id);
      return { tenant: tenantView(tenant) };
    },
  );

  api.get(
    '/v1/admin/tenants',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'Every tenant with its quotas, by name',
        tags: ['admin'],
        response: { 200: z.object({ tenants: z.array(Tenant) }), 401: ErrorBody, 404: ErrorBody },
      },
    },
    async () => ({ tenants: (await deps.store.listTenants()).map(tenantView) }),
  );
}

/**
 * The store refuses a second tenant of a name through its unique index (the one race-free check);
 * it reports that as a validation error, so a refusal is classified here: the name exists now,
 * hence 409 tenant_name_taken.
 */
async function createTenant(
  store: Store,
  name: string,
  apiKeyHash: string,
  quotas: Partial<TenantQuotas>,
): Promise<TenantRecord> {
  try {
    return await store.createTenant(name, apiKeyHash, quotas);
  } catch (error) {
    if (!isKeelError(error) || error.code !== 'validation_failed') throw error;
    if (!(await store.listTenants()).some((tenant) => tenant.name === name)) throw error;
    throw new KeelError(
      'tenant_name_taken',
      `a tenant named ${JSON.stringify(name)} exists already; pick another name`,
      { cause: error },
    );
  }
}
