// GET /v1/audit: the tenant's audit log, newest first, filtered by action, resource and time, in
// cursor pages, or all of it as NDJSON (`format=ndjson`, streamed page by page); admin scope. The
// platform admin reads any tenant's at /v1/admin/tenants/:id/audit, and the platform log (every
// platform admin's changes) at /v1/admin/audit, with the same filters plus tenant and actor.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type {
  AuditEntry as AuditRecord,
  AuditFilter,
  PlatformAuditEntry,
} from '../../domain/access.ts';
import { KeelError } from '../../domain/keel-error.ts';
import type { Store } from '../../store/store.ts';
import {
  AuditPage,
  AuditQuery,
  PlatformAuditPage,
  PlatformAuditQuery,
  type AuditEntry,
} from '../access-schemas.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import type { Identity } from '../auth.ts';
import { CURSOR_DESCRIPTION, decodeCursorOf, encodeCursor } from '../cursor.ts';
import { ErrorBody, TenantParams, errorResponse } from '../schemas.ts';

/** Entries read per store query while exporting NDJSON. */
const AUDIT_EXPORT_PAGE_ROWS = 500;

export interface AuditRoutesDeps {
  store: Store;
  adminKey: string | undefined;
  identityOf(request: unknown): Identity;
}

const isEntryId = (after: unknown): after is number =>
  Number.isSafeInteger(after) && (after as number) > 0;

export function auditView(e: AuditRecord): z.infer<typeof AuditEntry> {
  return {
    id: String(e.id),
    at: new Date(e.at).toISOString(),
    actor: e.actor,
    action: e.action,
    resource: e.resource,
    runId: e.runId,
    outcome: e.outcome,
    data: e.data,
  };
}

function filterOf(q: z.infer<typeof AuditQuery>): Omit<AuditFilter, 'limit' | 'beforeId'> {
  return {
    ...(q.action === undefined ? {} : { action: q.action }),
    ...(q.resource === undefined ? {} : { resource: q.resource }),
    ...(q.since === undefined ? {} : { since: Date.parse(q.since) }),
    ...(q.until === undefined ? {} : { until: Date.parse(q.until) }),
  };
}

function platformView(e: PlatformAuditEntry) {
  return {
    id: String(e.id),
    at: new Date(e.at).toISOString(),
    actor: e.actor,
    action: e.action,
    resource: e.resource,
    tenantId: e.tenantId,
    outcome: e.outcome,
    data: e.data,
  };
}

/** A page of an audit log to read: at most `limit` entries, newest first, before `beforeId`. */
type ListPage<E> = (page: { limit: number; beforeId?: number }) => Promise<E[]>;

/**
 * One read of an audit log (a tenant's or the platform's): a page with the cursor of the next, or,
 * with `format=ndjson`, every entry from the cursor on, streamed a page of the store at a time.
 */
async function answerLog<E extends { id: number }>(
  list: ListPage<E>,
  view: (entry: E) => unknown,
  q: { cursor?: string | undefined; format?: string | undefined; limit: number },
  filter: { since?: number | undefined; until?: number | undefined },
  reply: FastifyReply,
) {
  const beforeId = q.cursor === undefined ? undefined : decodeCursorOf(q.cursor, isEntryId);
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until)
    throw new KeelError('validation_failed', 'since must be before until');
  if (q.format === 'ndjson')
    return reply
      .type('application/x-ndjson')
      .send(Readable.from(exportLines(list, view, beforeId)));
  const rows = await list({ limit: q.limit + 1, ...(beforeId === undefined ? {} : { beforeId }) });
  const page = rows.slice(0, q.limit);
  return reply.send({
    entries: page.map(view),
    nextCursor: rows.length > q.limit ? encodeCursor(page[page.length - 1]!.id) : null,
  });
}

async function* exportLines<E extends { id: number }>(
  list: ListPage<E>,
  view: (entry: E) => unknown,
  beforeId: number | undefined,
): AsyncGenerator<string> {
  let before = beforeId;
  for (;;) {
    const page = await list({
      limit: AUDIT_EXPORT_PAGE_ROWS,
      ...(before === undefined ? {} : { beforeId: before }),
    });
    for (const entry of page) yield `${JSON.stringify(view(entry))}\n`;
    if (page.length < AUDIT_EXPORT_PAGE_ROWS) return;
    before = page[page.length - 1]!.id;
  }
}

function answerPlatform(store: Store, q: z.infer<typeof PlatformAuditQuery>, reply: FastifyReply) {
  const filter = {
    ...filterOf(q),
    ...(q.tenantId === undefined ? {} : { tenantId: q.tenantId }),
    ...(q.actorId === undefined ? {} : { actorId: q.actorId }),
  };
  return answerLog(
    (page) => store.listPlatformAudit({ ...filter, ...page }),
    platformView,
    q,
    filter,
    reply,
  );
}

function answer(
  store: Store,
  tenantId: string,
  q: z.infer<typeof AuditQuery>,
  reply: FastifyReply,
) {
  const filter = filterOf(q);
  return answerLog(
    (page) => store.listAudit(tenantId, { ...filter, ...page }),
    auditView,
    q,
    filter,
    reply,
  );
}

const response = {
  200: AuditPage.describe('A page of entries; with format=ndjson, application/x-ndjson lines'),
  400: errorResponse(`A bad filter, limit or format, or a bad cursor. ${CURSOR_DESCRIPTION}`),
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
};

export function registerAuditRoutes(app: FastifyInstance, deps: AuditRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v1/audit',
    {
      schema: {
        summary:
          'The tenant’s audit log, newest first: who did what, on what, when, with what outcome (admin scope)',
        tags: ['audit'],
        querystring: AuditQuery,
        response,
      },
    },
    async (request, reply) =>
      answer(deps.store, deps.identityOf(request).tenant.id, request.query, reply),
  );

  r.get(
    '/v1/admin/audit',
    {
      onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
      schema: {
        summary:
          'The platform audit log, newest first: every state-changing request of a platform admin (who, what, on what, which tenant, outcome)',
        tags: ['admin'],
        querystring: PlatformAuditQuery,
        response: {
          ...response,
          200: PlatformAuditPage.describe(
            'A page of entries; with format=ndjson, application/x-ndjson lines',
          ),
        },
      },
    },
    async (request, reply) => answerPlatform(deps.store, request.query, reply),
  );

  r.get(
    '/v1/admin/tenants/:id/audit',
    {
      onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
      schema: {
        summary: 'A tenant’s audit log, newest first',
        tags: ['admin'],
        params: TenantParams,
        querystring: AuditQuery,
        response,
      },
    },
    async (request, reply) => {
      if ((await deps.store.getTenant(request.params.id)) === null)
        throw new KeelError('tenant_not_found', `no tenant ${request.params.id}`);
      return answer(deps.store, request.params.id, request.query, reply);
    },
  );
}
