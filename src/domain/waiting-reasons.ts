// Why a run is not progressing: the stable codes of `waitingReason`, and the `run.waiting` /
// `run.resumed` events the engine emits when a run starts and stops waiting. Codes are API: never
// rename one, only add.
import type { Json } from './json.ts';

export const WAITING_REASONS = {
  awaiting_worker: 'queued: no worker has claimed it yet (run slots busy, or the next poll)',
  agent_version_unavailable: 'queued: no worker here serves the agent version it is pinned to',
  tenant_concurrency_cap: 'queued: the tenant holds maxConcurrentRuns runs already',
  preempted:
    'queued again: it gave its run slot to interactive work that waited too long, and keeps its journal',
  pool_saturated: 'an effect waits for a slot in its resource pool',
  rate_limited:
    'a model call waits for an RPM/TPM limit (model, tenant or provider account; the detail says which)',
  provider_unavailable:
    'a model call waits because every endpoint of the model and its fallbacks has an open circuit breaker',
  tenant_budget_exhausted:
    'the tenant spent its daily token or cost budget; model calls resume at midnight UTC or when the budget is raised',
  platform_cap_reached:
    'the platform-wide daily model token or cost cap is spent across all tenants; model calls resume at midnight UTC',
  tenant_queue_full:
    'a child run cannot be queued: the tenant is at maxQueuedRuns; the parent tries again every few seconds',
  input: 'waiting for human input (ctx.waitForInput)',
  timer: 'sleeping (ctx.sleep)',
  child: 'waiting for a child run to end',
  children:
    "the agent returned, but children started with onParentEnd: 'wait' are still running: the run ends with its result once they have ended",
  unknown_side_effect:
    'a side-effect tool call has an unknown outcome: an operator must resolve it',
  approval:
    'a tool call waits for a human decision (POST /v1/runs/:id/approvals/:executionId); it resolves as denied when the request expires',
} as const;
export type WaitingReason = keyof typeof WAITING_REASONS;

/**
 * Reasons of a claimed run waiting in memory (the model plane): stale once the run is queued again
 * (a lease handed back).
 */
export const IN_FLIGHT_REASONS: ReadonlySet<string> = new Set<WaitingReason>([
  'rate_limited',
  'provider_unavailable',
  'pool_saturated',
]);

/**
 * The `run.waiting` event: the run started waiting for `reason` at `since` (ms since the epoch).
 */
export function waitingEvent(
  reason: string,
  since: number,
  detail: string,
  extra: Record<string, Json> = {},
): { type: string; data: Json } {
  return {
    type: 'run.waiting',
    data: { reason, since: new Date(since).toISOString(), detail, ...extra },
  };
}

/**
 * The `run.resumed` event: the run stopped waiting for `reason` (waited since `since`, when known).
 */
export function resumedEvent(
  reason: string,
  since: number | null,
  now: number,
  extra: Record<string, Json> = {},
): { type: string; data: Json } {
  return {
    type: 'run.resumed',
    data: {
      reason,
      ...(since === null
        ? {}
        : { since: new Date(since).toISOString(), waitedMs: Math.max(0, now - since) }),
      ...extra,
    },
  };
}

/** The reason a parked journal entry waited for, read back when the run resumes. */
export function parkedReason(entry: {
  kind: string;
  status: string;
  args: Json | null;
}): string | undefined {
  if (entry.status === 'unknown') return 'unknown_side_effect';
  if (entry.status !== 'waiting') return undefined;
  const reason = (entry.args as { waitingReason?: unknown } | null)?.waitingReason;
  if (typeof reason === 'string') return reason; // a wait before the effect was dispatched (a budget, a full queue)
  if (entry.kind === 'input') return 'input';
  if (entry.kind === 'sleep') return 'timer';
  if (entry.kind === 'child') return 'child';
  return undefined;
}
