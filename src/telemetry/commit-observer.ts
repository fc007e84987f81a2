// Turns one acknowledged run commit into metrics and spans: every effect that ended (wait and
// execution time by kind, tokens and cost of model calls), the run's end (outcome, deadline, cost
// per success) and the commit itself. The commit already holds all of it — journal times, usage in
// its events, the final status — so the engine needs no telemetry calls of its own. Never throws: a
// telemetry bug must not fail a commit that is already durable.
import type { Attributes } from '@opentelemetry/api';
import { ERROR_CODES } from '../domain/error-codes.ts';
import type { Json } from '../domain/json.ts';
import type { JournalWrite, RunCommit } from '../store/store.ts';
import { takePrompt } from './model-prompts.ts';
import { contentAttribute } from './redaction.ts';
import { forgetRun, runLabels, type RunLabels } from './run-labels.ts';
import { recordRunChildSpan, recordRunRootSpan } from './run-spans.ts';
import type { Telemetry } from './telemetry.ts';
import { contentIncluded, tracingEnabled } from './tracing.ts';

/** Effects that are waits: their whole duration is waiting, none of it executing. */
const WAIT_KINDS = new Set(['input', 'sleep', 'child']);
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

type Completed = Record<string, Json>;

export interface CommitTiming {
  submittedAt: number;
  acknowledgedAt: number;
  batchSize: number;
}

export function observeCommit(t: Telemetry, commit: RunCommit, timing: CommitTiming): void {
  try {
    const labels = runLabels(commit.runId);
    const completed = new Map<number, Completed>();
    for (const e of commit.events ?? []) {
      const data = e.data as Completed | null;
      observePreemption(t, labels, e.type, data);
      if (
        e.type === 'effect.completed' &&
        data !== null &&
        typeof data === 'object' &&
        typeof data.seq === 'number'
      )
        completed.set(data.seq, data);
    }
    for (const write of commit.journal ?? [])
      observeEffect(t, commit.runId, labels, write, completed.get(write.seq));
    if (tracingEnabled()) {
      recordRunChildSpan(commit.runId, {
        name: 'keel.commit',
        startMs: timing.submittedAt,
        endMs: timing.acknowledgedAt,
        attributes: {
          'keel.commit.batch_size': timing.batchSize,
          'keel.commit.journal_writes': commit.journal?.length ?? 0,
          'keel.commit.events': commit.events?.length ?? 0,
          ...(commit.run?.status !== undefined ? { 'keel.run.status': commit.run.status } : {}),
        },
      });
    }
    const status = commit.run?.status;
    if (status !== undefined && TERMINAL.has(status))
      observeRunEnd(t, commit, labels, status, timing.acknowledgedAt);
    if (commit.run?.releaseLease === true) forgetRun(commit.runId);
  } catch {
    // Telemetry is best effort by design (see the header).
  }
}

/**
 * Preemption's cost: `run.preempted` counts one; the `run.started` of the claim after it carries
 * the requeue delay.
 */
function observePreemption(
  t: Telemetry,
  labels: RunLabels | undefined,
  type: string,
  data: Completed | null,
): void {
  if (type === 'run.preempted')
    t.metrics.preemptions.inc({ tenant: labels?.tenantId ?? 'unknown' });
  else if (type === 'run.stalled')
    t.metrics.runsStalled.inc({
      tenant: labels?.tenantId ?? 'unknown',
      policy: typeof data?.policy === 'string' ? data.policy : 'unknown',
    });
  else if (
    type === 'run.started' &&
    data !== null &&
    typeof data === 'object' &&
    typeof data.requeueDelayMs === 'number'
  ) {
    t.metrics.preemptionRequeueDelay.observe(data.requeueDelayMs / 1000);
  }
}

function observeEffect(
  t: Telemetry,
  runId: string,
  labels: RunLabels | undefined,
  w: JournalWrite,
  completed: Completed | undefined,
): void {
  if ((w.status !== 'succeeded' && w.status !== 'failed') || w.kind === 'now') return;
  const endedAt = w.endedAt ?? Date.now();
  const queuedAt = w.queuedAt ?? w.startedAt ?? endedAt;
  const isWait = WAIT_KINDS.has(w.kind);
  const startedAt = isWait ? endedAt : (w.startedAt ?? queuedAt);
  t.metrics.effectWait.observe({ kind: w.kind }, Math.max(0, startedAt - queuedAt) / 1000);
  if (!isWait)
    t.metrics.effectExecution.observe({ kind: w.kind }, Math.max(0, endedAt - startedAt) / 1000);
  const tenant = labels?.tenantId ?? 'unknown';
  const usage = w.kind === 'model' && completed !== undefined ? modelUsage(completed) : undefined;
  if (usage !== undefined) {
    t.metrics.tokens.inc({ tenant, model: w.name, type: 'input' }, usage.inputTokens);
    t.metrics.tokens.inc({ tenant, model: w.name, type: 'output' }, usage.outputTokens);
    if (usage.cachedTokens > 0)
      t.metrics.tokens.inc({ tenant, model: w.name, type: 'cached' }, usage.cachedTokens);
    t.metrics.costUsd.inc({ tenant, model: w.name }, usage.costUsd);
    t.addRunSpend(tenant, labels?.agent ?? 'unknown', usage.costUsd);
  }
  if (!tracingEnabled()) return;
  const include = contentIncluded();
  const attributes: Attributes = {
    'keel.effect.kind': w.kind,
    'keel.effect.name': w.name,
    'keel.effect.seq': w.seq,
    'keel.effect.status': w.status,
    'keel.effect.queue_ms': Math.max(0, startedAt - queuedAt),
    'keel.effect.execution_ms': isWait ? 0 : Math.max(0, endedAt - startedAt),
    'keel.effect.attempts': w.attempts ?? 1,
  };
  if (w.kind === 'tool') {
    attributes['keel.tool.execution_id'] = w.executionId ?? '';
    attributes['keel.tool.effect_class'] = w.effectClass ?? '';
    attributes['keel.tool.args'] = contentAttribute(w.args, include);
  }
  if (usage !== undefined) {
    Object.assign(attributes, {
      'gen_ai.request.model': w.name,
      'gen_ai.response.model': String(completed?.model ?? w.name),
      'gen_ai.usage.input_tokens': usage.inputTokens,
      'gen_ai.usage.output_tokens': usage.outputTokens,
      'keel.model.cost_usd': usage.costUsd,
    });
    if (t.providerOf !== undefined) attributes['gen_ai.system'] = t.providerOf(w.name) ?? 'unknown';
  }
  if (w.kind === 'model')
    attributes['keel.model.prompt'] = contentAttribute(takePrompt(runId, w.seq), include);
  if (w.status === 'succeeded' && w.kind !== 'sleep')
    attributes['keel.effect.result'] = contentAttribute(w.result, include);
  recordRunChildSpan(runId, {
    name: `${w.kind} ${w.name}`,
    startMs: queuedAt,
    endMs: endedAt,
    attributes,
    error: w.status === 'failed' ? (w.error?.code ?? 'failed') : undefined,
  });
}

function modelUsage(
  c: Completed,
):
  | { inputTokens: number; outputTokens: number; cachedTokens: number; costUsd: number }
  | undefined {
  const n = (v: Json | undefined) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  if (c.inputTokens === undefined && c.outputTokens === undefined) return undefined;
  return {
    inputTokens: n(c.inputTokens),
    outputTokens: n(c.outputTokens),
    cachedTokens: n(c.cachedTokens),
    costUsd: n(c.costUsd),
  };
}

function observeRunEnd(
  t: Telemetry,
  commit: RunCommit,
  labels: RunLabels | undefined,
  status: string,
  endedAt: number,
): void {
  const tenant = labels?.tenantId ?? 'unknown';
  const agent = labels?.agent ?? 'unknown';
  // Error codes outside the registry (thrown by agent code) are folded into agent_error: labels
  // stay a bounded set.
  const code = commit.run?.error?.code;
  const outcome =
    status === 'succeeded'
      ? 'ok'
      : status === 'cancelled'
        ? (commit.run?.outcome ?? 'unknown')
        : code !== undefined && code in ERROR_CODES
          ? code
          : 'agent_error';
  const withinDeadline =
    status === 'succeeded' && (labels?.deadlineAt == null || endedAt <= labels.deadlineAt);
  t.runEnded(
    tenant,
    agent,
    status,
    outcome,
    withinDeadline,
    labels === undefined ? undefined : endedAt - labels.createdAt,
  );
  forgetRun(commit.runId);
  if (!tracingEnabled() || labels === undefined) return;
  recordRunRootSpan(
    commit.runId,
    {
      name: `run ${labels.agent}`,
      startMs: labels.createdAt,
      endMs: endedAt,
      attributes: {
        'keel.run.id': commit.runId,
        'keel.tenant.id': labels.tenantId,
        'keel.agent.name': labels.agent,
        'keel.agent.version': labels.agentVersion,
        'keel.run.status': status,
        'keel.run.outcome': outcome,
        ...(labels.parentRunId !== null ? { 'keel.run.parent_id': labels.parentRunId } : {}),
      },
      error: status === 'succeeded' ? undefined : outcome,
    },
    labels.parentRunId,
  );
}
