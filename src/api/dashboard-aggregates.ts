// Turns the store's run summaries into what the dashboard pages show: usage and cost per success
// per agent, queue rows with ages, and a gap-free throughput series. Pure functions of their
// inputs; no I/O, no clocks of their own.
import type { EndedRunsBucket, RunSummaryRow, TenantSummaryRow } from '../store/run-summaries.ts';

export interface AgentUsageView {
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

function emptyUsage(agent: string): AgentUsageView {
  return {
    agent,
    runs: 0,
    byStatus: {},
    steps: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    succeeded: 0,
    costPerSuccessUsd: null,
  };
}

function add(into: AgentUsageView, row: RunSummaryRow): void {
  into.runs += row.runs;
  into.byStatus[row.status] = (into.byStatus[row.status] ?? 0) + row.runs;
  into.steps += row.steps;
  into.inputTokens += row.inputTokens;
  into.outputTokens += row.outputTokens;
  into.costUsd += row.costUsd;
  if (row.status === 'succeeded') into.succeeded += row.runs;
}

/**
 * Cost per success counts all spend — failed and cancelled runs too — divided by successes (the
 * brief's definition).
 */
function finish(usage: AgentUsageView): AgentUsageView {
  usage.costPerSuccessUsd = usage.succeeded === 0 ? null : usage.costUsd / usage.succeeded;
  return usage;
}

export function usageByAgent(rows: readonly RunSummaryRow[]): {
  totals: Omit<AgentUsageView, 'agent'>;
  usage: AgentUsageView[];
} {
  const byAgent = new Map<string, AgentUsageView>();
  const totals = emptyUsage('*');
  for (const row of rows) {
    let usage = byAgent.get(row.agent);
    if (usage === undefined) {
      usage = emptyUsage(row.agent);
      byAgent.set(row.agent, usage);
    }
    add(usage, row);
    add(totals, row);
  }
  const { agent: _all, ...rest } = finish(totals);
  return {
    totals: rest,
    usage: [...byAgent.values()]
      .map(finish)
      .sort((a, b) => b.runs - a.runs || a.agent.localeCompare(b.agent)),
  };
}

export interface QueueRowView {
  agent: string;
  queued: number;
  running: number;
  waiting: number;
  cancelling: number;
  oldestQueuedAgeMs: number | null;
  oldestWaitingAgeMs: number | null;
}

const age = (now: number, since: number | null): number | null =>
  since === null ? null : Math.max(0, now - since);

/** Live (non-terminal) runs per agent; agents with nothing live are left out. */
export function queueRows(rows: readonly RunSummaryRow[], now: number): QueueRowView[] {
  const byAgent = new Map<string, QueueRowView>();
  for (const row of rows) {
    if (!['queued', 'running', 'waiting', 'cancelling'].includes(row.status)) continue;
    let q = byAgent.get(row.agent);
    if (q === undefined) {
      q = {
        agent: row.agent,
        queued: 0,
        running: 0,
        waiting: 0,
        cancelling: 0,
        oldestQueuedAgeMs: null,
        oldestWaitingAgeMs: null,
      };
      byAgent.set(row.agent, q);
    }
    q[row.status as 'queued' | 'running' | 'waiting' | 'cancelling'] += row.runs;
    if (row.status === 'queued') q.oldestQueuedAgeMs = age(now, row.oldestClaimableAt);
    if (row.status === 'waiting') q.oldestWaitingAgeMs = age(now, row.oldestWaitingSince);
  }
  return [...byAgent.values()].sort(
    (a, b) => b.queued - a.queued || a.agent.localeCompare(b.agent),
  );
}

/**
 * Every bucket from `sinceMs` up to `nowMs`, zeros included, so a chart's time axis has no holes.
 */
export function throughputSeries(
  buckets: readonly EndedRunsBucket[],
  sinceMs: number,
  nowMs: number,
  bucketMs: number,
) {
  const first = Math.floor(sinceMs / bucketMs) * bucketMs;
  const series = new Map<
    number,
    { start: string; succeeded: number; failed: number; cancelled: number }
  >();
  for (let t = first; t <= nowMs; t += bucketMs)
    series.set(t, { start: new Date(t).toISOString(), succeeded: 0, failed: 0, cancelled: 0 });
  for (const b of buckets) {
    const slot = series.get(b.bucketStart);
    if (
      slot !== undefined &&
      (b.status === 'succeeded' || b.status === 'failed' || b.status === 'cancelled')
    )
      slot[b.status] += b.runs;
  }
  return [...series.values()];
}

export interface TenantUsageView extends Omit<AgentUsageView, 'agent'> {
  id: string;
  name: string;
  createdAt: string;
  /** Age of the tenant's longest-waiting claimable run: starvation shows here first. */
  oldestQueuedAgeMs: number | null;
}

/** Usage per tenant (all tenants, those without runs included), busiest first. */
export function usageByTenant(rows: readonly TenantSummaryRow[], now: number): TenantUsageView[] {
  const byTenant = new Map<
    string,
    { usage: AgentUsageView; name: string; createdAt: number; oldest: number | null }
  >();
  for (const row of rows) {
    let entry = byTenant.get(row.tenantId);
    if (entry === undefined) {
      entry = {
        usage: emptyUsage(row.tenantId),
        name: row.tenantName,
        createdAt: row.tenantCreatedAt,
        oldest: null,
      };
      byTenant.set(row.tenantId, entry);
    }
    if (row.status !== null)
      add(entry.usage, {
        ...row,
        agent: row.tenantId,
        status: row.status,
        oldestWaitingSince: null,
      });
    if (row.status === 'queued') entry.oldest = row.oldestClaimableAt;
  }
  return [...byTenant.values()]
    .map(({ usage, name, createdAt, oldest }) => {
      const { agent: id, ...rest } = finish(usage);
      return {
        id,
        name,
        createdAt: new Date(createdAt).toISOString(),
        ...rest,
        oldestQueuedAgeMs: age(now, oldest),
      };
    })
    .sort((a, b) => b.runs - a.runs || a.name.localeCompare(b.name));
}
