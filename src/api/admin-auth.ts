// The operator check for every admin-only route (/v1/admin/*, GET /metrics, the operator's
// dashboard data): Authorization: Bearer <KEEL_ADMIN_KEY>, compared in constant time; with no admin
// key configured they are disabled.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { KeelError } from '../domain/keel-error.ts';
import { bearerToken, hashApiKey } from './auth.ts';

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
}
