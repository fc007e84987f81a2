// The operator check for every admin-only route (/v1/admin/*, GET /metrics, the operator's
// dashboard data): Authorization: Bearer <KEEL_ADMIN_KEY>, compared in constant time; with no admin
// key configured they are disabled. Remembers which requests it let through, so the audit log can
// name the platform admin as their actor.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { KeelError } from '../domain/keel-error.ts';
import { bearerToken, hashApiKey } from './auth.ts';

const admitted = new WeakSet<FastifyRequest>();

/** Whether authorizeAdmin let this request through (it was made by the platform admin). */
export function isAdminRequest(request: FastifyRequest): boolean {
  return admitted.has(request);
}

export function authorizeAdmin(request: FastifyRequest, adminKey: string | undefined): void {
  if (adminKey === undefined)
    throw new KeelError(
      'admin_disabled',
      'admin routes are disabled: set KEEL_ADMIN_KEY to enable them',
    );
  const token = bearerToken(request);
  // Hashes have equal lengths, so timingSafeEqual never throws and the comparison leaks nothing
  // about the key.
  const same = timingSafeEqual(
    Buffer.from(hashApiKey(token ?? '')),
    Buffer.from(hashApiKey(adminKey)),
  );
  if (token === undefined || !same)
    throw new KeelError('unauthorized', 'admin routes need Authorization: Bearer <KEEL_ADMIN_KEY>');
  admitted.add(request);
}
