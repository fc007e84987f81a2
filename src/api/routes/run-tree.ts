// GET /v1/runs/:id/tree: a run and its descendants (children, theirs, ...) for the dashboard's run
// tree and `keel runs tree`. Scoped by the caller's tenant (another tenant's run is a 404); it
// reads, never changes a run.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import { readRunTree } from '../run-tree.ts';
import { ErrorBody, RunIdParams, RunTree, RunTreeQuery } from '../schemas.ts';

export interface RunTreeDeps {
  store: Store;
  tenantOf(request: unknown): TenantRecord;
}

export function registerRunTreeRoutes(app: FastifyInstance, deps: RunTreeDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/runs/:id/tree',
    {
      schema: {
        summary:
          'A run and its descendants, breadth first: status, agent, parent, depth and what each child does when its parent ends (onParentEnd)',
        tags: ['runs'],
        params: RunIdParams,
        querystring: RunTreeQuery,
        response: { 200: RunTree, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) =>
      readRunTree(deps.store, deps.tenantOf(request), request.params.id, request.query.limit),
  );
}
