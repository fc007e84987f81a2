// Named platform admins (/v1/admin/principals): any platform admin creates, lists and revokes
// them. Each has its own key (shown once, stored as a hash), so the audit log names which admin
// acted instead of one shared key; revoking one takes effect on its next request. The root key,
// KEEL_ADMIN_KEY, is not a stored principal and cannot be revoked here.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AdminPrincipalRecord } from '../../domain/access.ts';
import { ADMIN_KEY_PREFIX, adminActorOf, authorizeAdmin } from '../admin-auth.ts';
import { hashApiKey } from '../auth.ts';
import { ErrorBody, PathId, plainText, PLAIN_TEXT_RULE } from '../schemas.ts';
import type { Store } from '../../store/store.ts';

export interface AdminPrincipalRoutesDeps {
  store: Store;
  adminKey: string | undefined;
}

const AdminPrincipal = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'AdminPrincipal' });

const CreatePrincipalBody = z.strictObject({
  name: plainText(100).describe(`Who the admin is (unique), e.g. alice; ${PLAIN_TEXT_RULE}`),
});

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };

function principalView(p: AdminPrincipalRecord): z.infer<typeof AdminPrincipal> {
  return {
    id: p.id,
    name: p.name,
    createdAt: new Date(p.createdAt).toISOString(),
    revokedAt: p.revokedAt === null ? null : new Date(p.revokedAt).toISOString(),
  };
}

export function registerAdminPrincipalRoutes(
  app: FastifyInstance,
  deps: AdminPrincipalRoutesDeps,
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = async (request: Parameters<typeof authorizeAdmin>[0]) =>
    authorizeAdmin(request, deps.adminKey);

  r.post(
    '/v1/admin/principals',
    {
      onRequest: admin,
      schema: {
        summary: 'Create a named platform admin; its key is returned once',
        tags: ['admin'],
        body: CreatePrincipalBody,
        response: {
          201: z.object({
            principal: AdminPrincipal,
            secret: z.string().describe('The admin’s key: shown this once, stored only as a hash'),
          }),
          409: ErrorBody,
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const secret = `${ADMIN_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
      const principal = await deps.store.createAdminPrincipal(
        request.body.name,
        hashApiKey(secret),
      );
      request.log.info(
        { action: 'admin_principal.create', principal: principal.id, by: adminActorOf(request) },
        'platform admin created',
      );
      return reply.status(201).send({ principal: principalView(principal), secret });
    },
  );

  r.get(
    '/v1/admin/principals',
    {
      onRequest: admin,
      schema: {
        summary: 'The named platform admins, oldest first, revoked ones included',
        tags: ['admin'],
        response: { 200: z.object({ principals: z.array(AdminPrincipal) }), ...errors },
      },
    },
    async () => ({ principals: (await deps.store.listAdminPrincipals()).map(principalView) }),
  );

  r.delete(
    '/v1/admin/principals/:id',
    {
      onRequest: admin,
      schema: {
        summary: 'Revoke a named platform admin, at once (idempotent)',
        tags: ['admin'],
        params: z.object({ id: PathId }),
        response: { 200: z.object({ principal: AdminPrincipal }), ...errors },
      },
    },
    async (request) => {
      const principal = await deps.store.revokeAdminPrincipal(request.params.id);
      request.log.info(
        { action: 'admin_principal.revoke', principal: principal.id, by: adminActorOf(request) },
        'platform admin revoked',
      );
      return { principal: principalView(principal) };
    },
  );
}
