// Per-run delegated tokens: the vocabulary. What a token a run's tool call holds may do (its
// scopes), what it says (its claims), and what a tool receives. Vocabulary only: the token is
// signed and checked in src/secrets/delegated-tokens.ts, admitted by the API in
// src/api/delegated-auth.ts; nothing here reads a key, a request or a database.

/**
 * What a delegated token may do, always on behalf of its run and nothing else:
 * `runs:read-self` reads the run (and the children it started), `runs:child` starts a child run of
 * it (POST /v1/runs), `artifacts` reads its shared space (GET /v1/runs/:id/shared…).
 */
export const DELEGATED_SCOPES = ['runs:read-self', 'runs:child', 'artifacts'] as const;
export type DelegatedScope = (typeof DELEGATED_SCOPES)[number];

/** Default scopes of a tool that asks for delegation without naming any. */
export const DELEGATED_SCOPES_DEFAULT: readonly DelegatedScope[] = DELEGATED_SCOPES;

/** What a delegated token asserts: who it speaks for, to whom, what it may do, until when. */
export interface DelegationClaims {
  /** The API it is for (KEEL_DELEGATION_AUDIENCE): another deployment refuses it. */
  audience: string;
  tenantId: string;
  runId: string;
  /** The tool call the token was minted for (stable across its attempts): named in audit entries. */
  executionId: string;
  scopes: DelegatedScope[];
  issuedAt: number;
  /** After this time (ms) the token is refused. */
  expiresAt: number;
}

/**
 * What a tool that opted in (`delegate` on its definition, or its sandbox profile) receives in
 * `ctx.delegation`: a short-lived bearer token bound to its run and the API to call with it.
 */
export interface ToolDelegation {
  /**
   * `Authorization: Bearer <token>`. A secret: never log it, never put it on a command line. Read
   * it for each request: past half its lifetime it is a freshly minted one (a long call never
   * holds an expired token).
   */
  readonly token: string;
  /** When the current token stops working (ms); every token stops as soon as the run ends. */
  readonly expiresAt: number;
  /** The Keel API's base URL (KEEL_DELEGATION_API_URL, else this process's API); undefined if none. */
  readonly apiUrl: string | undefined;
  readonly scopes: readonly DelegatedScope[];
}

/**
 * What a child started with a delegated token (POST /v1/runs, `onParentEnd`) does when its parent
 * ends: `cancel` (the default, as for a ctx.child child) is cancelled in the parent's end commit;
 * `detach` runs on. `wait` is ctx.child's alone: only the parent's own code can wait for a child it
 * knows, and a tool's child is unknown to the replayed agent.
 */
export const DELEGATED_CHILD_POLICIES = ['cancel', 'detach'] as const;
export type DelegatedChildPolicy = (typeof DELEGATED_CHILD_POLICIES)[number];

/** The variables a sandboxed program of a profile that opted in receives (never on argv). */
export const DELEGATION_ENV = { token: 'KEEL_RUN_TOKEN', apiUrl: 'KEEL_API_URL' } as const;

export function isDelegatedScope(value: unknown): value is DelegatedScope {
  return typeof value === 'string' && (DELEGATED_SCOPES as readonly string[]).includes(value);
}

/**
 * What the engine asks for a delegated credential for one tool call (the runtime backs it with
 * src/secrets/delegated-tokens.ts); absent: tools that opted in get none.
 */
export interface DelegationIssuer {
  issue(grant: {
    tenantId: string;
    runId: string;
    executionId: string;
    scopes: DelegatedScope[];
  }): ToolDelegation;
}
