// Who may do what: the scopes an API key carries, the key and actor records, and the audit log's
// entries. Vocabulary only: the API checks scopes (src/api/route-scopes.ts), the store keeps keys
// and entries; nothing here reads a request or a database.

/**
 * What a tenant API key may do: `submit` new work (runs, schedules), `read` anything of its
 * tenant, `operate` on existing work (cancel, input, resolve, rerun, reset, fork, retry, migrate),
 * `admin` the tenant (its keys and its audit log). Scopes are independent: `admin` implies no other.
 */
export const SCOPES = ['submit', 'read', 'operate', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** A tenant's API key as stored: never its secret, which is kept only as a SHA-256 hash. */
export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  name: string;
  scopes: Scope[];
  createdAt: number;
  /** After this time (ms) the key is refused; null: never. */
  expiresAt: number | null;
  /** Last time a request used the key (written at most once a minute per key and process). */
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** Requests a minute the key may make through each API process; null: the process's default. */
  requestsPerMinute: number | null;
}

export interface NewApiKey {
  tenantId: string;
  name: string;
  scopes: readonly Scope[];
  expiresAt: number | null;
  keyHash: string;
  /** Requests a minute through each API process; null or absent: the process's default. */
  requestsPerMinute?: number | null;
}

/**
 * A named platform admin (not a tenant's): authenticates with its own key, so the audit log says
 * which admin did what. KEEL_ADMIN_KEY is the root admin, `platform-admin`, and is not stored.
 */
export interface AdminPrincipalRecord {
  id: string;
  name: string;
  createdAt: number;
  revokedAt: number | null;
}

/**
 * Who did something: a tenant's key, a platform admin (the root key, id null, or a named
 * principal), a run's delegated token (id: the run, name: the tool call it was minted for), or
 * Keel itself.
 */
export type Actor =
  | { type: 'key'; id: string; name: string }
  | { type: 'delegated'; id: string; name: string }
  | { type: 'admin'; id: string | null; name: string }
  | { type: 'system'; id: null; name: null };

/** The root platform admin: whoever holds KEEL_ADMIN_KEY. */
export const PLATFORM_ADMIN: Actor = { type: 'admin', id: null, name: 'platform-admin' };

/** One entry of a tenant's append-only audit log. */
export interface AuditEntry {
  id: number;
  tenantId: string;
  at: number;
  actor: Actor;
  /** What was done, e.g. `run.cancel`, `key.create`, or a store record such as `stale_commit`. */
  action: string;
  /** On what, e.g. `run:run_…`, `key:key_…`, `tenant:ten_…`; null when nothing in particular. */
  resource: string | null;
  runId: string | null;
  /** `ok`, or the error code the request was refused with. */
  outcome: string;
  data: Record<string, unknown>;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at' | 'runId'> & { runId?: string | null };

export interface AuditFilter {
  action?: string;
  resource?: string;
  /** Entries at or after this time (ms). */
  since?: number;
  /** Entries before this time (ms). */
  until?: number;
  /** Entries older than this id (the previous page's last). */
  beforeId?: number;
  limit: number;
}

/**
 * One entry of the platform audit log: a platform admin's state-changing request, admitted or
 * refused, with the tenant it concerned (null for platform-wide actions such as admin principals).
 */
export interface PlatformAuditEntry {
  id: number;
  at: number;
  actor: Actor;
  /** What was done, e.g. `tenant.create`, `admin_principal.revoke`. */
  action: string;
  resource: string | null;
  tenantId: string | null;
  /** `ok`, or the error code the request was refused with. */
  outcome: string;
  data: Record<string, unknown>;
}

export type NewPlatformAuditEntry = Omit<PlatformAuditEntry, 'id' | 'at'>;

export interface PlatformAuditFilter extends AuditFilter {
  tenantId?: string;
  /** A named principal's id (`adm_…`). */
  actorId?: string;
}

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}
