// The operator check for every admin-only route (/v1/admin/*, GET /metrics, the operator's
// dashboard data). A platform admin is the root key KEEL_ADMIN_KEY (compared in constant time; the
// actor `platform-admin`) or a named principal with its own key (admin_principals, made through
// /v1/admin/principals), looked up once per admin request by the server's hook before the route's
// check. Remembers who each admitted request was, so the audit log names the admin.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { PLATFORM_ADMIN, type Actor } from '../domain/access.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { Store } from '../store/store.ts';
import { bearerToken, hashApiKey } from './auth.ts';

/** Named principals' keys begin with this (tenant keys with `keel_`): the two never mix. */
export const ADMIN_KEY_PREFIX = 'keeladm_';

const principals = new WeakMap<FastifyRequest, Actor>();
const admitted = new WeakMap<FastifyRequest, Actor>();
/** Revoked principals whose request was refused: the platform audit log names them. */
const refused = new WeakMap<FastifyRequest, Actor>();

/** The platform admin authorizeAdmin let this request through as, if any. */
export function adminActorOf(request: FastifyRequest): Actor | undefined {
  return admitted.get(request);
}

/** The admin this request was admitted as, or the revoked principal it was refused as. */
export function adminAttemptOf(request: FastifyRequest): Actor | undefined {
  return admitted.get(request) ?? refused.get(request);
}

/**
 * The server's hook on admin-surface requests: a bearer key of a named principal makes the
 * request that principal's (a revoked one is refused here); any other key is left to
 * authorizeAdmin's root-key check.
 */
export async function resolveAdminPrincipal(store: Store, request: FastifyRequest): Promise<void> {
  const token = bearerToken(request);
  if (token === undefined || !token.startsWith(ADMIN_KEY_PREFIX)) return;
  const principal = await store.findAdminPrincipal(hashApiKey(token));
  if (principal === null) return;
  if (principal.revokedAt !== null) {
    refused.set(request, { type: 'admin', id: principal.id, name: principal.name });
    throw new KeelError(
      'admin_principal_revoked',
      `the platform admin ${principal.name} (${principal.id}) was revoked`,
    );
  }
  principals.set(request, { type: 'admin', id: principal.id, name: principal.name });
}

export function authorizeAdmin(request: FastifyRequest, adminKey: string | undefined): void {
  const principal = principals.get(request);
  if (principal !== undefined) {
    admitted.set(request, principal);
    return;
  }
  if (adminKey === undefined)
    throw new KeelError(
      'admin_disabled',
      'admin routes are disabled: set KEEL_ADMIN_KEY, or use the key of a named platform admin',
    );
  const token = bearerToken(request);
  // Hashes have equal lengths, so timingSafeEqual never throws and the comparison leaks nothing
  // about the key.
  const same = timingSafeEqual(
    Buffer.from(hashApiKey(token ?? '')),
    Buffer.from(hashApiKey(adminKey)),
  );
  if (token === undefined || !same)
    throw new KeelError(
      'unauthorized',
      'admin routes need Authorization: Bearer <KEEL_ADMIN_KEY or a platform admin’s key>',
    );
  admitted.set(request, PLATFORM_ADMIN);
}
