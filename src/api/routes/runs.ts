// /v1/runs: submit, read, list, cancel, answer inputs, and the journal as a timeline.
// Every handler scopes by the caller's tenant: another tenant's run is indistinguishable from a
// missing one (404).
import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError, isKeelError } from '../../domain/keel-error.ts';
import { telemetry } from '../../telemetry/telemetry.ts';
import { newRunId } from '../../domain/ids.ts';
import type { AgentRegistry } from '../../engine/registry.ts';
import { parseAgentInput } from '../../engine/agent-contract.ts';
import type { Json } from '../../domain/json.ts';
import type { RunRecord, TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import { CURSOR_DESCRIPTION, decodeCursor, encodeCursor } from '../cursor.ts';
import {
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
import { STEP_IO_PREVIEW_MAX_BYTES, stepIoFields } from '../step-io.ts';
import { redactRunView } from '../redaction.ts';
import { runView, stepView } from '../views.ts';
import { admitByDeadline } from '../deadline-admission.ts';
import { explainQueued, tenantAtCap } from '../waiting-view.ts';
import type { EventHub } from '../event-hub.ts';
import { WaitMsQuery, waitForTerminal } from '../run-result-wait.ts';
import { isTerminal } from '../../domain/run-status.ts';
import { pendingApprovalsOf } from './approvals.ts';

export interface RunRoutesDeps {
  store: Store;
  registry: AgentRegistry;
  tenantOf(request: unknown): TenantRecord;
  /** Steps list: inputs and outputs larger than this (JSON bytes) are previews. */
  stepPreviewMaxBytes?: number;
  /** POST /v1/runs?wait=: the hub that wakes the wait, and the server's closing signal. */
  waits?: { hub: EventHub; closing: AbortSignal };
}

const CreateRunQuery = z.strictObject({
  wait: WaitMsQuery.optional().describe(
    'For short agents: wait up to this many ms for the run to end. Answered 201/200 (created/idempotent replay) with the ended run, or 202 with the run still in progress when the wait passed first',
  ),
});

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody };

export async function ownedRun(store: Store, tenant: TenantRecord, id: string): Promise<RunRecord> {
  const run = await store.getRun(id);
  if (run === null || run.tenantId !== tenant.id)
    throw new KeelError('run_not_found', `run ${id} not found`);
  return run;
}

export function registerRunRoutes(app: FastifyInstance, deps: RunRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store, registry } = deps;
  /** A run as its tenant may see it: input and result under the tenant's redaction policy. */
  const shown = (run: RunRecord, tenant: TenantRecord) =>
    redactRunView(runView(run), tenant.redact);
  /** A queued run says why it waits (waiting-view.ts) instead of sitting queued unexplained. */
  const view = (run: RunRecord, atCap: boolean, tenant: TenantRecord) =>
    explainQueued(
      shown(run, tenant),
      run,
      registry.get(run.agent, run.agentVersion) !== undefined,
      atCap,
    );

  r.post(
    '/v1/runs',
    {
      schema: {
        summary:
          'Submit a run (429 tenant_queue_full with Retry-After when the tenant’s queue is at its maximum)',
        tags: ['runs'],
        body: CreateRunBody,
        querystring: CreateRunQuery,
        response: { 200: Run, 201: Run, 202: Run, ...errors, 429: ErrorBody },
      },
    },
    async (request, reply) => {
      const tenant = deps.tenantOf(request);
      const body = request.body;
      const agent = registry.resolve(body.agent);
      const input = (body.input ?? null) as Json;
      parseAgentInput(agent, input); // 400 agent_input_invalid before any run exists
      // 429 deadline_unmeetable before any run exists, when asked to refuse a run expected late.
      const admitted = await admitByDeadline(store, agent.name, body, Date.now()).catch(
        (error: unknown) => {
          if (isKeelError(error)) telemetry.runAdmissionRejected(tenant.id, 'api', error.code);
          throw error;
        },
      );
      const requestHash =
        body.idempotencyKey === undefined
          ? null
          : createHash('sha256')
              .update(
                stringify({
                  agent: body.agent,
                  input,
                  priority: body.priority ?? null,
                  budget: body.budget ?? null,
                  metadata: body.metadata ?? null,
                }) ?? '',
              )
              .digest('hex');
      const { run, created } = await store
        .createRun({
          id: newRunId(),
          tenantId: tenant.id,
          agent: agent.name,
          agentVersion: agent.version,
          input,
          priority: admitted.priority,
          expectedFinishAt: admitted.expectedFinishAt,
          budget: body.budget ?? {},
          metadata: (body.metadata ?? null) as Record<string, Json> | null,
          parentRunId: null,
          idempotencyKey: body.idempotencyKey ?? null,
          requestHash,
        })
        .catch((error: unknown) => {
          if (isKeelError(error) && error.code === 'tenant_queue_full')
            telemetry.runAdmissionRejected(tenant.id, 'api', error.code);
          throw error;
        });
      const waitMs = request.query.wait ?? 0;
      if (waitMs === 0 || deps.waits === undefined || isTerminal(run.status))
        return reply.status(created ? 201 : 200).send(shown(run, tenant));
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
      return reply.status(status).send(shown(latest, tenant));
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
      const tenant = deps.tenantOf(request);
      const run = await ownedRun(store, tenant, request.params.id);
      // A queued run of a tenant at its concurrency cap is not claimed until one of its runs ends:
      // say so.
      const shownRun = view(run, await tenantAtCap(store, tenant, [run]), tenant);
      if (run.waitingReason !== 'approval') return shownRun;
      return {
        ...shownRun,
        pendingApprovals: await pendingApprovalsOf(store, tenant.id, run.id, tenant.redact),
      };
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
      const tenant = deps.tenantOf(request);
      const q = request.query;
      const afterId = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      const runs = await store.listRuns(tenant.id, {
        limit: q.limit + 1,
        ...(q.status ? { status: q.status } : {}),
        ...(q.agent ? { agent: q.agent } : {}),
        ...(q.code ? { errorCode: q.code } : {}),
        ...(afterId ? { afterId } : {}),
        ...(q.rerunOf ? { rerunOf: q.rerunOf } : {}),
      });
      const page = runs.slice(0, q.limit);
      const atCap = await tenantAtCap(store, tenant, page);
      return {
        runs: page.map((run) => view(run, atCap, tenant)),
        nextCursor: runs.length > q.limit ? encodeCursor(page[page.length - 1]!.id) : null,
      };
    },
  );

  r.post(
    '/v1/runs/:id/cancel',
    {
      schema: {
        summary: 'Cancel a run',
        tags: ['runs'],
        params: RunIdParams,
        response: { 202: Run, ...errors },
      },
    },
    async (request, reply) => {
      const tenant = deps.tenantOf(request);
      await ownedRun(store, tenant, request.params.id);
      return reply.status(202).send(shown(await store.requestCancel(request.params.id), tenant));
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
      const tenant = deps.tenantOf(request);
      await ownedRun(store, tenant, request.params.id);
      return reply.status(202).send(shown(await store.readmitRun(request.params.id), tenant));
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
      const tenant = deps.tenantOf(request);
      await ownedRun(store, tenant, request.params.id);
      return reply
        .status(202)
        .send(
          shown(
            await store.provideInput(
              request.params.id,
              request.body.key,
              request.body.value as Json,
            ),
            tenant,
          ),
        );
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
      const tenant = deps.tenantOf(request);
      await ownedRun(store, tenant, request.params.id);
      const { channel, id, payload, correlationId, ttlMs } = request.body;
      const delivery = await store.postMessage(request.params.id, {
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
      const tenant = deps.tenantOf(request);
      await ownedRun(store, tenant, request.params.id);
      const { action, result, error } = request.body;
      const resolution =
        action === 'retry'
          ? { action }
          : action === 'succeeded'
            ? { action, result: (result ?? null) as Json }
            : {
                action,
                error: {
                  code: 'tool_failed',
                  message: error?.message ?? 'marked failed by an operator',
                },
              };
      return reply
        .status(202)
        .send(
          shown(
            await store.resolveExecution(request.params.id, request.params.executionId, resolution),
            tenant,
          ),
        );
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
      await ownedRun(store, tenant, request.params.id);
      const journal = await store.loadJournal(request.params.id);
      if (request.query.io === 'false') return { steps: journal.map(stepView) };
      const io = {
        policy: tenant.redact,
        maxBytes: deps.stepPreviewMaxBytes ?? STEP_IO_PREVIEW_MAX_BYTES,
      };
      return {
        steps: journal.map((entry) => ({ ...stepView(entry), ...stepIoFields(entry, io) })),
      };
    },
  );
}
