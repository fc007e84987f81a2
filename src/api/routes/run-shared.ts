// GET /v1/runs/:id/shared and GET /v1/runs/:id/shared/<path>: an operator's view of the shared space
// of a run's tree (domain/shared-space.ts), read-only. Any run of the tree names the same space
// (its root's). Another tenant's run is a 404 run_not_found, a path with no file a 404
// shared_file_not_found, a malformed path a 400 shared_path_invalid.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { TenantRecord } from '../../domain/records.ts';
import {
  checkSharedPath,
  checkSharedPrefix,
  SHARED_LIST_MAX_FILES,
  SHARED_PATH_MAX_CHARS,
} from '../../domain/shared-space.ts';
import { rootRunOf } from '../../store/run-tree-root.ts';
import type { Store } from '../../store/store.ts';
import { ownedRun } from '../run-operations.ts';
import { ErrorBody, errorResponse, PathId, RunIdParams } from '../schemas.ts';

export interface RunSharedRoutesDeps {
  store: Store;
  tenantOf(request: unknown): TenantRecord;
}

const SharedFileInfo = z
  .object({
    path: z.string(),
    version: z.number().int().describe('Versions count from 1; each write makes the next'),
    size: z.number().int().describe('Bytes of the content (UTF-8)'),
    sha256: z.string().describe('The content’s artifact (content-addressed)'),
    writtenByRun: z.string().describe('The run of the tree that wrote this version'),
    writtenAt: z.number().int(),
  })
  .meta({ id: 'SharedFileInfo' });

const SharedListQuery = z.strictObject({
  prefix: z
    .string()
    .max(SHARED_PATH_MAX_CHARS)
    .optional()
    .describe('Only files whose path starts with this'),
  limit: z.coerce.number().int().min(1).max(SHARED_LIST_MAX_FILES).default(SHARED_LIST_MAX_FILES),
});

const SharedFileParams = z.object({
  id: PathId,
  '*': z.string().describe('The file’s path in the shared space (slashes allowed)'),
});

export function registerRunSharedRoutes(app: FastifyInstance, deps: RunSharedRoutesDeps): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.get(
    '/v1/runs/:id/shared',
    {
      schema: {
        summary: 'The files of the shared space of the run’s tree (latest versions, no content)',
        tags: ['runs'],
        params: RunIdParams,
        querystring: SharedListQuery,
        response: {
          200: z.object({ rootRunId: z.string(), files: z.array(SharedFileInfo) }),
          400: errorResponse('validation_failed, shared_path_invalid: a malformed prefix'),
          401: ErrorBody,
          404: errorResponse('run_not_found: no such run of the caller’s tenant'),
        },
      },
    },
    async (request) => {
      const run = await ownedRun(deps.store, deps.tenantOf(request), request.params.id);
      const prefix = checkSharedPrefix(request.query.prefix);
      const rootRunId = await rootRunOf(deps.store, run);
      const files = await deps.store.listSharedFiles(rootRunId, prefix, request.query.limit);
      return { rootRunId, files };
    },
  );
  api.get(
    '/v1/runs/:id/shared/*',
    {
      schema: {
        summary: 'One file of the shared space of the run’s tree: its latest version and content',
        tags: ['runs'],
        params: SharedFileParams,
        response: {
          200: z.object({
            rootRunId: z.string(),
            file: SharedFileInfo.extend({ content: z.string() }),
          }),
          400: errorResponse('shared_path_invalid: a malformed path'),
          401: ErrorBody,
          404: errorResponse(
            'run_not_found: no such run of the caller’s tenant; shared_file_not_found: no file at the path',
          ),
        },
      },
    },
    async (request) => {
      const run = await ownedRun(deps.store, deps.tenantOf(request), request.params.id);
      const path = checkSharedPath(request.params['*']);
      const rootRunId = await rootRunOf(deps.store, run);
      const file = await deps.store.readSharedFile(rootRunId, path);
      if (file === null)
        throw new KeelError('shared_file_not_found', `the shared space holds no file ${path}`, {
          details: { rootRunId, path },
        });
      return { rootRunId, file };
    },
  );
}
