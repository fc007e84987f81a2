// The scope every route of the tenant API needs, declared in one table. The server refuses to start
// with a tenant route missing from it (a new route cannot be forgotten), and answers a key without
// the scope 403 `forbidden_scope` before the request's body is read. Admin routes (/v1/admin/*)
// are the platform admin's and take no tenant key; hidden routes (the 405 answers) need none.
import type { RouteOptions } from 'fastify';
import type { Scope } from '../domain/access.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { Identity } from './auth.ts';
import { errorResponse } from './schemas.ts';

/**
 * `METHOD url` → the scope it needs. `submit` starts new work, `read` reads, `operate` acts on work
 * that exists, `admin` manages the tenant's keys and secrets and reads its audit log.
 */
export const ROUTE_SCOPES: Readonly<Record<string, Scope>> = {
  'POST /v1/runs': 'submit',
  'POST /v1/runs::batch': 'submit',
  'GET /v1/runs': 'read',
  'GET /v1/runs/:id': 'read',
  'GET /v1/runs/:id/tree': 'read',
  'GET /v1/runs/:id/steps': 'read',
  'GET /v1/runs/:id/steps/:seq': 'read',
  'GET /v1/runs/:id/payloads/:sha256': 'read',
  'GET /v1/runs/:id/shared': 'read',
  'GET /v1/runs/:id/shared/*': 'read',
  'GET /v1/runs/:id/attempts': 'read',
  'GET /v1/runs/:id/events': 'read',
  'GET /v1/runs/:id/result': 'read',
  'GET /v1/events': 'read',
  'POST /v1/runs/:id/cancel': 'operate',
  'POST /v1/runs/:id/retry': 'operate',
  'POST /v1/runs/:id/input': 'operate',
  'POST /v1/runs/:id/messages': 'operate',
  'POST /v1/runs/:id/executions/:executionId/resolve': 'operate',
  'POST /v1/runs/:id/rerun': 'operate',
  'POST /v1/runs/:id/reset': 'operate',
  'POST /v1/runs/:id/fork': 'operate',
  'POST /v1/runs/migrate-version': 'operate',
  'GET /v1/usage': 'read',
  'GET /v1/agents': 'read',
  'GET /v1/dashboard/tenant': 'read',
  'GET /v1/dashboard/pools': 'read',
  'GET /v1/dashboard/nodes': 'read',
  'POST /v1/schedules': 'submit',
  'GET /v1/schedules': 'read',
  'GET /v1/schedules/:id': 'read',
  'PATCH /v1/schedules/:id': 'operate',
  'DELETE /v1/schedules/:id': 'operate',
  'POST /v1/schedules/:id/pause': 'operate',
  'POST /v1/schedules/:id/resume': 'operate',
  'POST /v1/schedules/:id/trigger': 'submit',
  'POST /v1/schedules/:id/backfill': 'submit',
  'GET /v1/schedules/:id/fires': 'read',
  'GET /v1/schedules/:id/events': 'read',
  'POST /v1/keys': 'admin',
  'GET /v1/keys': 'admin',
  'DELETE /v1/keys/:id': 'admin',
  'GET /v1/audit': 'admin',
  'POST /v1/secrets': 'admin',
  'GET /v1/secrets': 'admin',
  'POST /v1/secrets/:name/rotate': 'admin',
  'DELETE /v1/secrets/:name': 'admin',
  'GET /v1/approvals': 'read',
  'PUT /v1/approval-webhook': 'admin',
  'GET /v1/approval-webhook': 'admin',
  'DELETE /v1/approval-webhook': 'admin',
  'GET /v1/approval-webhook/deliveries': 'admin',
  'POST /v1/runs/:id/approvals/:executionId': 'operate',
  'GET /v1/policy': 'read',
  'PUT /v1/policy': 'admin',
  // Keel as an MCP server; calling an agent tool needs `submit` too (checked per call).
  'POST /v1/mcp': 'read',
};

/** Whether a path belongs to the tenant API (a tenant key authenticates it). */
export function isTenantPath(path: string): boolean {
  return path.startsWith('/v1/') && !path.startsWith('/v1/admin/');
}

/** The scope a tenant route needs; HEAD is answered by the GET route. */
export function routeScope(method: string, url: string): Scope | undefined {
  return ROUTE_SCOPES[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}

/**
 * Called for each route as it is registered: a visible tenant route with no declared scope is a
 * programmer error, refused at start; one with a scope documents its 403.
 */
export function declareScope(route: RouteOptions): void {
  if (!isTenantPath(route.url) || route.schema?.hide === true) return;
  let scope: Scope | undefined;
  for (const method of [route.method].flat()) {
    scope = routeScope(method, route.url);
    if (scope === undefined)
      throw new Error(
        `${method} ${route.url} declares no scope: add it to ROUTE_SCOPES in src/api/route-scopes.ts`,
      );
  }
  const response = route.schema?.response as Record<string, unknown> | undefined;
  if (response === undefined || '403' in response) return;
  route.schema = {
    ...route.schema,
    response: {
      ...response,
      403: errorResponse(`forbidden_scope: the API key lacks the ${scope} scope`),
    },
  };
}

/** Throws 403 forbidden_scope unless the key holds the scope. */
export function requireScope(identity: Identity, scope: Scope, what: string): void {
  if (identity.key.scopes.includes(scope)) return;
  throw new KeelError(
    'forbidden_scope',
    `${what} needs an API key with the ${scope} scope; key ${identity.key.id} has ${identity.key.scopes.join(', ') || 'none'}`,
    { details: { needed: scope, scopes: identity.key.scopes } },
  );
}
