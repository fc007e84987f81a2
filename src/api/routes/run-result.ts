// GET /v1/runs/:id/result?waitMs=: a run's outcome by long-poll. The answer's status says whether
// the run is over: 200 with the run once it is terminal (result or error in it), 202 with the run as
// it stands when waitMs passed first (ask again). waitMs is bounded by RESULT_WAIT_MAX_MS; the wait
// is woken by the event hub, never by polling the store (run-result-wait.ts).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import { isTerminal } from '../../domain/run-status.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import type { EventHub } from '../event-hub.ts';
import { redactRunView } from '../redaction.ts';
import { RESULT_WAIT_MAX_MS, WaitMsQuery, waitForTerminal } from '../run-result-wait.ts';
import { ErrorBody, errorResponse, Run, RunIdParams } from '../schemas.ts';
import { runView } from '../views.ts';
import { ownedRun } from '../run-operations.ts';

export interface RunResultDeps {
  store: Store;
  hub: EventHub;
  tenantOf(request: unknown): TenantRecord;
  /** Aborts when the server shuts down, so pending long-polls answer at once. */
  closing: AbortSignal;
}

export const ResultQuery = z.strictObject({ waitMs: WaitMsQuery.default(0) });

export function registerRunResultRoutes(app: FastifyInstance, deps: RunResultDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/runs/:id/result',
    {
      schema: {
        summary:
          'A run’s outcome, waiting up to waitMs for it to end: 200 when the run is terminal, 202 with its current state when waitMs passed first',
        tags: ['runs'],
        params: RunIdParams,
        querystring: ResultQuery,
        response: {
          200: Run,
          202: Run,
          400: errorResponse(`A bad waitMs (an integer from 0 to ${RESULT_WAIT_MAX_MS})`),
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const tenant = deps.tenantOf(request);
      await ownedRun(deps.store, tenant, request.params.id);
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      reply.raw.once('close', onClose);
      try {
        const run = await waitForTerminal(
          deps.store,
          deps.hub,
          request.params.id,
          request.query.waitMs,
          AbortSignal.any([gone.signal, deps.closing]),
        );
        if (run === null)
          throw new KeelError('run_not_found', `run ${request.params.id} not found`);
        return reply
          .status(isTerminal(run.status) ? 200 : 202)
          .send(redactRunView(runView(run), tenant.redact));
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  );
}
