// GET /v1/runs/:id/attempts: each claim of a run that took its lease, oldest first: the worker, the
// lease token, when it started and ended, and how it ended (src/domain/attempts.ts). A recovery
// after a crash is a new attempt (ending lease_expired before it); a retry is an effect's attempt,
// shown on the run's steps, never here. Scoped by the caller's tenant like every run route.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ATTEMPT_ENDINGS } from '../../domain/attempts.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import { ErrorBody, RunIdParams } from '../schemas.ts';
import { runAttempts } from '../run-operations.ts';

export const Attempt = z
  .object({
    number: z.number().int().describe('1 for the first claim, then one more per claim'),
    worker: z.string().describe('The worker process that held the lease (its lease owner id)'),
    leaseToken: z.number().int().describe('The fencing token of the attempt’s lease'),
    startedAt: z.string().describe('When the claim took the lease'),
    endedAt: z
      .string()
      .nullable()
      .describe('When it ended; for lease_expired, when the lease expired. Null while running'),
    ending: z
      .enum(ATTEMPT_ENDINGS as [string, ...string[]])
      .describe(
        'running (holds the lease, or its lease expired and no claim has noticed yet); completed (the run ended succeeded or failed); parked (waits for a timer, an input, a child run or a pool); lease_expired (the next claim found the lease expired unreleased: the worker died or stalled); preempted; released (handed back without progress, e.g. at shutdown); cancelled',
      ),
  })
  .describe('One claim of a run');

export function registerAttemptRoutes(
  app: FastifyInstance,
  deps: { store: Store; tenantOf(request: unknown): TenantRecord },
): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/runs/:id/attempts',
    {
      schema: {
        summary: 'The run’s attempts: each claim, its worker, times and how it ended',
        tags: ['runs'],
        params: RunIdParams,
        response: {
          200: z.object({ attempts: z.array(Attempt) }),
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request) => {
      return {
        attempts: await runAttempts(deps.store, deps.tenantOf(request), request.params.id),
      };
    },
  );
}
