// API keys: bearer tokens, stored only as SHA-256 hashes. Resolves a request's tenant; never logs a
// key.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { KeelError } from '../domain/keel-error.ts';
import type { TenantRecord } from '../domain/records.ts';
import type { Store } from '../store/store.ts';

export const API_KEY_PREFIX = 'keel_';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export async function authenticateTenant(
  store: Store,
  request: FastifyRequest,
): Promise<TenantRecord> {
  const token = bearerToken(request);
  if (token === undefined)
    throw new KeelError('unauthorized', 'missing API key: send Authorization: Bearer <key>');
  const tenant = await store.findTenantByKeyHash(hashApiKey(token));
  if (tenant === null) throw new KeelError('unauthorized', 'the API key is not recognised');
  return tenant;
}
