// Writes the audit logs of the API's changes: for each audited route (one table below) an entry
// naming who (the request's key, or the platform admin: the root key or a named principal), what,
// on what, and the outcome (ok or the error code), written before the response leaves, so a client
// that saw the answer finds the entry. A tenant's changes go to its log; a platform admin's go to
// the platform log too (and to the tenant's log when they concern one). Every state-changing admin
// route must be in the table: the server refuses to start otherwise. Every request of a run's
// delegated token that may change state is an entry too (refused ones included), under the run and
// its tool call. Requests no key or admin key authenticated are not entries. Never records request
// bodies' values: only names and ids.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../domain/access.ts';
import type { DelegationClaims } from '../domain/delegation.ts';
import type { Store } from '../store/store.ts';
import { adminAttemptOf } from './admin-auth.ts';
import { isAdminSurface } from './admin-listener.ts';
import type { Identity } from './auth.ts';

interface Seen {
  params: Record<string, string>;
  body: Record<string, unknown>;
  /** The response body, parsed (null when it is not a JSON object). */
  response: Record<string, unknown> | null;
}

/** The value at `keys` inside a parsed body, or undefined. */
function field(value: unknown, ...keys: string[]): unknown {
  let at = value;
  for (const key of keys) at = isRecord(at) ? at[key] : undefined;
  return at;
}

/** A string id found at `keys` in the response, as `prefix:id`; null when absent. */
function resourceAt(s: Seen, prefix: string, ...keys: string[]): string | null {
  const id = field(s.response, ...keys);
  return typeof id === 'string' ? `${prefix}:${id}` : null;
}

interface Described {
  action: string;
  resource: string | null;
  /** The tenant an admin request was about (tenant requests: the caller's). */
  tenantId?: string | undefined;
  runId?: string | null;
  data?: Record<string, unknown>;
}

const run = (action: string, data?: (s: Seen) => Record<string, unknown>) => (s: Seen) => ({
  action,
  resource: `run:${s.params.id}`,
  runId: s.params.id ?? null,
  data: data?.(s) ?? {},
});
const copy = (action: string) =>
  run(action, (s) => ({
    newRunId: field(s.response, 'id') ?? null,
    position: s.body.position ?? null,
  }));
const schedule = (action: string) => (s: Seen) => ({
  action,
  resource: s.params.id === undefined ? resourceAt(s, 'schedule', 'id') : `schedule:${s.params.id}`,
});

/** `METHOD url` of each audited route → what its entry says. */
export const AUDITED_ROUTES: Readonly<Record<string, (seen: Seen) => Described>> = {
  'POST /v1/runs/:id/cancel': run('run.cancel'),
  'POST /v1/runs/:id/retry': run('run.retry'),
  'POST /v1/runs/:id/input': run('run.input', (s) => ({ key: s.body.key ?? null })),
  'POST /v1/runs/:id/executions/:executionId/resolve': run('run.resolve', (s) => ({
    executionId: s.params.executionId,
    resolution: s.body.action ?? null,
  })),
  'POST /v1/runs/:id/approvals/:executionId': run('run.approval', (s) => ({
    executionId: s.params.executionId,
    decision: s.body.decision ?? null,
    argsHash: field(s.response, 'argsHash') ?? null,
    tool: field(s.response, 'tool') ?? null,
  })),
  'PUT /v1/policy': () => ({ action: 'policy.update', resource: 'policy:tools' }),
  'PUT /v1/approval-webhook': (s) => ({
    action: 'approval_webhook.update',
    resource: 'approval-webhook',
    data: { url: s.body.url ?? null, secret: field(s.response, 'webhook', 'secret') ?? null },
  }),
  'DELETE /v1/approval-webhook': () => ({
    action: 'approval_webhook.delete',
    resource: 'approval-webhook',
  }),
  'POST /v1/runs/:id/rerun': copy('run.rerun'),
  'POST /v1/runs/:id/reset': copy('run.reset'),
  'POST /v1/runs/:id/fork': copy('run.fork'),
  'POST /v1/runs/migrate-version': (s) => ({
    action: 'run.migrate_version',
    resource: `agent:${String(s.body.agent ?? '')}`,
    data: {
      from: s.body.from ?? null,
      to: s.body.to ?? null,
      moved: field(s.response, 'moved') ?? null,
    },
  }),
  'POST /v1/schedules': schedule('schedule.create'),
  'PATCH /v1/schedules/:id': schedule('schedule.update'),
  'DELETE /v1/schedules/:id': schedule('schedule.delete'),
  'POST /v1/schedules/:id/pause': schedule('schedule.pause'),
  'POST /v1/schedules/:id/resume': schedule('schedule.resume'),
  'POST /v1/schedules/:id/trigger': schedule('schedule.trigger'),
  'POST /v1/schedules/:id/backfill': schedule('schedule.backfill'),
  'POST /v1/keys': (s) => ({
    action: 'key.create',
    resource: resourceAt(s, 'key', 'key', 'id'),
    data: { name: s.body.name ?? null, scopes: s.body.scopes ?? null },
  }),
  'DELETE /v1/keys/:id': (s) => ({ action: 'key.revoke', resource: `key:${s.params.id}` }),
  // Secrets: the name and the version, never the value (it is in the body: not read here).
  'POST /v1/secrets': (s) => ({
    action: 'secret.create',
    resource: `secret:${String(s.body.name ?? '')}`,
    data: { version: field(s.response, 'secret', 'version') ?? null },
  }),
  'POST /v1/secrets/:name/rotate': (s) => ({
    action: 'secret.rotate',
    resource: `secret:${s.params.name}`,
    data: { version: field(s.response, 'secret', 'version') ?? null },
  }),
  'DELETE /v1/secrets/:name': (s) => ({
    action: 'secret.delete',
    resource: `secret:${s.params.name}`,
  }),
  // Platform admin
  'POST /v1/admin/tenants': (s) => ({
    action: 'tenant.create',
    resource: resourceAt(s, 'tenant', 'tenant', 'id'),
    tenantId: resourceAt(s, 'tenant', 'tenant', 'id')?.slice('tenant:'.length),
    data: { name: s.body.name ?? null },
  }),
  'PATCH /v1/admin/tenants/:id': (s) => ({
    action: 'tenant.update',
    resource: `tenant:${s.params.id}`,
    tenantId: s.params.id,
    data: { fields: Object.keys(s.body) },
  }),
  'PUT /v1/admin/tenants/:tenantId/webhook-allowlist': (s) => ({
    action: 'tenant.webhook_allowlist',
    resource: `tenant:${s.params.tenantId}`,
    tenantId: s.params.tenantId,
  }),
  'POST /v1/admin/tenants/:id/keys': (s) => ({
    action: 'key.create',
    resource: resourceAt(s, 'key', 'key', 'id'),
    tenantId: s.params.id,
    data: { name: s.body.name ?? null, scopes: s.body.scopes ?? null },
  }),
  'PUT /v1/admin/tenants/:id/policy': (s) => ({
    action: 'policy.update',
    resource: 'policy:tools',
    tenantId: s.params.id,
  }),
  'DELETE /v1/admin/tenants/:id/keys/:keyId': (s) => ({
    action: 'key.revoke',
    resource: `key:${s.params.keyId}`,
    tenantId: s.params.id,
  }),
  'PUT /v1/admin/tenants/:id/retention': (s) => ({
    action: 'retention.put',
    resource: `tenant:${s.params.id}`,
    tenantId: s.params.id,
  }),
  'DELETE /v1/admin/tenants/:id/retention': (s) => ({
    action: 'retention.delete',
    resource: `tenant:${s.params.id}`,
    tenantId: s.params.id,
  }),
  'PUT /v1/admin/tenants/:id/mcp-servers/:name': (s) => ({
    action: 'mcp_server.put',
    resource: `mcp-server:${s.params.name}`,
    tenantId: s.params.id,
  }),
  'DELETE /v1/admin/tenants/:id/mcp-servers/:name': (s) => ({
    action: 'mcp_server.delete',
    resource: `mcp-server:${s.params.name}`,
    tenantId: s.params.id,
  }),
  // Platform-wide: the platform log only.
  'POST /v1/admin/principals': (s) => ({
    action: 'admin_principal.create',
    resource: resourceAt(s, 'admin-principal', 'principal', 'id'),
    data: { name: s.body.name ?? null },
  }),
  'DELETE /v1/admin/principals/:id': (s) => ({
    action: 'admin_principal.revoke',
    resource: `admin-principal:${s.params.id}`,
  }),
  // Sandbox nodes (issue 24).
  'POST /v1/admin/nodes': (s) => ({
    action: 'node.create',
    resource: resourceAt(s, 'node', 'node', 'id'),
    data: { name: s.body.name ?? null },
  }),
  'POST /v1/admin/nodes/:id/drain': (s) => ({
    action: 'node.drain',
    resource: `node:${s.params.id}`,
  }),
  'POST /v1/admin/nodes/:id/undrain': (s) => ({
    action: 'node.undrain',
    resource: `node:${s.params.id}`,
  }),
  'DELETE /v1/admin/nodes/:id': (s) => ({ action: 'node.remove', resource: `node:${s.params.id}` }),
  // A node's own registration and heartbeats carry its node token, not an admin's key: no admin
  // actor, so nothing is written (a heartbeat every 2 s would bury the platform log).
  'PUT /v1/admin/nodes/self': () => ({ action: 'node.register', resource: null }),
  'POST /v1/admin/nodes/self/heartbeat': () => ({ action: 'node.heartbeat', resource: null }),
};

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * onRoute hook: a state-changing admin route missing from AUDITED_ROUTES fails the start, so a new
 * one cannot go unaudited.
 */
export function requireAdminAudit(route: {
  method: string | string[];
  url: string;
  schema?: { hide?: boolean };
}): void {
  // Hidden routes are the 405 answers (method-not-allowed.ts): they change nothing.
  if (!isAdminSurface(route.url) || route.schema?.hide === true) return;
  for (const method of [route.method].flat()) {
    if (STATE_CHANGING.has(method) && AUDITED_ROUTES[`${method} ${route.url}`] === undefined)
      throw new Error(`admin route ${method} ${route.url} has no entry in AUDITED_ROUTES`);
  }
}

export interface AuditTrailDeps {
  store: Store;
  identityOf(request: FastifyRequest): Identity | undefined;
}

/**
 * What a delegated token's request that may change state says (every one is audited, refused ones
 * too): a child run it started, or the route it tried.
 */
function delegatedUse(method: string, url: string | undefined, claims: DelegationClaims) {
  return (s: Seen): Described =>
    method === 'POST' && url === '/v1/runs'
      ? {
          action: 'run.child_create',
          resource: resourceAt(s, 'run', 'id'),
          runId: claims.runId,
          data: {
            parentRunId: claims.runId,
            executionId: claims.executionId,
            agent: s.body.agent ?? null,
          },
        }
      : {
          action: 'delegated.request',
          resource: `run:${claims.runId}`,
          runId: claims.runId,
          data: { route: `${method} ${url ?? '(no route)'}`, executionId: claims.executionId },
        };
}

export function registerAuditTrail(app: FastifyInstance, deps: AuditTrailDeps): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const identity = deps.identityOf(request);
    const claims = identity?.delegation;
    const describe =
      claims !== undefined && request.method !== 'GET' && request.method !== 'HEAD'
        ? delegatedUse(request.method, request.routeOptions.url, claims)
        : AUDITED_ROUTES[`${request.method} ${request.routeOptions.url}`];
    if (describe === undefined) return payload;
    const admin = identity === undefined ? adminAttemptOf(request) : undefined;
    const actor: Actor | undefined =
      claims !== undefined
        ? { type: 'delegated', id: claims.runId, name: claims.executionId }
        : identity !== undefined
          ? { type: 'key', id: identity.key.id, name: identity.key.name }
          : admin;
    if (actor === undefined) return payload;
    const response = parsed(payload);
    const described = describe({
      params: (request.params ?? {}) as Record<string, string>,
      body: isRecord(request.body) ? request.body : {},
      response,
    });
    const tenantId = identity?.tenant.id ?? described.tenantId;
    const outcome = outcomeOf(reply, response);
    try {
      if (admin !== undefined)
        await deps.store.appendPlatformAudit({
          actor: admin,
          action: described.action,
          resource: described.resource,
          tenantId: tenantId ?? null,
          outcome,
          data: described.data ?? {},
        });
      if (tenantId !== undefined)
        await deps.store.appendAudit({
          tenantId,
          actor,
          action: described.action,
          resource: described.resource,
          runId: described.runId ?? null,
          outcome,
          data: described.data ?? {},
        });
    } catch (error) {
      // The change itself is done: failing its answer would mislead the caller into repeating it.
      request.log.error({ err: error, action: described.action }, 'audit entry not written');
    }
    return payload;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parsed(payload: unknown): Record<string, unknown> | null {
  if (typeof payload !== 'string') return null;
  try {
    const value: unknown = JSON.parse(payload);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

function outcomeOf(reply: FastifyReply, response: Record<string, unknown> | null): string {
  if (reply.statusCode < 400) return 'ok';
  const code = field(response, 'error', 'code');
  return typeof code === 'string' ? code : `http_${reply.statusCode}`;
}
