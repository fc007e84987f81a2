// The dashboard's HTTP client: every call carries the API key (kept in sessionStorage, so it dies
// with the tab) as a bearer token; a 401 signs the user out. Types mirror the /v1 wire schemas in
// src/api/schemas.ts.
const KEY_STORAGE = 'keel.apiKey';
const ROLE_STORAGE = 'keel.role';

/**
 * A tenant key sees its runs; the admin key (KEEL_ADMIN_KEY) sees every tenant's usage and no runs.
 */
export type Role = 'tenant' | 'admin';

export type RunStatus =
  | 'queued'
  | 'running'
  | 'waiting'
  | 'cancelling'
  | 'succeeded'
  | 'failed'
  | 'cancelled';
export const RUN_STATUSES: readonly RunStatus[] = [
  'queued',
  'running',
  'waiting',
  'cancelling',
  'succeeded',
  'failed',
  'cancelled',
];
export const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

export interface Run {
  id: string;
  tenantId: string;
  agent: string;
  agentVersion: string;
  status: RunStatus;
  stateVersion: number;
  priority: string;
  input: unknown;
  result?: unknown;
  error: { code: string; message: string; details?: unknown } | null;
  outcome: string | null;
  waitingReason: string | null;
  waitingSince: string | null;
  wakeAt: string | null;
  budget: Record<string, number>;
  counters: { steps: number; inputTokens: number; outputTokens: number; costUsd: number };
  parentRunId: string | null;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
  deadlineAt: string | null;
  /**
   * Deadline-aware admission's estimate of its finish (absent from servers older than issue 27).
   */
  expectedFinishAt?: string | null;
  /** Lineage (absent from servers older than issue 17): the run this one reruns. */
  rerunOf?: string | null;
  /** Lineage: the run (and journal position) this one was reset or forked from. */
  resetFrom?: { runId: string; position: number } | null;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Step {
  seq: number;
  kind: string;
  name: string;
  status: string;
  attempts: number;
  executionId: string | null;
  effectClass: string | null;
  queuedAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  deadlineAt: string | null;
  error?: { code?: string; message?: string } | unknown;
  /** What the step received and returned (absent from servers older than issue 17). */
  input?: Json;
  output?: Json;
  /** The value shown is cut short: GET /v1/runs/:id/steps/:seq has it whole. */
  inputTruncated?: boolean;
  outputTruncated?: boolean;
}

/** Where a reset or fork starts: the journal is kept up to and including `position`. */
export interface ForkRequest {
  position?: number;
  input?: unknown;
  agentVersion?: string;
}

/** A 404 from a route this server does not have (an older Keel), not from a missing run. */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && error.code === 'not_found';
}

export interface RunEvent {
  seq: number;
  type: string;
  at: string;
  data: unknown;
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

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

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

export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; key?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers: {
      ...authHeaders(init.key ?? apiKey.get()),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    ...(init.signal !== undefined ? { signal: init.signal } : {}),
  });
  const text = await response.text();
  const body = text.length > 0 ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | null)?.error;
    if (response.status === 401 && init.key === undefined) signOut();
    throw new ApiError(
      response.status,
      error?.code ?? 'http_error',
      error?.message ?? `HTTP ${response.status}`,
    );
  }
  return body as T;
}

export const runsApi = {
  list: (q: { status?: string; agent?: string; cursor?: string; limit?: number }) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q))
      if (v !== undefined && v !== '') params.set(k, String(v));
    return api<{ runs: Run[]; nextCursor: string | null }>(`/v1/runs?${params}`);
  },
  get: (id: string) => api<Run>(`/v1/runs/${encodeURIComponent(id)}`),
  steps: (id: string) => api<{ steps: Step[] }>(`/v1/runs/${encodeURIComponent(id)}/steps`),
  /** One step with its input and output whole (never truncated). */
  step: (id: string, seq: number) =>
    api<{ step: Step }>(`/v1/runs/${encodeURIComponent(id)}/steps/${seq}`),
  /** A new run with the same agent, version and input. */
  rerun: (id: string) =>
    api<Run>(`/v1/runs/${encodeURIComponent(id)}/rerun`, { method: 'POST', body: {} }),
  /** A new run that reuses this run's journal up to `position` and executes from there. */
  reset: (id: string, position: number) =>
    api<Run>(`/v1/runs/${encodeURIComponent(id)}/reset`, { method: 'POST', body: { position } }),
  /** A reset with another input and/or agent version. */
  fork: (id: string, body: ForkRequest) =>
    api<Run>(`/v1/runs/${encodeURIComponent(id)}/fork`, { method: 'POST', body }),
  create: (agent: string, input: unknown) =>
    api<Run>('/v1/runs', { method: 'POST', body: { agent, input } }),
  cancel: (id: string) => api<Run>(`/v1/runs/${encodeURIComponent(id)}/cancel`, { method: 'POST' }),
  input: (id: string, key: string, value: unknown) =>
    api<Run>(`/v1/runs/${encodeURIComponent(id)}/input`, { method: 'POST', body: { key, value } }),
  resolve: (
    id: string,
    executionId: string,
    body: {
      action: 'retry' | 'succeeded' | 'failed';
      result?: unknown;
      error?: { message: string };
    },
  ) =>
    api<Run>(
      `/v1/runs/${encodeURIComponent(id)}/executions/${encodeURIComponent(executionId)}/resolve`,
      { method: 'POST', body },
    ),
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
