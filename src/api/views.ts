// How records look on the wire: ISO times, no lease internals, nothing another tenant could use.
import type { JournalEntry, RunEventRecord, RunRecord, TenantRecord } from '../domain/records.ts';
import type { AttemptRecord } from '../domain/attempts.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function runView(run: RunRecord) {
  return {
    id: run.id,
    tenantId: run.tenantId,
    agent: run.agent,
    agentVersion: run.agentVersion,
    status: run.status,
    stateVersion: run.stateVersion,
    priority: run.priority,
    input: run.input,
    ...(run.result !== null ? { result: run.result } : {}),
    error: run.error,
    outcome: run.outcome,
    compensation: run.compensation,
    waitingReason: run.waitingReason,
    waitingSince: iso(run.waitingSince),
    wakeAt: iso(run.wakeAt),
    progress:
      run.progress === null ? null : { state: run.progress.state, at: iso(run.progress.at)! },
    // Shown only while the run runs: a run handed back mid-stall is claimed and watched afresh.
    stalled:
      run.stalled === null || run.status !== 'running'
        ? null
        : { ...run.stalled, since: iso(run.stalled.since)! },
    budget: run.budget,
    counters: run.counters,
    metadata: run.metadata,
    egressAllow: run.egressAllow,
    parentRunId: run.parentRunId,
    idempotencyKey: run.idempotencyKey,
    attempts: run.attempts,
    leaseLosses: run.leaseLosses,
    leaseExpiries: run.leaseExpiries,
    preemptions: run.preemptions,
    preemptedAt: iso(run.preemptedAt),
    createdAt: iso(run.createdAt)!,
    updatedAt: iso(run.updatedAt)!,
    endedAt: iso(run.endedAt),
    deadlineAt: iso(run.deadlineAt),
    expectedFinishAt: iso(run.expectedFinishAt),
    rerunOf: run.rerunOf,
    ...(run.archive === undefined
      ? {}
      : { archived: true as const, archiveComplete: run.archive.complete }),
    resetFrom: run.resetFrom,
  };
}

export function tenantView(tenant: TenantRecord) {
  return {
    id: tenant.id,
    name: tenant.name,
    createdAt: iso(tenant.createdAt)!,
    weight: tenant.weight,
    maxConcurrentRuns: tenant.maxConcurrentRuns,
    maxQueuedRuns: tenant.maxQueuedRuns,
    rpm: tenant.rpm,
    tpm: tenant.tpm,
    dailyTokenBudget: tenant.dailyTokenBudget,
    dailyCostBudgetUsd: tenant.dailyCostBudgetUsd,
    poolCaps: tenant.poolCaps,
    redact: tenant.redact,
    egressAllow: tenant.egressAllow,
  };
}

export function eventView(event: RunEventRecord) {
  return { seq: event.seq, type: event.type, at: iso(event.at)!, data: event.data };
}

export function stepView(entry: JournalEntry) {
  return {
    seq: entry.seq,
    kind: entry.kind,
    name: entry.name,
    status: entry.status,
    attempts: entry.attempts,
    executionId: entry.executionId,
    effectClass: entry.effectClass,
    fencingToken: entry.leaseToken,
    worker: entry.worker,
    queuedAt: iso(entry.queuedAt),
    startedAt: iso(entry.startedAt),
    endedAt: iso(entry.endedAt),
    deadlineAt: iso(entry.deadlineAt),
    ...(entry.error !== null ? { error: entry.error } : {}),
  };
}

export const TERMINAL_EVENT_TYPES = new Set(['run.succeeded', 'run.failed', 'run.cancelled']);

export function attemptView(attempt: AttemptRecord) {
  return {
    number: attempt.number,
    worker: attempt.worker,
    leaseToken: attempt.leaseToken,
    startedAt: new Date(attempt.startedAt).toISOString(),
    endedAt: attempt.endedAt === null ? null : new Date(attempt.endedAt).toISOString(),
    ending: attempt.ending,
  };
}
