// GET /v1/runs/:id/events: the run's events as Server-Sent Events (`id:` = the gapless event
// sequence number, resumable with Last-Event-ID or ?after=N, closed after the terminal event), or
// as a JSON array with ?format=json. SSE is written by hand on the raw response: it is a few lines,
// and resume semantics must be exactly ours.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import type { EventHub } from '../event-hub.ts';
import type { LiveDeltas } from '../../models/live-deltas.ts';
import { ErrorBody, EventsQuery, RunEvent, RunIdParams } from '../schemas.ts';
import { eventView } from '../views.ts';
import { openSseResponse } from '../sse-response.ts';
import { redactEventView } from '../redaction.ts';
import type { RedactionPolicy } from '../../domain/redaction-policy.ts';
import { followEvents, FOLLOW_PAGE_MAX_EVENTS, ownedRun, storedEvents } from '../run-operations.ts';

export const SSE_PAGE_MAX_EVENTS = FOLLOW_PAGE_MAX_EVENTS;
export const EVENTS_JSON_MAX_EVENTS = 10_000;

export interface EventRoutesDeps {
  store: Store;
  hub: EventHub;
  tenantOf(request: unknown): TenantRecord;
  /** Resolves when the server shuts down, so open streams end. */
  closing: AbortSignal;
  /**
   * Ephemeral events (model.delta): written without an `id:`, so they never move the resume cursor.
   */
  live?: LiveDeltas;
}

export function registerEventRoutes(app: FastifyInstance, deps: EventRoutesDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/runs/:id/events',
    {
      schema: {
        summary: 'Stream a run’s events (SSE), or list them (format=json)',
        tags: ['runs'],
        params: RunIdParams,
        querystring: EventsQuery,
        response: {
          200: z.array(RunEvent).describe('With format=json; otherwise text/event-stream'),
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const tenant = deps.tenantOf(request);
      await ownedRun(deps.store, tenant, request.params.id);
      const header = request.headers['last-event-id'];
      let after = request.query.after ?? 0;
      if (typeof header === 'string' && header.length > 0) {
        if (!/^\d{1,15}$/.test(header))
          throw new KeelError(
            'validation_failed',
            'Last-Event-ID must be an event sequence number',
          );
        after = Number(header);
      }
      if (request.query.format === 'json') {
        return storedEvents(
          deps.store,
          tenant,
          request.params.id,
          after,
          request.query.limit ?? EVENTS_JSON_MAX_EVENTS,
        );
      }
      return streamEvents(deps, request.params.id, after, reply, tenant.redact);
    },
  );
}

async function streamEvents(
  deps: EventRoutesDeps,
  runId: string,
  after: number,
  reply: FastifyReply,
  policy: RedactionPolicy,
): Promise<void> {
  const { res, signal, end } = openSseResponse(reply, deps.closing, ': keel event stream\n\n');
  const unsubscribeLive = deps.live?.subscribe(runId, (event) => {
    if (!signal.aborted) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`);
  });
  try {
    for await (const event of followEvents(deps.store, deps.hub, runId, after, signal))
      res.write(
        `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(redactEventView(eventView(event), policy))}\n\n`,
      );
  } finally {
    unsubscribeLive?.();
    end();
  }
}
