// The dashboard's HTTP client: keel/client (src/client/, the client the CLI and applications use)
// for runs, plus `api()` for the dashboard's own read routes. Every call carries the API key (kept
// in sessionStorage, so it dies with the tab) as a bearer token; a 401 signs the user out. Types
// are keel/client's where it has them, else they mirror the /v1 wire schemas in src/api/schemas.ts.
import {
  createKeelClient,
  KeelApiError,
  type ForkRequest,
  type Json,
  type KeelRuns,
  type Resolution,
} from '../../src/client/index.ts';

export type {
  ForkRequest,
  Json,
  Run,
  RunEvent,
  RunStatus,
  RunTree,
  RunTreeNode,
  Step,
} from '../../src/client/index.ts';
export { RUN_STATUSES } from '../../src/client/index.ts';
/** An API answer that is not a success: the API's stable `code`, the status and the message. */
export { KeelApiError as ApiError };
const KEY_STORAGE = 'keel.apiKey';
const ROLE_STORAGE = 'keel.role';

/**
 * A tenant key sees its runs; the admin key (KEEL_ADMIN_KEY) sees every tenant's usage and no runs.
 */
export type Role = 'tenant' | 'admin';

export const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

/** A 404 from a route this server does not have (an older Keel), not from a missing run. */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof KeelApiError && error.status === 404 && error.code === 'not_found';
}

export interface AgentUsage {
  agent: string;
  runs: number;
  byStatus: Record<string, number>;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  succeeded: number;
  costPerSuccessUsd: number | null;
}

export type Availability<T> = ({ available: true } & T) | { available: false; reason: string };

export interface TenantOverview {
  tenant: { id: string; name: string };
  agents: Array<{ name: string; version: string }>;
  totals: Omit<AgentUsage, 'agent'>;
  usage: AgentUsage[];
  quotas: Availability<{
    maxConcurrentRuns: number | null;
    requestsPerMinute: number | null;
    tokensPerMinute: number | null;
    weight: number | null;
  }>;
}

export interface QueueRow {
  agent: string;
  queued: number;
  running: number;
  waiting: number;
  cancelling: number;
  oldestQueuedAgeMs: number | null;
  oldestWaitingAgeMs: number | null;
}

export interface PoolsOverview {
  at: string;
  runQueues: QueueRow[];
  throughput: {
    bucketMs: number;
    since: string;
    buckets: Array<{ start: string; succeeded: number; failed: number; cancelled: number }>;
  };
  pools: Availability<{
    pools: Array<{
      name: string;
      kind: string;
      queued: number;
      running: number;
      concurrency: number | null;
      oldestQueuedAgeMs: number | null;
      state?: string;
    }>;
  }>;
}

export type NodesOverview = Availability<{
  nodes: Array<{
    id: string;
    isolation: string;
    state: string;
    slotsUsed: number;
    slotsTotal: number;
    memoryUsedBytes: number | null;
    memoryTotalBytes: number | null;
    lastSeenAt: string;
  }>;
}>;

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  role: (): Role => (sessionStorage.getItem(ROLE_STORAGE) === 'admin' ? 'admin' : 'tenant'),
  set: (key: string, role: Role) => {
    sessionStorage.setItem(KEY_STORAGE, key);
    sessionStorage.setItem(ROLE_STORAGE, role);
  },
  clear: () => {
    sessionStorage.removeItem(KEY_STORAGE);
    sessionStorage.removeItem(ROLE_STORAGE);
  },
};

const signOutListeners = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signOutListeners.add(listener);
  return () => signOutListeners.delete(listener);
}
export function signOut(): void {
  apiKey.clear();
  for (const listener of signOutListeners) listener();
}

export function authHeaders(key = apiKey.get()): Record<string, string> {
  return key === null ? {} : { authorization: `Bearer ${key}` };
}

/** keel/client for this page's origin, with the signed-in key. */
export const keel = createKeelClient({ baseUrl: '', apiKey: () => apiKey.get() ?? undefined });

/** Runs `call`; a 401 (the key was revoked or expired) signs the user out. */
async function signedIn<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof KeelApiError && error.status === 401) signOut();
    throw error;
  }
}

/** A JSON request to a dashboard route; `key` tries a key other than the signed-in one. */
export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; key?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const request = keel.http.json<T>(init.method ?? 'GET', path, {
    ...(init.key !== undefined ? { headers: authHeaders(init.key) } : {}),
    ...(init.body !== undefined ? { body: init.body } : {}),
    ...(init.signal !== undefined ? { signal: init.signal } : {}),
  });
  return init.key === undefined ? signedIn(request) : request;
}

const runs: KeelRuns = keel.runs;

export const runsApi = {
  list: (q: { status?: string; agent?: string; cursor?: string; limit?: number }) =>
    signedIn(
      runs.list(
        Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined && v !== '')),
      ),
    ),
  get: (id: string) => signedIn(runs.get(id)),
  /** The run and its descendants, breadth first. */
  tree: (id: string) => signedIn(runs.tree(id)),
  steps: async (id: string) => ({ steps: await signedIn(runs.steps(id)) }),
  /** One step with its input and output whole (never truncated). */
  step: async (id: string, seq: number) => ({ step: await signedIn(runs.step(id, seq)) }),
  /** A new run with the same agent, version and input. */
  rerun: (id: string) => signedIn(runs.rerun(id)),
  /** A new run that reuses this run's journal up to `position` and executes from there. */
  reset: (id: string, position: number) => signedIn(runs.reset(id, { position })),
  /** A reset with another input and/or agent version. */
  fork: (id: string, body: ForkRequest) => signedIn(runs.fork(id, body)),
  create: (agent: string, input: unknown) => signedIn(runs.create({ agent, input })),
  cancel: (id: string) => signedIn(runs.cancel(id)),
  input: (id: string, key: string, value: unknown) => signedIn(runs.sendInput(id, key, value)),
  resolve: (id: string, executionId: string, body: Resolution) =>
    signedIn(runs.resolve(id, executionId, body)),
};

export interface TenantRow extends Omit<AgentUsage, 'agent'> {
  id: string;
  name: string;
  createdAt: string;
  oldestQueuedAgeMs: number | null;
  quotas: TenantOverview['quotas'];
}

export const dashboardApi = {
  allTenants: (key?: string) =>
    api<{ tenants: TenantRow[] }>('/v1/admin/dashboard/tenants', key !== undefined ? { key } : {}),
  tenant: (key?: string) =>
    api<TenantOverview>('/v1/dashboard/tenant', key !== undefined ? { key } : {}),
  pools: (minutes: number) => api<PoolsOverview>(`/v1/dashboard/pools?minutes=${minutes}`),
  nodes: () => api<NodesOverview>('/v1/dashboard/nodes'),
};

/** A request for a human decision on one tool call (GET /v1/approvals; src/api/schemas.ts). */
export interface Approval {
  runId: string;
  executionId: string;
  seq: number;
  agent: string;
  tool: string;
  args: Json;
  argsHash: string;
  risk: string;
  rule: string;
  reason: string;
  status: 'pending' | 'approved' | 'denied' | 'expired';
  requestedAt: string;
  expiresAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
  note: string | null;
}

export const approvalsApi = {
  pending: (signal?: AbortSignal) =>
    api<{ approvals: Approval[]; nextCursor: string | null }>('/v1/approvals?limit=200', {
      ...(signal !== undefined ? { signal } : {}),
    }),
  /** Decides the call the approver saw: bound to its argsHash (409 approval_mismatch otherwise). */
  decide: (a: Approval, decision: 'approve' | 'deny', note: string) =>
    api<Approval>(
      `/v1/runs/${encodeURIComponent(a.runId)}/approvals/${encodeURIComponent(a.executionId)}`,
      {
        method: 'POST',
        body: { decision, argsHash: a.argsHash, ...(note.trim() === '' ? {} : { note }) },
      },
    ),
};
