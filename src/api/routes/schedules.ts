// /v1/schedules: create, read, edit, delete, pause, resume, trigger, backfill, and each schedule's history (its fires
// and their events);
// /v1/admin/tenants/:tenantId/webhook-allowlist: the origins a tenant's failure webhooks may call (operator only).
// Every tenant route is scoped by the caller's tenant: another tenant's schedule is a 404 like a
// missing one.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { Json } from '../../domain/json.ts';
import type { FireRecord, RunTemplate, ScheduleRecord } from '../../store/schedule-store.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { ScheduleInput, ScheduleService } from '../../schedules/schedule-service.ts';
import type { Store } from '../../store/store.ts';
import {
  ALLOWLIST_RULES,
  AllowlistBody,
  BACKFILL_RULES,
  BackfillBody,
  CreateScheduleBody,
  Fire,
  ListFiresQuery,
  ListSchedulesQuery,
  type RunTemplateBody,
  SCHEDULE_BODY_RULES,
  SCHEDULE_EDIT_RULES,
  Schedule,
  ScheduleEvent,
  ScheduleEventsQuery,
  ScheduleIdParams,
  TenantIdParams,
  UpdateScheduleBody,
} from '../schedule-schemas.ts';
import { ErrorBody, errorResponse } from '../schemas.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import {
  CURSOR_DESCRIPTION,
  decodeCursorOf,
  encodeCursor,
  isEpochMs,
  isScheduleId,
} from '../cursor.ts';

export interface ScheduleRoutesDeps {
  schedules: ScheduleService;
  /**
   * For the tenant lookup of the allowlist routes: an unknown tenant is a 404, not an allowlist
   * kept for nobody.
   */
  store: Pick<Store, 'getTenant'>;
  adminKey: string | undefined;
  tenantOf(request: unknown): TenantRecord;
}

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody };
const listErrors = {
  ...errors,
  400: errorResponse(`A bad limit or status, or a bad cursor. ${CURSOR_DESCRIPTION}`),
};
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const ms = (value: string | null | undefined): number | null | undefined =>
  value === undefined ? undefined : value === null ? null : Date.parse(value);

export function scheduleView(s: ScheduleRecord) {
  return {
    id: s.id,
    name: s.name,
    version: s.version,
    cron: s.cron,
    intervalMs: s.intervalMs,
    timeZone: s.timeZone,
    startAt: iso(s.startAt),
    endAt: iso(s.endAt),
    paused: s.paused,
    template: s.template,
    catchupWindowMs: s.catchupWindowMs,
    overlap: s.overlap,
    webhookUrl: s.webhookUrl,
    nextFireAt: iso(s.nextFireAt),
    lastSuccessAt: iso(s.lastSuccessAt),
    createdAt: iso(s.createdAt)!,
    updatedAt: iso(s.updatedAt)!,
  };
}

export function fireView(f: FireRecord) {
  return {
    scheduleId: f.scheduleId,
    logicalTime: iso(f.logicalTime)!,
    kind: f.kind,
    status: f.status,
    runId: f.runId,
    scheduleVersion: f.scheduleVersion,
    firedBy: f.firedBy,
    detail: f.detail,
    recordedAt: iso(f.recordedAt)!,
    startedAt: iso(f.startedAt),
  };
}

function template(body: z.infer<typeof RunTemplateBody>): RunTemplate {
  return {
    agent: body.agent,
    input: (body.input ?? null) as Json,
    priority: body.priority ?? 'interactive',
    budget: body.budget ?? {},
    metadata: (body.metadata ?? null) as Record<string, Json> | null,
  };
}

export function registerScheduleRoutes(app: FastifyInstance, deps: ScheduleRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const svc = deps.schedules;
  const tags = ['schedules'];
  const one = { params: ScheduleIdParams, response: { 200: Schedule, ...errors } };

  r.post(
    '/v1/schedules',
    {
      schema: {
        summary: 'Create a schedule',
        description: SCHEDULE_BODY_RULES,
        tags,
        body: CreateScheduleBody,
        response: {
          201: Schedule,
          ...errors,
          400: errorResponse(
            `The body breaks its schema or a rule. ${SCHEDULE_BODY_RULES} Also invalid_cron, invalid_time_zone, webhook_not_allowed.`,
          ),
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const input: ScheduleInput = {
        name: b.name ?? null,
        cron: b.cron ?? null,
        intervalMs: b.intervalMs ?? null,
        timeZone: b.timeZone,
        startAt: ms(b.startAt) ?? null,
        endAt: ms(b.endAt) ?? null,
        template: template(b.template),
        ...(b.catchupWindowMs !== undefined ? { catchupWindowMs: b.catchupWindowMs } : {}),
        ...(b.overlap !== undefined ? { overlap: b.overlap } : {}),
        webhookUrl: b.webhookUrl ?? null,
      };
      return reply
        .status(201)
        .send(scheduleView(await svc.create(deps.tenantOf(request).id, input)));
    },
  );

  r.get(
    '/v1/schedules',
    {
      schema: {
        summary: 'List schedules',
        tags,
        querystring: ListSchedulesQuery,
        response: {
          200: z.object({ schedules: z.array(Schedule), nextCursor: z.string().nullable() }),
          ...listErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const list = await svc.list(
        deps.tenantOf(request).id,
        q.limit + 1,
        q.cursor === undefined ? undefined : decodeCursorOf(q.cursor, isScheduleId),
      );
      const page = list.slice(0, q.limit);
      return {
        schedules: page.map(scheduleView),
        nextCursor: list.length > q.limit ? encodeCursor(page[page.length - 1]!.id) : null,
      };
    },
  );

  r.get(
    '/v1/schedules/:id',
    { schema: { summary: 'Get a schedule', tags, ...one } },
    async (request) => scheduleView(await svc.get(deps.tenantOf(request).id, request.params.id)),
  );

  r.patch(
    '/v1/schedules/:id',
    {
      schema: {
        summary: 'Edit a schedule (its version goes up; runs already created are untouched)',
        description: SCHEDULE_EDIT_RULES,
        tags,
        body: UpdateScheduleBody,
        ...one,
        response: {
          ...one.response,
          400: errorResponse(
            `The body breaks its schema or a rule. ${SCHEDULE_EDIT_RULES} Also invalid_cron, invalid_time_zone, webhook_not_allowed.`,
          ),
        },
      },
    },
    async (request) => {
      const b = request.body;
      const edit = {
        ...b,
        startAt: ms(b.startAt),
        endAt: ms(b.endAt),
        template: b.template === undefined ? undefined : template(b.template),
      };
      return scheduleView(await svc.update(deps.tenantOf(request).id, request.params.id, edit));
    },
  );

  r.delete(
    '/v1/schedules/:id',
    {
      schema: {
        summary: 'Delete a schedule (the runs it created stay)',
        tags,
        params: ScheduleIdParams,
        // z.undefined() is documented as a response without content: a 204 has no body.
        response: { 204: z.undefined().describe('Deleted; the response has no body'), ...errors },
      },
    },
    async (request, reply) => {
      await svc.remove(deps.tenantOf(request).id, request.params.id);
      return reply.status(204).send();
    },
  );

  r.post(
    '/v1/schedules/:id/pause',
    { schema: { summary: 'Pause a schedule', tags, ...one } },
    async (request) =>
      scheduleView(await svc.setPaused(deps.tenantOf(request).id, request.params.id, true)),
  );
  r.post(
    '/v1/schedules/:id/resume',
    {
      schema: {
        summary: 'Resume a schedule (fires missed while paused are caught up within the window)',
        tags,
        ...one,
      },
    },
    async (request) =>
      scheduleView(await svc.setPaused(deps.tenantOf(request).id, request.params.id, false)),
  );

  r.post(
    '/v1/schedules/:id/trigger',
    {
      schema: {
        summary: 'Fire now (the overlap policy applies)',
        tags,
        params: ScheduleIdParams,
        response: { 202: Fire, ...errors },
      },
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(fireView(await svc.trigger(deps.tenantOf(request).id, request.params.id))),
  );

  r.post(
    '/v1/schedules/:id/backfill',
    {
      schema: {
        summary:
          'Request the fires of a past range (oldest first; fires that ran already are left alone)',
        description: BACKFILL_RULES,
        tags,
        params: ScheduleIdParams,
        body: BackfillBody,
        response: {
          202: z.object({ fireTimes: z.array(z.string()), requested: z.array(z.string()) }),
          ...errors,
          400: errorResponse(BACKFILL_RULES),
        },
      },
    },
    async (request, reply) => {
      const result = await svc.backfill(
        deps.tenantOf(request).id,
        request.params.id,
        Date.parse(request.body.from),
        Date.parse(request.body.to),
      );
      return reply.status(202).send({
        fireTimes: result.fireTimes.map((t) => iso(t)!),
        requested: result.requested.map((t) => iso(t)!),
      });
    },
  );

  r.get(
    '/v1/schedules/:id/fires',
    {
      schema: {
        summary: 'The schedule’s history: every fire and its outcome, newest first',
        tags,
        params: ScheduleIdParams,
        querystring: ListFiresQuery,
        response: {
          200: z.object({ fires: z.array(Fire), nextCursor: z.string().nullable() }),
          ...listErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const fires = await svc.fires(deps.tenantOf(request).id, request.params.id, {
        limit: q.limit + 1,
        ...(q.status ? { status: q.status } : {}),
        ...(q.cursor !== undefined ? { before: decodeCursorOf(q.cursor, isEpochMs) } : {}),
      });
      const page = fires.slice(0, q.limit);
      return {
        fires: page.map(fireView),
        nextCursor:
          fires.length > q.limit ? encodeCursor(page[page.length - 1]!.logicalTime) : null,
      };
    },
  );

  r.get(
    '/v1/schedules/:id/events',
    {
      schema: {
        summary:
          'What happened to the schedule’s fires, in order (fire.requested, fire.<status>, notification.queued)',
        tags,
        params: ScheduleIdParams,
        querystring: ScheduleEventsQuery,
        response: { 200: z.object({ events: z.array(ScheduleEvent) }), ...errors },
      },
    },
    async (request) => {
      const events = await svc.events(
        deps.tenantOf(request).id,
        request.params.id,
        request.query.after,
        request.query.limit,
      );
      return {
        events: events.map((e) => ({ seq: e.seq, type: e.type, at: iso(e.at)!, data: e.data })),
      };
    },
  );

  registerAllowlistRoutes(app, deps);
}

/** The operator's side: which origins a tenant's failure webhooks may call. */
function registerAllowlistRoutes(app: FastifyInstance, deps: ScheduleRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const svc = deps.schedules;
  const allowlist = {
    params: TenantIdParams,
    response: {
      200: z.object({ origins: z.array(z.string()) }),
      ...errors,
      404: errorResponse('tenant_not_found: no tenant has this id (or admin_disabled)'),
    },
  };
  const knownTenant = async (tenantId: string): Promise<string> => {
    if ((await deps.store.getTenant(tenantId)) === null)
      throw new KeelError('tenant_not_found', `tenant ${tenantId} not found`);
    return tenantId;
  };
  r.put(
    '/v1/admin/tenants/:tenantId/webhook-allowlist',
    {
      onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
      schema: {
        summary: 'Set the origins a tenant’s webhooks (schedule failures, approvers) may call',
        description: ALLOWLIST_RULES,
        tags: ['admin'],
        body: AllowlistBody,
        ...allowlist,
        response: { ...allowlist.response, 400: errorResponse(ALLOWLIST_RULES) },
      },
    },
    async (request) => ({
      origins: await svc.setWebhookAllowlist(
        await knownTenant(request.params.tenantId),
        request.body.origins,
      ),
    }),
  );
  r.get(
    '/v1/admin/tenants/:tenantId/webhook-allowlist',
    {
      onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
      schema: {
        summary: 'The origins a tenant’s webhooks (schedule failures, approvers) may call',
        tags: ['admin'],
        ...allowlist,
      },
    },
    async (request) => ({
      origins: await svc.getWebhookAllowlist(await knownTenant(request.params.tenantId)),
    }),
  );
}
