// GET /v1/runs/:id/steps/:seq: one step of a run with its whole input and output (the steps list,
// in runs.ts, shows previews of large ones). Redacted by the tenant's policy like the list; another
// tenant's run is a 404 run_not_found, a position the journal does not hold a 404 step_not_found.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import { ErrorBody, errorResponse, Step, StepParams } from '../schemas.ts';
import { journalStep } from '../run-operations.ts';

export interface RunStepRoutesDeps {
  store: Store;
  tenantOf(request: unknown): TenantRecord;
}

export function registerRunStepRoutes(app: FastifyInstance, deps: RunStepRoutesDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/runs/:id/steps/:seq',
    {
      schema: {
        summary: 'One step of a run, with its whole input and output (redacted, never cut)',
        tags: ['runs'],
        params: StepParams,
        response: {
          200: z.object({ step: Step }),
          400: errorResponse('validation_failed: seq is not a whole number from 1'),
          401: ErrorBody,
          404: errorResponse(
            'run_not_found: no such run of the caller’s tenant; step_not_found: the run’s journal holds no step at seq',
          ),
        },
      },
    },
    async (request) => {
      const { id, seq } = request.params;
      return { step: await journalStep(deps.store, deps.tenantOf(request), id, seq) };
    },
  );
}
