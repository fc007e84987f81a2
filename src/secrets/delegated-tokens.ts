// Mints and checks per-run delegated tokens: `kdt_<claims>.<signature>`, the claims base64url JSON
// and the signature HMAC-SHA256 of everything before the dot under the deployment's delegation key.
//
// Why an HMAC-signed compact token rather than a stored one: minting costs no write on the tool
// call's hot path (one per call would double the commits of a tool-heavy run), and checking costs
// no lookup of the token itself; the one lookup the API makes is of the run, which it needs anyway
// to refuse a token whose run has ended (the implicit revocation: a token is only as live as its
// run). Why a symmetric key rather than key pairs: the minter and the checker are the same
// deployment. The key is KEEL_DELEGATION_KEY when configured, else one the deployment generates
// once and keeps in the store (0032), so every process on one Postgres checks the others' tokens.
// Never logs a token or the key; a token is never journaled (it lives only in the tool's context).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  isDelegatedScope,
  type DelegatedScope,
  type DelegationClaims,
  type DelegationIssuer,
} from '../domain/delegation.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { Store } from '../store/store.ts';

export const DELEGATED_TOKEN_PREFIX = 'kdt_';
/** A delegation key is this many random bytes (given as base64 or hex in KEEL_DELEGATION_KEY). */
export const DELEGATION_KEY_BYTES = 32;
/** The name of the generated key in the store's deployment keys. */
const STORED_KEY_NAME = 'delegation';
/** Longer tokens are refused before any parsing (a bound on the work a bad header causes). */
const TOKEN_MAX_CHARS = 4096;

export interface DelegatedTokenOptions {
  key: Buffer;
  /** The audience minted into tokens and required of tokens checked. */
  audience: string;
  ttlMs: number;
}

/** Whether a bearer token is a delegated token (not a tenant or admin key). */
export function isDelegatedToken(token: string): boolean {
  return token.startsWith(DELEGATED_TOKEN_PREFIX);
}

export class DelegatedTokens {
  readonly #key: Buffer;
  readonly audience: string;
  readonly ttlMs: number;

  constructor(options: DelegatedTokenOptions) {
    if (options.key.length < DELEGATION_KEY_BYTES)
      throw new KeelError(
        'config_invalid',
        `the delegation key must be at least ${DELEGATION_KEY_BYTES} bytes`,
      );
    this.#key = options.key;
    this.audience = options.audience;
    this.ttlMs = options.ttlMs;
  }

  /** A token for one tool call of a run, valid for ttlMs from `now` (and while the run is live). */
  mint(
    grant: { tenantId: string; runId: string; executionId: string; scopes: DelegatedScope[] },
    now: number,
  ): { token: string; claims: DelegationClaims } {
    const claims: DelegationClaims = {
      audience: this.audience,
      ...grant,
      issuedAt: now,
      expiresAt: now + this.ttlMs,
    };
    const body = Buffer.from(
      JSON.stringify({
        v: 1,
        aud: claims.audience,
        ten: claims.tenantId,
        run: claims.runId,
        exe: claims.executionId,
        scp: claims.scopes,
        iat: claims.issuedAt,
        exp: claims.expiresAt,
      }),
    ).toString('base64url');
    const signed = `${DELEGATED_TOKEN_PREFIX}${body}`;
    return { token: `${signed}.${this.#sign(signed)}`, claims };
  }

  /**
   * The claims of a token this deployment signed, for this audience, not expired at `now`; throws
   * 401 `delegated_token_invalid` (malformed or forged), `delegated_token_audience` or
   * `delegated_token_expired`. Whether its run is still live is the caller's check.
   */
  verify(token: string, now: number): DelegationClaims {
    const invalid = () =>
      new KeelError(
        'delegated_token_invalid',
        'the delegated token is malformed or not signed by this deployment',
      );
    if (!isDelegatedToken(token) || token.length > TOKEN_MAX_CHARS) throw invalid();
    const dot = token.lastIndexOf('.');
    if (dot < 0) throw invalid();
    const signed = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.#sign(signed), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    const claims = parseClaims(signed.slice(DELEGATED_TOKEN_PREFIX.length));
    if (claims === undefined) throw invalid();
    if (claims.audience !== this.audience)
      throw new KeelError(
        'delegated_token_audience',
        `the delegated token is for ${claims.audience}, not this API (${this.audience})`,
      );
    if (claims.expiresAt <= now)
      throw new KeelError(
        'delegated_token_expired',
        `the delegated token of run ${claims.runId} expired at ${new Date(claims.expiresAt).toISOString()}`,
      );
    return claims;
  }

  #sign(signed: string): string {
    return createHmac('sha256', this.#key).update(signed).digest('base64url');
  }
}

function parseClaims(body: string): DelegationClaims | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const c = raw as Record<string, unknown>;
  const text = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
  if (c.v !== 1 || !text(c.aud) || !text(c.ten) || !text(c.run) || !text(c.exe)) return undefined;
  if (typeof c.iat !== 'number' || typeof c.exp !== 'number') return undefined;
  if (!Array.isArray(c.scp) || !c.scp.every(isDelegatedScope)) return undefined;
  return {
    audience: c.aud,
    tenantId: c.ten,
    runId: c.run,
    executionId: c.exe,
    scopes: c.scp,
    issuedAt: c.iat,
    expiresAt: c.exp,
  };
}

/**
 * The deployment's delegation key: the configured one (base64 or hex of at least 32 bytes), else
 * the one stored in the store, generated by the first process that asked.
 */
export async function delegationKey(store: Store, configured: string | undefined): Promise<Buffer> {
  if (configured !== undefined) return decodeKey(configured);
  const stored = await store.deploymentKey(
    STORED_KEY_NAME,
    randomBytes(DELEGATION_KEY_BYTES).toString('base64'),
  );
  return decodeKey(stored);
}

function decodeKey(text: string): Buffer {
  const key =
    /^[0-9a-f]+$/i.test(text) && text.length % 2 === 0
      ? Buffer.from(text, 'hex')
      : Buffer.from(text, 'base64');
  if (key.length < DELEGATION_KEY_BYTES)
    throw new KeelError(
      'config_invalid',
      `KEEL_DELEGATION_KEY must be base64 or hex of at least ${DELEGATION_KEY_BYTES} random bytes`,
    );
  return key;
}

/**
 * The engine's issuer over these tokens: each tool call that asks gets its own credential. Its
 * `token` is minted again once less than half its lifetime is left, so a tool running longer than
 * the TTL reads a live token each time it calls (a leaked one still expires); `apiUrl` is read at
 * each call too (the API's address is known once it listens).
 */
export function delegationIssuer(
  tokens: DelegatedTokens,
  apiUrl: () => string | undefined,
  now: () => number = Date.now,
): DelegationIssuer {
  return {
    issue(grant) {
      let current = tokens.mint(grant, now());
      const fresh = () => {
        const at = now();
        if (current.claims.expiresAt - at < tokens.ttlMs / 2) current = tokens.mint(grant, at);
        return current;
      };
      return {
        get token() {
          return fresh().token;
        },
        get expiresAt() {
          return fresh().claims.expiresAt;
        },
        get apiUrl() {
          return apiUrl();
        },
        scopes: current.claims.scopes,
      };
    },
  };
}
