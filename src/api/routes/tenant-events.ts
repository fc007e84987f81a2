// GET /v1/events: the caller's tenant's run events, every run on one connection, as Server-Sent
// Events (`id:` = the event's cursor; resumable with Last-Event-ID or ?after=), or one page as JSON
// with ?format=json. Filters: runIds, agent, types, parentRunId. Stored events only: live model
// deltas and tool output stay on each run's own stream. Written by hand on the raw response, as
// the run stream is; a slow client is written to only as fast as it reads (the next page is read
// after the socket drains).
import { once } from 'node:events';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  EVENT_CURSOR_START,
  decodeEventCursor,
  encodeEventCursor,
  type EventCursor,
  type TenantEventFilter,
} from '../../domain/event-cursor.ts';
import { KeelError } from '../../domain/keel-error.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import type { EventHub } from '../event-hub.ts';
import { ErrorBody, errorResponse } from '../schemas.ts';
import {
  TENANT_STREAM_PAGE_MAX_EVENTS,
  TENANT_STREAM_RUN_IDS_MAX,
  followTenantEvents,
  tenantEventView,
} from '../tenant-events.ts';
import { openSseResponse } from '../sse-response.ts';

export interface TenantEventRoutesDeps {
  store: Store;
  hub: EventHub;
  tenantOf(request: unknown): TenantRecord;
  /** Aborts when the server shuts down, so open streams end. */
  closing: AbortSignal;
}

const ID_LIST = /^[A-Za-z0-9_.:-]{1,200}(,[A-Za-z0-9_.:-]{1,200})*$/;

const idList = (what: string, max: number) =>
  z
    .string()
    .regex(ID_LIST, `a comma-separated list of ${what}`)
    .transform((text) => [...new Set(text.split(','))])
    .refine((ids) => ids.length <= max, `at most ${max} ${what}`)
    .optional();

export const TenantEventsQuery = z.strictObject({
  runIds: idList('run ids', TENANT_STREAM_RUN_IDS_MAX).describe(
    `Only these runs' events (comma-separated, at most ${TENANT_STREAM_RUN_IDS_MAX})`,
  ),
  agent: z.string().min(1).max(200).optional().describe('Only runs of this agent'),
  types: idList('event types', 50).describe(
    'Only these event types (comma-separated), e.g. run.succeeded,run.failed,run.cancelled',
  ),
  parentRunId: z.string().min(1).max(200).optional().describe('Only the children of this run'),
  after: z
    .string()
    .max(40)
    .optional()
    .describe(
      'Resume after this cursor (an event’s `id:`/`cursor`); Last-Event-ID does the same and wins',
    ),
  from: z
    .enum(['start', 'now'])
    .optional()
    .describe(
      'Without a cursor: from the first stored event (start) or only events written from now on (now). Default: start with runIds or format=json, else now',
    ),
  format: z.enum(['sse', 'json']).optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(TENANT_STREAM_PAGE_MAX_EVENTS)
    .optional()
    .describe(
      `format=json: events in the page (default and most ${TENANT_STREAM_PAGE_MAX_EVENTS})`,
    ),
});

export const TenantEvent = z
  .object({
    cursor: z.string().describe('The event’s place in the tenant-wide order: resume after it'),
    runId: z.string(),
    agent: z.string(),
    seq: z.number().int().describe('The event’s number in its run'),
    type: z.string(),
    at: z.string(),
    data: z.unknown(),
  })
  .meta({ id: 'TenantEvent' });

export const TenantEventPage = z.object({
  events: z.array(TenantEvent),
  nextCursor: z
    .string()
    .describe('Ask again with after= this: the last event’s cursor, or the one asked from'),
});

export function registerTenantEventRoutes(app: FastifyInstance, deps: TenantEventRoutesDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/events',
    {
      schema: {
        summary:
          'Stream the tenant’s run events, many runs on one connection (SSE, resumable), or read a page (format=json)',
        tags: ['runs'],
        querystring: TenantEventsQuery,
        response: {
          200: TenantEventPage.describe('With format=json; otherwise text/event-stream'),
          400: errorResponse(
            'validation_failed for a bad filter; invalid_cursor for a cursor (after=, Last-Event-ID) this API did not issue',
          ),
          401: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const tenant = deps.tenantOf(request);
      const q = request.query;
      const filter: TenantEventFilter = {
        ...(q.runIds === undefined ? {} : { runIds: q.runIds }),
        ...(q.agent === undefined ? {} : { agent: q.agent }),
        ...(q.types === undefined ? {} : { types: q.types }),
        ...(q.parentRunId === undefined ? {} : { parentRunId: q.parentRunId }),
      };
      const header = request.headers['last-event-id'];
      const asked =
        typeof header === 'string' && header.length > 0 ? header : (q.after ?? undefined);
      if (asked !== undefined && q.from !== undefined)
        throw new KeelError('validation_failed', 'give a cursor or from=, not both');
      const from = q.from ?? (q.runIds !== undefined || q.format === 'json' ? 'start' : 'now');
      const after =
        asked !== undefined
          ? decodeEventCursor(asked)
          : from === 'start'
            ? EVENT_CURSOR_START
            : await deps.store.tenantEventsHead();
      if (q.format === 'json') {
        // A page from now on is empty by definition: it answers the cursor of now.
        if (asked === undefined && from === 'now')
          return { events: [], nextCursor: encodeEventCursor(after) };
        const page = await deps.store.listTenantEvents(
          tenant.id,
          filter,
          after,
          q.limit ?? TENANT_STREAM_PAGE_MAX_EVENTS,
        );
        return {
          events: page.events.map((e) => tenantEventView(e, tenant)),
          nextCursor: encodeEventCursor(page.cursor),
        };
      }
      return streamTenantEvents(deps, tenant, filter, after, reply);
    },
  );
}

async function streamTenantEvents(
  deps: TenantEventRoutesDeps,
  tenant: TenantRecord,
  filter: TenantEventFilter,
  after: EventCursor,
  reply: FastifyReply,
): Promise<void> {
  // The starting cursor, so a client that saw no event yet can still resume from here.
  const { res, signal, end } = openSseResponse(
    reply,
    deps.closing,
    `: keel tenant event stream\nid: ${encodeEventCursor(after)}\n\n`,
  );
  try {
    for await (const event of followTenantEvents(
      deps.store,
      deps.hub,
      tenant,
      filter,
      after,
      signal,
    )) {
      const view = tenantEventView(event, tenant);
      const written = res.write(
        `id: ${view.cursor}\nevent: ${view.type}\ndata: ${JSON.stringify(view)}\n\n`,
      );
      // Backpressure: nothing more is read from the store until the client has taken this.
      if (!written) await once(res, 'drain', { signal }).catch(() => undefined);
    }
  } finally {
    end();
  }
}
