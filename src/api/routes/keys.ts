// API keys: a tenant admin's self-service (/v1/keys: create, list, revoke its tenant's keys) and the
// platform admin's (/v1/admin/tenants/:id/keys). A key's secret is returned once, at creation; only
// its hash is stored. A tenant key may grant only scopes it holds itself (no escalation). Rotation
// with overlap: create the new key, move clients over (both work), revoke the old one.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiKeyRecord, Scope } from '../../domain/access.ts';
import { KeelError } from '../../domain/keel-error.ts';
import type { Store } from '../../store/store.ts';
import {
  ApiKey,
  CreateKeyBody,
  CreatedKey,
  KeyIdParams,
  TenantKeyParams,
} from '../access-schemas.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import { generateApiKey, hashApiKey, type Identity } from '../auth.ts';
import { requireScope } from '../route-scopes.ts';
import { ErrorBody, TenantParams } from '../schemas.ts';

export interface KeyRoutesDeps {
  store: Store;
  adminKey: string | undefined;
  identityOf(request: unknown): Identity;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function keyView(key: ApiKeyRecord): z.infer<typeof ApiKey> {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    createdAt: iso(key.createdAt)!,
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    revokedAt: iso(key.revokedAt),
    requestsPerMinute: key.requestsPerMinute,
  };
}

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

async function createKey(
  store: Store,
  tenantId: string,
  body: z.infer<typeof CreateKeyBody>,
): Promise<z.infer<typeof CreatedKey>> {
  const expiresAt = body.expiresAt === undefined ? null : Date.parse(body.expiresAt);
  if (expiresAt !== null && expiresAt <= Date.now())
    throw new KeelError('validation_failed', `expiresAt ${body.expiresAt} is not in the future`);
  const secret = generateApiKey();
  const key = await store.createApiKey({
    tenantId,
    name: body.name,
    scopes: [...new Set(body.scopes)],
    expiresAt,
    requestsPerMinute: body.requestsPerMinute ?? null,
    keyHash: hashApiKey(secret),
  });
  return { key: keyView(key), secret };
}

export function registerKeyRoutes(app: FastifyInstance, deps: KeyRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = deps;

  r.post(
    '/v1/keys',
    {
      schema: {
        summary:
          'Create an API key for the caller’s tenant (admin scope); the secret is returned once. A key grants only scopes the caller’s key holds',
        tags: ['keys'],
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errors },
      },
    },
    async (request, reply) => {
      const identity = deps.identityOf(request);
      for (const scope of request.body.scopes as Scope[])
        requireScope(identity, scope, `granting ${scope}`);
      return reply.status(201).send(await createKey(store, identity.tenant.id, request.body));
    },
  );

  r.get(
    '/v1/keys',
    {
      schema: {
        summary:
          'The tenant’s API keys, oldest first, revoked and expired ones included (admin scope)',
        tags: ['keys'],
        response: { 200: z.object({ keys: z.array(ApiKey) }), ...errors },
      },
    },
    async (request) => ({
      keys: (await store.listApiKeys(deps.identityOf(request).tenant.id)).map(keyView),
    }),
  );

  r.delete(
    '/v1/keys/:id',
    {
      schema: {
        summary: 'Revoke one of the tenant’s API keys, at once (admin scope; idempotent)',
        tags: ['keys'],
        params: KeyIdParams,
        response: { 200: z.object({ key: ApiKey }), ...errors },
      },
    },
    async (request) => ({
      key: keyView(await store.revokeApiKey(deps.identityOf(request).tenant.id, request.params.id)),
    }),
  );

  // Platform admin: any tenant's keys.
  const admin = async (request: FastifyRequest) => authorizeAdmin(request, deps.adminKey);
  const tenantExists = async (id: string) => {
    if ((await store.getTenant(id)) === null)
      throw new KeelError('tenant_not_found', `no tenant ${id}`);
  };

  r.post(
    '/v1/admin/tenants/:id/keys',
    {
      onRequest: admin,
      schema: {
        summary: 'Create an API key for a tenant, with any scopes; the secret is returned once',
        tags: ['admin'],
        params: TenantParams,
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errors },
      },
    },
    async (request, reply) => {
      await tenantExists(request.params.id);
      return reply.status(201).send(await createKey(store, request.params.id, request.body));
    },
  );

  r.get(
    '/v1/admin/tenants/:id/keys',
    {
      onRequest: admin,
      schema: {
        summary: 'A tenant’s API keys, oldest first',
        tags: ['admin'],
        params: TenantParams,
        response: { 200: z.object({ keys: z.array(ApiKey) }), ...errors },
      },
    },
    async (request) => {
      await tenantExists(request.params.id);
      return { keys: (await store.listApiKeys(request.params.id)).map(keyView) };
    },
  );

  r.delete(
    '/v1/admin/tenants/:id/keys/:keyId',
    {
      onRequest: admin,
      schema: {
        summary: 'Revoke a tenant’s API key, at once (idempotent)',
        tags: ['admin'],
        params: TenantKeyParams,
        response: { 200: z.object({ key: ApiKey }), ...errors },
      },
    },
    async (request) => ({
      key: keyView(await store.revokeApiKey(request.params.id, request.params.keyId)),
    }),
  );
}
