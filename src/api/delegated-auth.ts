// Admits requests made with a per-run delegated token (src/secrets/delegated-tokens.ts): checks the
// signature, audience and expiry, then that the token's run is still live (a token ends with its
// run: the revocation needs no list), and lets it reach only the few routes its scopes name, on its
// own run (reads also on the children it started). Everything else is 403 `delegated_forbidden`;
// another run is 404 like a missing one. Never logs a token.
import type { ApiKeyRecord } from '../domain/access.ts';
import type { DelegatedScope, DelegationClaims } from '../domain/delegation.ts';
import { KeelError } from '../domain/keel-error.ts';
import { isTerminal } from '../domain/run-status.ts';
import type { DelegatedTokens } from '../secrets/delegated-tokens.ts';
import type { Store } from '../store/store.ts';
import type { Identity } from './auth.ts';

/** `METHOD url` → the delegated scope it needs; a route not listed is refused to every token. */
export const DELEGATED_ROUTES: Readonly<Record<string, DelegatedScope>> = {
  'POST /v1/runs': 'runs:child',
  'GET /v1/runs/:id': 'runs:read-self',
  'GET /v1/runs/:id/tree': 'runs:read-self',
  'GET /v1/runs/:id/steps': 'runs:read-self',
  'GET /v1/runs/:id/steps/:seq': 'runs:read-self',
  'GET /v1/runs/:id/attempts': 'runs:read-self',
  'GET /v1/runs/:id/events': 'runs:read-self',
  'GET /v1/runs/:id/result': 'runs:read-self',
  'GET /v1/runs/:id/shared': 'artifacts',
  'GET /v1/runs/:id/shared/*': 'artifacts',
};

/** The route a request is for, as DELEGATED_ROUTES names it (HEAD as GET). */
export function delegatedRouteScope(method: string, url: string): DelegatedScope | undefined {
  return DELEGATED_ROUTES[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}

/**
 * The identity a delegated token stands for: its run's tenant, a stand-in key named after the run
 * (what rate limits count by), and the claims. 401 when the token is bad or its run has ended.
 */
export async function authenticateDelegated(
  store: Store,
  tokens: DelegatedTokens | undefined,
  token: string,
): Promise<Identity> {
  if (tokens === undefined)
    throw new KeelError('delegated_token_invalid', 'this API accepts no delegated tokens');
  const now = Date.now();
  const claims = tokens.verify(token, now);
  const run = await store.getRun(claims.runId);
  // Cancelling counts as ended: a child started now would outlive its parent.
  if (
    run === null ||
    run.tenantId !== claims.tenantId ||
    isTerminal(run.status) ||
    run.status === 'cancelling'
  )
    throw new KeelError(
      'delegated_token_revoked',
      `run ${claims.runId} has ended: its delegated tokens are refused`,
    );
  const tenant = await store.getTenant(claims.tenantId);
  if (tenant === null)
    throw new KeelError('delegated_token_revoked', `the tenant of run ${claims.runId} is gone`);
  return { tenant, key: standInKey(claims), delegation: claims };
}

/**
 * Throws unless the token may call this route with these parameters: 403 `delegated_forbidden` for
 * a route outside its scopes, 404 `run_not_found` for a run that is not its own (nor, for reads, a
 * child it started).
 */
export async function admitDelegated(
  store: Store,
  claims: DelegationClaims,
  request: { method: string; url: string | undefined; params: unknown },
): Promise<void> {
  const route = `${request.method} ${request.url ?? '(no route)'}`;
  const scope =
    request.url === undefined ? undefined : delegatedRouteScope(request.method, request.url);
  if (scope === undefined || !claims.scopes.includes(scope))
    throw new KeelError(
      'delegated_forbidden',
      `a delegated token (scopes ${claims.scopes.join(', ')}) cannot call ${route}`,
      { details: { needed: scope ?? null, scopes: claims.scopes } },
    );
  const id = (request.params as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string' || id === claims.runId) return;
  if (scope === 'runs:read-self') {
    const child = await store.getRun(id);
    if (child !== null && child.tenantId === claims.tenantId && child.parentRunId === claims.runId)
      return;
  }
  throw new KeelError('run_not_found', `run ${id} not found`);
}

/** 403 for a delegated token on the admin surface: it never speaks for a platform admin. */
export function refuseDelegatedAdmin(route: string): never {
  throw new KeelError('delegated_forbidden', `a delegated token cannot call ${route}`, {
    details: { needed: null },
  });
}

function standInKey(claims: DelegationClaims): ApiKeyRecord {
  return {
    id: `run:${claims.runId}`,
    tenantId: claims.tenantId,
    name: `delegated token of run ${claims.runId}`,
    scopes: [],
    createdAt: claims.issuedAt,
    expiresAt: claims.expiresAt,
    lastUsedAt: null,
    revokedAt: null,
    requestsPerMinute: null,
  };
}
