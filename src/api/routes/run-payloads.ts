// GET /v1/runs/:id/payloads/:sha256: one large payload a run references (issue 22), streamed chunk by
// chunk as the JSON it was stored as, so a 50 MB tool result is downloaded without the API holding
// it whole. The run and step views return the same values inline; this route is for clients that
// would rather stream. Tenant-scoped: another tenant's run is a 404 run_not_found, a payload the run
// does not reference a 404 payload_not_found. A tenant with a redaction policy gets 409
// payload_redacted (raw bytes would bypass the policy): its views are redacted.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { TenantRecord } from '../../domain/records.ts';
import { payloadChunks } from '../../store/payload-io.ts';
import { storeWithoutResolution } from '../../store/payload-offload.ts';
import type { Store } from '../../store/store.ts';
import { ErrorBody, errorResponse, PathId } from '../schemas.ts';

export interface RunPayloadRoutesDeps {
  store: Store;
  tenantOf(request: unknown): TenantRecord;
}

const PayloadParams = z.object({
  id: PathId,
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in lowercase hex'),
});

export function registerRunPayloadRoutes(app: FastifyInstance, deps: RunPayloadRoutesDeps): void {
  const store = storeWithoutResolution(deps.store);
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/runs/:id/payloads/:sha256',
    {
      schema: {
        summary: 'A large payload the run references, streamed as its JSON (application/json)',
        tags: ['runs'],
        params: PayloadParams,
        response: {
          200: z.any().describe('The payload: the JSON value as stored, streamed'),
          400: errorResponse('validation_failed: sha256 is not 64 lowercase hex characters'),
          401: ErrorBody,
          404: errorResponse(
            'run_not_found: no such run of the caller’s tenant; payload_not_found: the run references no such payload',
          ),
          409: errorResponse('payload_redacted: the tenant has a redaction policy'),
        },
      },
    },
    async (request, reply) => {
      const { id, sha256 } = request.params;
      const tenant = deps.tenantOf(request);
      const run = await store.getRun(id);
      if (run === null || run.tenantId !== tenant.id)
        throw new KeelError('run_not_found', `no run ${id}`);
      if (tenant.redact.fields.length > 0 || Object.keys(tenant.redact.tools).length > 0)
        throw new KeelError(
          'payload_redacted',
          'the tenant has a redaction policy: read the run and step views, which are redacted',
        );
      const info = (await store.runReferencesPayload(id, sha256))
        ? await store.getPayload(sha256)
        : null;
      if (info === null)
        throw new KeelError('payload_not_found', `run ${id} references no payload ${sha256}`);
      return reply
        .type(info.mediaType)
        .header('content-length', String(info.size))
        .header('etag', `"${sha256}"`)
        .header('cache-control', 'private, max-age=31536000, immutable')
        .send(Readable.from(payloadChunks(store, info)));
    },
  );
}
