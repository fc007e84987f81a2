// API keys: bearer tokens, stored only as SHA-256 hashes. Resolves a request's identity (its
// tenant and key), refusing unknown, revoked and expired keys at once (a lookup per request, no
// cache to outlive a revocation), and stamps a key's last use at most once a minute per key and
// process (not a write per request). Never logs a key.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../domain/access.ts';
import type { DelegationClaims } from '../domain/delegation.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { TenantRecord } from '../domain/records.ts';
import type { Store } from '../store/store.ts';

export const API_KEY_PREFIX = 'keel_';
/** A key's last-used time is written at most this often per key and process. */
export const KEY_LAST_USED_INTERVAL_MS = 60_000;
/** Keys whose last stamp this process remembers; past it the oldest are forgotten (bounded). */
const LAST_USED_REMEMBERED_KEYS_MAX = 10_000;

/**
 * Who made a request: the tenant and the key it authenticated with; for a per-run delegated token
 * (delegated-auth.ts), a stand-in key named after the run, and the token's claims.
 */
export interface Identity {
  tenant: TenantRecord;
  key: ApiKeyRecord;
  delegation?: DelegationClaims;
}

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

/**
 * Stamps keys' last use, at most once per KEY_LAST_USED_INTERVAL_MS per key: a stamp failing is
 * logged by the caller's `onError`, never fails the request.
 */
export class LastUsedStamps {
  readonly #stampedAt = new Map<string, number>();
  readonly #store: Store;
  readonly #onError: (error: unknown) => void;

  constructor(store: Store, onError: (error: unknown) => void) {
    this.#store = store;
    this.#onError = onError;
  }

  used(key: ApiKeyRecord, now: number): void {
    const last = this.#stampedAt.get(key.id) ?? key.lastUsedAt ?? 0;
    if (now - last < KEY_LAST_USED_INTERVAL_MS) return;
    this.#stampedAt.delete(key.id); // re-inserted last: the map's order is oldest stamp first
    this.#stampedAt.set(key.id, now);
    if (this.#stampedAt.size > LAST_USED_REMEMBERED_KEYS_MAX)
      this.#stampedAt.delete(this.#stampedAt.keys().next().value!);
    this.#store.touchApiKey(key.id).catch(this.#onError);
  }
}

export async function authenticateKey(
  store: Store,
  request: FastifyRequest,
  stamps?: LastUsedStamps,
): Promise<Identity> {
  const token = bearerToken(request);
  if (token === undefined)
    throw new KeelError('unauthorized', 'missing API key: send Authorization: Bearer <key>');
  const found = await store.findApiKey(hashApiKey(token));
  if (found === null) throw new KeelError('unauthorized', 'the API key is not recognised');
  const now = Date.now();
  if (found.key.revokedAt !== null)
    throw new KeelError('key_revoked', `the API key ${found.key.id} was revoked`);
  if (found.key.expiresAt !== null && found.key.expiresAt <= now)
    throw new KeelError('key_expired', `the API key ${found.key.id} has expired`);
  stamps?.used(found.key, now);
  return found;
}

export async function authenticateTenant(
  store: Store,
  request: FastifyRequest,
): Promise<TenantRecord> {
  return (await authenticateKey(store, request)).tenant;
}
