// A tenant's secrets over HTTP (/v1/secrets, admin scope): create, rotate, list, delete. Values are
// write-only: a request carries one in, no response ever carries one out (names, versions and times
// only), and the audit log records the action and name, never the value. Rotation is effective at
// once for every injection (src/secrets/secret-vault.ts caches nothing).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SECRET_NAME_PATTERN, type SecretInfo } from '../../domain/secrets.ts';
import { SECRET_VALUE_MAX_BYTES, type SecretVault } from '../../secrets/secret-vault.ts';
import type { Identity } from '../auth.ts';
import { ErrorBody } from '../schemas.ts';

export interface SecretRoutesDeps {
  vault: SecretVault;
  identityOf(request: unknown): Identity;
}

const SecretName = z
  .string()
  .regex(SECRET_NAME_PATTERN, 'letters, digits, _ . - (starting with a letter or _), at most 128');
const SecretValue = z
  .string()
  .min(1)
  .refine((value) => Buffer.byteLength(value) <= SECRET_VALUE_MAX_BYTES, {
    message: `at most ${SECRET_VALUE_MAX_BYTES} bytes`,
  });
const Secret = z.object({
  name: z.string(),
  version: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const NameParams = z.object({ name: SecretName });
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

function secretView(info: SecretInfo): z.infer<typeof Secret> {
  return {
    name: info.name,
    version: info.version,
    createdAt: new Date(info.createdAt).toISOString(),
    updatedAt: new Date(info.updatedAt).toISOString(),
  };
}

export function registerSecretRoutes(app: FastifyInstance, deps: SecretRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tenant = (request: unknown) => deps.identityOf(request).tenant.id;

  r.post(
    '/v1/secrets',
    {
      schema: {
        summary:
          'Store a secret for the tenant (admin scope), encrypted at rest; use it as secret:NAME. The value is never returned',
        tags: ['secrets'],
        body: z.object({ name: SecretName, value: SecretValue }),
        response: { 201: z.object({ secret: Secret }), ...errors },
      },
    },
    async (request, reply) => {
      const info = await deps.vault.create(tenant(request), request.body.name, request.body.value);
      return reply.status(201).send({ secret: secretView(info) });
    },
  );

  r.post(
    '/v1/secrets/:name/rotate',
    {
      schema: {
        summary:
          'Replace a secret’s value (admin scope): a new version, used by the next injection on every process, no restart',
        tags: ['secrets'],
        params: NameParams,
        body: z.object({ value: SecretValue }),
        response: { 200: z.object({ secret: Secret }), ...errors },
      },
    },
    async (request) => ({
      secret: secretView(
        await deps.vault.rotate(tenant(request), request.params.name, request.body.value),
      ),
    }),
  );

  r.get(
    '/v1/secrets',
    {
      schema: {
        summary: 'The tenant’s secrets by name: versions and times, never values (admin scope)',
        tags: ['secrets'],
        response: { 200: z.object({ secrets: z.array(Secret) }), ...errors },
      },
    },
    async (request) => ({ secrets: (await deps.vault.list(tenant(request))).map(secretView) }),
  );

  r.delete(
    '/v1/secrets/:name',
    {
      schema: {
        summary: 'Delete a secret (admin scope); references to it fail from then on',
        tags: ['secrets'],
        params: NameParams,
        response: { 200: z.object({ deleted: z.string() }), ...errors },
      },
    },
    async (request) => {
      await deps.vault.delete(tenant(request), request.params.name);
      return { deleted: request.params.name };
    },
  );
}
