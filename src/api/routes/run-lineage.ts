// /v1/runs/:id/rerun, /reset and /fork: new runs made from a run of the caller's tenant. A rerun
// starts over with the same agent and input; a reset reuses the source's journal through a position
// and runs the current code on from there (effects through the position are replayed, never
// executed again); a fork is either with another input or agent version. Which version runs is
// decided here, from what this process serves; what may be copied is decided by the store.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Json } from '../../domain/json.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { AgentRegistry } from '../../engine/registry.ts';
import type { Store } from '../../store/store.ts';
import {
  ErrorBody,
  errorResponse,
  ForkBody,
  RerunBody,
  ResetBody,
  Run,
  RunIdParams,
} from '../schemas.ts';
import { runView } from '../views.ts';
import { copyRun, type CopyAsk } from '../run-operations.ts';

export interface RunLineageDeps {
  store: Store;
  registry: AgentRegistry;
  tenantOf(request: unknown): TenantRecord;
}

const errors = { 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 429: ErrorBody };
const badPosition = errorResponse(
  'A bad body, or reset_position_out_of_range: the position is past the run’s journal',
);

export function registerRunLineageRoutes(app: FastifyInstance, deps: RunLineageDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  const copy = (request: unknown, sourceId: string, ask: CopyAsk) =>
    copyRun(deps, deps.tenantOf(request), sourceId, ask);

  r.post(
    '/v1/runs/:id/rerun',
    {
      schema: {
        summary:
          'Rerun a run: a new run of the same agent (its version if served, else the newest) with the same input, priority, budget and metadata',
        tags: ['runs'],
        params: RunIdParams,
        body: RerunBody.nullish(),
        response: { 200: Run, 201: Run, 400: ErrorBody, ...errors },
      },
    },
    async (request, reply) => {
      const { run, created } = await copy(request, request.params.id, {
        op: 'rerun',
        position: undefined,
        input: undefined,
        agentVersion: undefined,
        idempotencyKey: request.body?.idempotencyKey,
      });
      return reply.status(created ? 201 : 200).send(runView(run));
    },
  );

  r.post(
    '/v1/runs/:id/reset',
    {
      schema: {
        summary:
          'Reset an ended run to a journal position: a new run that replays the journal through the position and runs the current code on from there (409 run_not_terminal for a live run, 409 reset_position_unsettled when an effect through the position has no committed result)',
        tags: ['runs'],
        params: RunIdParams,
        body: ResetBody,
        response: { 200: Run, 201: Run, 400: badPosition, ...errors },
      },
    },
    async (request, reply) => {
      const { run, created } = await copy(request, request.params.id, {
        op: 'reset',
        position: request.body.position,
        input: undefined,
        agentVersion: undefined,
        idempotencyKey: request.body.idempotencyKey,
      });
      return reply.status(created ? 201 : 200).send(runView(run));
    },
  );

  r.post(
    '/v1/runs/:id/fork',
    {
      schema: {
        summary:
          'Fork a run: a reset (with a position) or a rerun (without) with another input and/or agent version (404 agent_not_found for a version this server does not serve)',
        tags: ['runs'],
        params: RunIdParams,
        body: ForkBody,
        response: { 200: Run, 201: Run, 400: badPosition, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { run, created } = await copy(request, request.params.id, {
        op: 'fork',
        position: body.position,
        input: 'input' in body ? ((body.input ?? null) as Json) : undefined,
        agentVersion: body.agentVersion,
        idempotencyKey: body.idempotencyKey,
      });
      return reply.status(created ? 201 : 200).send(runView(run));
    },
  );
}
