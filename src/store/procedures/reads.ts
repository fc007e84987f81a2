// The reads both stores share: single named statements (a few pairs) outside any write transaction,
// each mapped to its record. Driven like the write procedures (transaction.ts), on the store's read
// connection.
import { ADMISSION_AHEAD_COUNT_MAX, type AdmissionSample } from '../../domain/admission.ts';
import type { Json } from '../../domain/json.ts';
import { toSnapshot, type RunSnapshot } from '../../domain/run-snapshot.ts';
import type { EventCursor, TenantEventFilter, TenantEventPage } from '../../domain/event-cursor.ts';
import type {
  JournalEntry,
  RunEventRecord,
  RunRecord,
  TenantRecord,
} from '../../domain/records.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import { statusesAllowing } from '../../domain/run-status.ts';
import type { LiveMetrics } from '../live-metrics.ts';
import { toEvent, toJournalEntry, toRun, toTenant } from '../rows.ts';
import {
  toEndedRunsBucket,
  toRunSummaryRow,
  toTenantSummaryRow,
  type EndedRunsBucket,
  type RunSummaryRow,
  type TenantSummaryRow,
} from '../run-summaries.ts';
import {
  RUN_TREE_MAX_DEPTH,
  type RunFilter,
  type RunTreeNode,
  type StarvedInteractive,
  type StarvedRequest,
} from '../store.ts';
import { toTenantUsage, type TenantUsage } from '../usage.ts';
import { all, one, type Procedure } from './transaction.ts';

const CLAIMABLE_STATUSES = JSON.stringify(statusesAllowing('claim'));

export function* getTenant(id: string): Procedure<TenantRecord | null> {
  const row = yield* one('get-tenant', { id });
  return row === undefined ? null : toTenant(row);
}

export function* listTenants(): Procedure<TenantRecord[]> {
  return (yield* all('list-tenants')).map(toTenant);
}

export function* heldRuns(tenantId: string): Procedure<number> {
  return Number((yield* one('count-held-runs', { tenant_id: tenantId }))!.held);
}

/** What deadline-aware admission measures for `agent` (src/domain/admission.ts). */
export function* admissionSample(
  agent: string,
  dueAt: number,
  since: number,
): Procedure<AdmissionSample> {
  const row = (yield* one('admission-sample', {
    agent,
    due_at: dueAt,
    since,
    ahead_max: ADMISSION_AHEAD_COUNT_MAX,
  }))!;
  return {
    ahead: Number(row.ahead),
    completed: Number(row.completed),
    fastestMs: row.fastest_ms === null ? null : Number(row.fastest_ms),
  };
}

export function* findTenantByKeyHash(apiKeyHash: string): Procedure<TenantRecord | null> {
  const row = yield* one('find-tenant-by-key', { key_hash: apiKeyHash });
  return row === undefined ? null : toTenant(row);
}

export function* tenantUsage(tenantId: string): Procedure<TenantUsage> {
  return toTenantUsage((yield* one('tenant-usage', { tenant_id: tenantId }))!);
}

export function* tenantUsageSince(
  tenantId: string,
  sinceMs: number,
): Procedure<{ tokens: number; costUsd: number }> {
  const row = (yield* one('tenant-usage-since', { tenant_id: tenantId, since: sinceMs }))!;
  return { tokens: Number(row.tokens), costUsd: Number(row.cost_usd) };
}

export function* platformUsageSince(
  sinceMs: number,
): Procedure<{ tokens: number; costUsd: number }> {
  const row = (yield* one('platform-usage-since', { since: sinceMs }))!;
  return { tokens: Number(row.tokens), costUsd: Number(row.cost_usd) };
}

export function* agentSpendSample(
  agent: string,
  limit: number,
): Procedure<{ runs: number; tokens: number; costUsd: number }> {
  const row = (yield* one('agent-spend-sample', { agent, limit }))!;
  return { runs: Number(row.runs), tokens: Number(row.tokens), costUsd: Number(row.cost_usd) };
}

export function* getRun(id: string): Procedure<RunRecord | null> {
  const row = yield* one('get-run', { id });
  return row === undefined ? null : toRun(row);
}

export function* listRuns(tenantId: string, filter: RunFilter): Procedure<RunRecord[]> {
  return (yield* all('list-runs', {
    tenant_id: tenantId,
    status: filter.status ?? null,
    agent: filter.agent ?? null,
    code: filter.errorCode ?? null,
    after_id: filter.afterId ?? null,
    limit: filter.limit,
    rerun_of: filter.rerunOf ?? null,
  })).map(toRun);
}

export function* listRunTree(
  tenantId: string,
  rootId: string,
  limit: number,
): Procedure<RunTreeNode[]> {
  return (yield* all('list-run-tree', {
    tenant_id: tenantId,
    root_id: rootId,
    max_depth: RUN_TREE_MAX_DEPTH,
    limit,
  })).map((row) => {
    const run = toRun(row);
    const policy = (row.tree_on_parent_end as RunTreeNode['onParentEnd']) ?? 'cancel';
    return {
      run,
      depth: Number(row.tree_depth),
      onParentEnd: run.parentRunId === null ? null : policy,
    };
  });
}

export function* getInput(runId: string, key: string): Procedure<{ value: Json } | null> {
  const row = yield* one('get-input', { run_id: runId, key });
  return row === undefined ? null : { value: JSON.parse(row.value as string) as Json };
}

export function* starvedInteractive(request: StarvedRequest): Procedure<StarvedInteractive> {
  const row = (yield* one('starved-interactive', {
    cutoff: request.cutoff,
    served: JSON.stringify(request.served),
    claimable_statuses: CLAIMABLE_STATUSES,
    limit: request.limit,
  }))!;
  return {
    count: Number(row.starved),
    oldestSince: row.oldest_since === null ? null : Number(row.oldest_since),
  };
}

export function* loadJournal(runId: string): Procedure<JournalEntry[]> {
  return (yield* all('load-journal', { run_id: runId })).map(toJournalEntry);
}

/** The journal from position `fromSeq` on (a resume from a snapshot). */
export function* loadJournalFrom(runId: string, fromSeq: number): Procedure<JournalEntry[]> {
  return (yield* all('load-journal-from', { run_id: runId, from_seq: fromSeq })).map(
    toJournalEntry,
  );
}

/** The run's latest snapshot: its last `checkpoint` entry (one index probe, 0041). */
export function* latestSnapshot(runId: string): Procedure<RunSnapshot | null> {
  const row = yield* one('latest-snapshot', { run_id: runId });
  return row === undefined ? null : toSnapshot(toJournalEntry(row));
}

export function* listEvents(
  runId: string,
  afterSeq: number,
  limit: number,
): Procedure<RunEventRecord[]> {
  return (yield* all('list-events', { run_id: runId, after_seq: afterSeq, limit })).map(toEvent);
}

/**
 * Events of all tenants one tenant-event read examines at most: its cost is bounded even when the
 * tenant has nothing among them (a quiet tenant beside busy ones) or its filter matches rarely.
 */
export const TENANT_EVENTS_EXAMINED_MAX = 5_000;

/**
 * The tenant's events after `after` in the tenant-wide order (0038), with their runs' agents, among
 * the events below `horizon` (eventHorizon). The statement also returns one marker row (`examined_to`) with the place of the last event it
 * examined: where the next read starts when this one returned fewer than `limit` events.
 */
export function* listTenantEvents(
  tenantId: string,
  filter: TenantEventFilter,
  after: EventCursor,
  limit: number,
  horizon: string,
): Procedure<TenantEventPage> {
  const rows = yield* all('list-tenant-events', {
    tenant_id: tenantId,
    after_tx: after.tx,
    after_pos: after.pos,
    run_ids: filter.runIds === undefined ? null : JSON.stringify(filter.runIds),
    agent: filter.agent ?? null,
    types: filter.types === undefined ? null : JSON.stringify(filter.types),
    parent_run_id: filter.parentRunId ?? null,
    limit,
    examine: TENANT_EVENTS_EXAMINED_MAX,
    horizon,
  });
  const marker = rows.find((row) => Number(row.examined) > 0);
  const events = rows
    .filter((row) => Number(row.examined) === 0)
    .map((row) => ({
      ...toEvent(row),
      agent: row.agent as string,
      cursor: { tx: String(row.tx), pos: Number(row.pos) },
    }));
  if (events.length === limit) return { events, cursor: events.at(-1)!.cursor, more: true };
  return {
    events,
    cursor:
      marker === undefined
        ? (events.at(-1)?.cursor ?? after)
        : { tx: String(marker.tx), pos: Number(marker.pos) },
    more: marker !== undefined && Number(marker.examined) >= TENANT_EVENTS_EXAMINED_MAX,
  };
}

/**
 * Below which transaction every event of the tenant-wide order is committed (0053 on Postgres; SQLite
 * has one writer, so every committed event is below it: '0', unused).
 */
export function* eventHorizon(): Procedure<string> {
  return String((yield* one('event-horizon'))!.horizon);
}

export function* tenantEventsHead(): Procedure<EventCursor> {
  const row = yield* one('tenant-events-head');
  return { tx: String(row!.tx), pos: Number(row!.pos) };
}

/** Live work for metrics at scrape time (indexed queries only). */
export function* liveMetrics(now: number): Procedure<LiveMetrics> {
  const runs = yield* all('live-run-counts');
  const queue = yield* one('run-queue', { now, claimable_statuses: CLAIMABLE_STATUSES });
  const unknown = yield* one('count-unknown-executions');
  return {
    runs: runs.map((r) => ({
      tenantId: String(r.tenant_id),
      status: r.status as RunStatus,
      count: Number(r.runs),
      stalled: Number(r.stalled ?? 0),
    })),
    claimable: Number(queue?.depth ?? 0),
    oldestClaimableSince:
      queue?.oldest_since === null || queue?.oldest_since === undefined
        ? null
        : Number(queue.oldest_since),
    unknownExecutions: Number(unknown?.executions ?? 0),
  };
}

export function* summarizeRuns(tenantId: string): Procedure<RunSummaryRow[]> {
  return (yield* all('summarize-runs', { tenant_id: tenantId })).map(toRunSummaryRow);
}

export function* countEndedRuns(
  tenantId: string,
  sinceMs: number,
  bucketMs: number,
): Procedure<EndedRunsBucket[]> {
  return (yield* all('count-ended-runs', {
    tenant_id: tenantId,
    since: sinceMs,
    bucket_ms: bucketMs,
  })).map(toEndedRunsBucket);
}

export function* summarizeTenants(): Procedure<TenantSummaryRow[]> {
  return (yield* all('summarize-tenants')).map(toTenantSummaryRow);
}
