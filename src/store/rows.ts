// Mapping between database rows and store records (both stores keep JSON as text and times as
// integer ms): JSON columns parsed, numbers (Postgres returns BIGINT as text) turned into numbers.
import type { SerializedError } from '../domain/keel-error.ts';
import type { EffectStatus } from '../domain/effect-status.ts';
import type { RunStatus } from '../domain/run-status.ts';
import type { Json } from '../domain/json.ts';
import type { RedactionPolicy } from '../domain/redaction-policy.ts';
import { parseEgressScope } from '../domain/egress-scope.ts';
import type { AttemptEnding, AttemptRecord } from '../domain/attempts.ts';
import type {
  CancelOutcome,
  CompensationReport,
  EffectKind,
  JournalEntry,
  Priority,
  RunEventRecord,
  RunProgress,
  RunRecord,
  RunStall,
  TenantRecord,
} from '../domain/records.ts';

type Row = Record<string, unknown>;

const json = <T>(value: unknown): T =>
  value === null || value === undefined ? (null as T) : (JSON.parse(value as string) as T);
const num = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

export function toRun(row: Row): RunRecord {
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    agent: row.agent as string,
    agentVersion: row.agent_version as string,
    input: json<Json>(row.input),
    status: row.status as RunStatus,
    stateVersion: Number(row.state_version),
    priority: row.priority as Priority,
    budget: json(row.budget) ?? {},
    metadata: json(row.metadata),
    egressAllow: parseEgressScope(row.egress_allow),
    counters: {
      steps: Number(row.steps),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      costUsd: Number(row.cost_usd),
    },
    result: json<Json>(row.result),
    error: json<SerializedError | null>(row.error),
    outcome: (row.outcome as CancelOutcome | null) ?? null,
    cancelGraceMs: num(row.cancel_grace_ms),
    compensation: json<CompensationReport | null>(row.compensation),
    waitingReason: (row.waiting_reason as string | null) ?? null,
    waitingSince: num(row.waiting_since),
    progress: json<RunProgress | null>(row.progress),
    stalled: json<RunStall | null>(row.stalled),
    wakeAt: num(row.wake_at),
    deadlineAt: num(row.deadline_at),
    expectedFinishAt: num(row.expected_finish_at),
    parentRunId: (row.parent_run_id as string | null) ?? null,
    idempotencyKey: (row.idempotency_key as string | null) ?? null,
    leaseOwner: (row.lease_owner as string | null) ?? null,
    leaseToken: Number(row.lease_token),
    leaseExpiresAt: num(row.lease_expires_at),
    leaseLosses: Number(row.lease_losses ?? 0),
    leaseLossOwners: json<string[] | null>(row.lease_loss_owners) ?? [],
    preemptions: Number(row.preemptions ?? 0),
    preemptedAt: num(row.preempted_at),
    preemptedLeaseToken: num(row.preempted_lease_token),
    attempts: Number(row.attempts ?? 0),
    leaseExpiries: Number(row.lease_expiries ?? 0),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    endedAt: num(row.ended_at),
    rerunOf: (row.rerun_of as string | null) ?? null,
    resetFrom:
      row.reset_from_run_id === null || row.reset_from_run_id === undefined
        ? null
        : { runId: row.reset_from_run_id as string, position: Number(row.reset_from_position) },
    randomSeed: (row.random_seed as string | null) ?? null,
  };
}

export function toAttempt(row: Row): AttemptRecord {
  return {
    runId: row.run_id as string,
    number: Number(row.number),
    worker: row.worker as string,
    leaseToken: Number(row.lease_token),
    startedAt: Number(row.started_at),
    endedAt: num(row.ended_at),
    ending: row.ending as AttemptEnding,
  };
}

export function toJournalEntry(row: Row): JournalEntry {
  return {
    runId: row.run_id as string,
    seq: Number(row.seq),
    kind: row.kind as EffectKind,
    name: row.name as string,
    status: row.status as EffectStatus,
    args: json<Json>(row.args),
    result: json<Json>(row.result),
    error: json<SerializedError | null>(row.error),
    executionId: (row.execution_id as string | null) ?? null,
    effectClass: (row.effect_class as string | null) ?? null,
    attempts: Number(row.attempts),
    leaseToken: Number(row.lease_token),
    worker: (row.worker as string | null) ?? null,
    queuedAt: num(row.queued_at),
    startedAt: num(row.started_at),
    endedAt: num(row.ended_at),
    deadlineAt: num(row.deadline_at),
  };
}

export function toEvent(row: Row): RunEventRecord {
  return {
    runId: row.run_id as string,
    seq: Number(row.seq),
    type: row.type as string,
    at: Number(row.at),
    data: json<Json>(row.data),
  };
}

export function toTenant(row: Row): TenantRecord {
  return {
    id: row.id as string,
    name: row.name as string,
    createdAt: Number(row.created_at),
    weight: Number(row.weight ?? 1),
    maxConcurrentRuns: num(row.max_concurrent_runs),
    maxQueuedRuns: num(row.max_queued_runs),
    rpm: num(row.rpm),
    tpm: num(row.tpm),
    dailyTokenBudget: num(row.daily_token_budget),
    dailyCostBudgetUsd: num(row.daily_cost_budget_usd),
    poolCaps: json<Record<string, number>>(row.pool_caps ?? '{}') ?? {},
    redact: redactionPolicy(row.redact),
    egressAllow: parseEgressScope(row.egress_allow),
  };
}

/** The tenant's redaction policy column (JSON text; absent or partial: nothing redacted). */
function redactionPolicy(text: unknown): RedactionPolicy {
  const stored = typeof text === 'string' ? json<Partial<RedactionPolicy>>(text) : null;
  return { fields: stored?.fields ?? [], tools: stored?.tools ?? {} };
}

/** JSON text for a nullable column. */
export const jsonText = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);
