// /v1/runs: submit, read, list, cancel, answer inputs, and the journal as a timeline.
// Every handler scopes by the caller's tenant: another tenant's run is indistinguishable from a
// missing one (404).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Json } from '../../domain/json.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { AgentRegistry } from '../../engine/registry.ts';
import type { Store } from '../../store/store.ts';
import { CURSOR_DESCRIPTION } from '../cursor.ts';
import {
  CancelBody,
  CreateRunBody,
  ErrorBody,
  errorResponse,
  InputBody,
  MessageBody,
  MessageDelivery,
  ListRunsQuery,
  ResolveBody,
  ResolveParams,
  Run,
  RunIdParams,
  RunList,
  Step,
  StepsQuery,
} from '../schemas.ts';
import type { EventHub } from '../event-hub.ts';
import type { SpendAdmissionPort } from '../spend-admission.ts';
import { WaitMsQuery, waitForTerminal } from '../run-result-wait.ts';
import {
  CreateRunsBatchAnswer,
  CreateRunsBatchBody,
  checkBatchSize,
  submitRuns,
} from '../run-batch.ts';
import { BATCH_RUNS_MAX_DEFAULT } from '../../config/defaults.ts';
import { isTerminal } from '../../domain/run-status.ts';
import {
  answerInput,
  cancelRun,
  deliverMessage,
  journalSteps,
  listRunsPage,
  readmitRun,
  readRun,
  resolveExecution,
  shownRun,
  submitRun,
} from '../run-operations.ts';

export interface RunRoutesDeps {
  store: Store;
  registry: AgentRegistry;
  /** Spend admission at submission (src/api/spend-admission.ts); absent: not checked. */
  spend?: SpendAdmissionPort | undefined;
  tenantOf(request: unknown): TenantRecord;
  /** The run a new run is a child of: the delegated token's run; null for a tenant key. */
  parentRunOf?(request: unknown): string | null;
  /** Steps list: inputs and outputs larger than this (JSON bytes) are previews. */
  stepPreviewMaxBytes?: number;
  /** Most runs one POST /v1/runs:batch may hold (KEEL_BATCH_RUNS_MAX). */
  batchRunsMax?: number;
  /** POST /v1/runs?wait=: the hub that wakes the wait, and the server's closing signal. */
  waits?: { hub: EventHub; closing: AbortSignal };
}

const CreateRunQuery = z.strictObject({
  wait: WaitMsQuery.optional().describe(
    'For short agents: wait up to this many ms for the run to end. Answered 201/200 (created/idempotent replay) with the ended run, or 202 with the run still in progress when the wait passed first',
  ),
});

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody };

export function registerRunRoutes(app: FastifyInstance, deps: RunRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = deps;
  r.post(
    '/v1/runs',
    {
      schema: {
        summary:
          'Submit a run (429 tenant_queue_full with Retry-After when the tenant’s queue is at its maximum; 429 budget_insufficient when the agent’s estimated model spend exceeds what the tenant has left today and the agent refuses such runs)',
        tags: ['runs'],
        body: CreateRunBody,
        querystring: CreateRunQuery,
        response: { 200: Run, 201: Run, 202: Run, ...errors, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const tenant = deps.tenantOf(request);
      const parentRunId = deps.parentRunOf?.(request) ?? null;
      const { run, created } = await submitRun(deps, tenant, request.body, parentRunId);
      const waitMs = request.query.wait ?? 0;
      if (waitMs === 0 || deps.waits === undefined || isTerminal(run.status))
        return reply.status(created ? 201 : 200).send(shownRun(run, tenant));
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      reply.raw.once('close', onClose);
      const ended = await waitForTerminal(
        store,
        deps.waits.hub,
        run.id,
        waitMs,
        AbortSignal.any([gone.signal, deps.waits.closing]),
      ).finally(() => reply.raw.off('close', onClose));
      const latest = ended ?? run;
      const status = !isTerminal(latest.status) ? 202 : created ? 201 : 200;
      return reply.status(status).send(shownRun(latest, tenant));
    },
  );

  r.post(
    '/v1/runs::batch',
    {
      schema: {
        summary:
          'Submit many runs at once (KEEL_BATCH_RUNS_MAX, default 1,000): one result per item, in order — created, existing (a replayed idempotency key) or that item’s error; one bad item never fails the others',
        tags: ['runs'],
        body: CreateRunsBatchBody,
        response: {
          200: CreateRunsBatchAnswer,
          ...errors,
          400: errorResponse(
            'batch_too_large: no runs, or more than KEEL_BATCH_RUNS_MAX; or a body that is not { runs: [...] }',
          ),
        },
      },
    },
    async (request) => {
      const tenant = deps.tenantOf(request);
      checkBatchSize(request.body.runs.length, deps.batchRunsMax ?? BATCH_RUNS_MAX_DEFAULT);
      return { results: await submitRuns(deps, tenant, request.body.runs) };
    },
  );

  r.get(
    '/v1/runs/:id',
    {
      schema: {
        summary: 'Get a run',
        tags: ['runs'],
        params: RunIdParams,
        response: { 200: Run, ...errors },
      },
    },
    async (request) => {
      return readRun(deps, deps.tenantOf(request), request.params.id);
    },
  );

  r.get(
    '/v1/runs',
    {
      schema: {
        summary: 'List runs, newest first',
        tags: ['runs'],
        querystring: ListRunsQuery,
        response: {
          200: RunList,
          ...errors,
          400: errorResponse(
            `A bad limit, status, agent or code, or a bad cursor. ${CURSOR_DESCRIPTION}`,
          ),
        },
      },
    },
    async (request) => {
      return listRunsPage(deps, deps.tenantOf(request), request.query);
    },
  );

  r.post(
    '/v1/runs/:id/cancel',
    {
      schema: {
        summary: 'Cancel a run (optionally with its own grace for tool calls in flight)',
        tags: ['runs'],
        params: RunIdParams,
        // No body (or null) at all: the agent's or the node's grace.
        body: CancelBody.nullish(),
        response: { 202: Run, ...errors },
      },
    },
    async (request, reply) => {
      return reply.status(202).send(
        await cancelRun(store, deps.tenantOf(request), request.params.id, {
          graceMs: request.body?.graceMs,
        }),
      );
    },
  );

  r.post(
    '/v1/runs/:id/retry',
    {
      schema: {
        summary: 'Re-admit a run quarantined as poison_run (after a fix is deployed)',
        tags: ['runs'],
        params: RunIdParams,
        response: { 202: Run, ...errors },
      },
    },
    async (request, reply) => {
      return reply
        .status(202)
        .send(await readmitRun(store, deps.tenantOf(request), request.params.id));
    },
  );

  r.post(
    '/v1/runs/:id/input',
    {
      schema: {
        summary: 'Answer a run’s waitForInput(key)',
        tags: ['runs'],
        params: RunIdParams,
        body: InputBody,
        response: { 202: Run, ...errors },
      },
    },
    async (request, reply) => {
      const { key, value } = request.body;
      const tenant = deps.tenantOf(request);
      return reply
        .status(202)
        .send(await answerInput(store, tenant, request.params.id, key, value as Json));
    },
  );

  r.post(
    '/v1/runs/:id/messages',
    {
      schema: {
        summary:
          'Deliver a message to a run (its ctx.receive(channel)); deduplicated by id, 409 run_terminal once the run has ended',
        tags: ['runs'],
        params: RunIdParams,
        body: MessageBody,
        response: { 202: MessageDelivery, ...errors },
      },
    },
    async (request, reply) => {
      const { channel, id, payload, correlationId, ttlMs } = request.body;
      const delivery = await deliverMessage(store, deps.tenantOf(request), request.params.id, {
        channel,
        id,
        payload: payload as Json,
        from: null,
        correlationId: correlationId ?? null,
        ttlMs: ttlMs ?? null,
      });
      return reply.status(202).send(delivery);
    },
  );

  r.post(
    '/v1/runs/:id/executions/:executionId/resolve',
    {
      schema: {
        summary: 'Decide the outcome of a tool execution whose outcome is unknown',
        tags: ['runs'],
        params: ResolveParams,
        body: ResolveBody,
        response: { 202: Run, ...errors },
      },
    },
    async (request, reply) => {
      const { id, executionId } = request.params;
      const tenant = deps.tenantOf(request);
      return reply
        .status(202)
        .send(await resolveExecution(store, tenant, id, executionId, request.body));
    },
  );

  r.get(
    '/v1/runs/:id/steps',
    {
      schema: {
        summary:
          'The run’s journal as a timeline, with each step’s input and output (redacted by the tenant’s policy; previews past KEEL_STEP_PREVIEW_MAX_BYTES, default 8 KiB)',
        tags: ['runs'],
        params: RunIdParams,
        querystring: StepsQuery,
        response: { 200: z.object({ steps: z.array(Step) }), ...errors },
      },
    },
    async (request) => {
      const tenant = deps.tenantOf(request);
      const io = request.query.io !== 'false';
      const steps = await journalSteps(
        store,
        tenant,
        request.params.id,
        io,
        deps.stepPreviewMaxBytes,
      );
      return { steps };
    },
  );
}
