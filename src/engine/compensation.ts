// Sagas: when a run fails or is cancelled after completing executions of tools that declare
// `compensate`, those executions are undone in reverse order of completion before the run's final
// commit. Each compensation is an effect of its own (kind `compensation`, journaled `running`
// before the hook is called and settled after), so a crash mid-saga resumes it: settled
// compensations are not called again, a `running` one is called again (hooks must be idempotent,
// keyed by the execution id). Executions whose outcome is unknown are reported, never undone.
import { serializeError, type SerializedError } from '../domain/keel-error.ts';
import type { Json, ToolDefinition } from '../sdk/types.ts';
import type { CompensationReport, JournalEntry } from '../domain/records.ts';
import { crashPoint } from '../domain/crash-points.ts';
import { backoff, decideRetry, resolveRetryPolicy, type RetryBudget } from './retry-policy.ts';
import type { RunPort } from './run-port.ts';

/**
 * A compensation that ignores its signal is abandoned (reported failed) after this long, unless the
 * tool's timeout says otherwise.
 */
export const COMPENSATION_TIMEOUT_MS_DEFAULT = 30_000;

/**
 * Compensations retry under the tool's own policy, never limited by the run's retry budget: undoing
 * must not be starved.
 */
const UNLIMITED: RetryBudget = { take: () => true, limit: Number.POSITIVE_INFINITY };

const NEVER_ABORTED = new AbortController().signal;

export type ToolLookup = (name: string) => ToolDefinition<unknown, Json> | undefined;

/**
 * Completed executions to undo, newest first (reverse order of completion; position breaks ties).
 */
function targets(journal: readonly JournalEntry[], toolFor: ToolLookup): JournalEntry[] {
  return journal
    .filter(
      (e) =>
        e.kind === 'tool' &&
        e.executionId !== null &&
        (e.status === 'succeeded' || e.status === 'unknown'),
    )
    .filter((e) => {
      const tool = toolFor(e.name);
      return tool === undefined ? e.effectClass === 'side-effect' : tool.compensate !== undefined;
    })
    .sort(
      (a, b) => (b.endedAt ?? b.startedAt ?? 0) - (a.endedAt ?? a.startedAt ?? 0) || b.seq - a.seq,
    );
}

/** Runs the saga over the journal; null when there was nothing to compensate. */
export async function compensate(
  x: RunPort,
  journal: readonly JournalEntry[],
  toolFor: ToolLookup,
): Promise<CompensationReport | null> {
  const todo = targets(journal, toolFor);
  if (todo.length === 0) return null;
  const done = new Map<string, JournalEntry>();
  for (const e of journal)
    if (e.kind === 'compensation') done.set((e.args as { executionId: string }).executionId, e);
  let nextSeq = Math.max(0, ...journal.map((e) => e.seq)) + 1;
  const report: CompensationReport = { compensated: [], failed: [], unknown: [] };
  for (const target of todo) {
    const executionId = target.executionId!;
    const item = { executionId, tool: target.name };
    const previous = done.get(executionId);
    const tool = toolFor(target.name);
    if (target.status === 'unknown') report.unknown.push(item);
    else if (previous?.status === 'succeeded') report.compensated.push(item);
    else if (previous?.status === 'failed') report.failed.push({ ...item, error: previous.error! });
    else if (tool?.compensate === undefined) {
      report.failed.push({
        ...item,
        error: {
          code: 'compensation_unavailable',
          message: `tool ${target.name} is not known to this worker: export it from the agents module`,
        },
      });
    } else {
      const error = await compensateOne(
        x,
        tool,
        target,
        previous?.seq ?? nextSeq++,
        previous?.attempts ?? 0,
      );
      if (error === null) report.compensated.push(item);
      else report.failed.push({ ...item, error });
    }
  }
  return report;
}

/** One compensation as a durable effect; returns its error, or null when it succeeded. */
async function compensateOne(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  target: JournalEntry,
  seq: number,
  attemptsBefore: number,
): Promise<SerializedError | null> {
  const executionId = target.executionId!;
  const base = {
    seq,
    kind: 'compensation' as const,
    name: tool.name,
    args: { executionId },
    executionId: `${executionId}.compensation`,
    effectClass: 'idempotent',
  };
  const policy = resolveRetryPolicy(tool.retry, tool.maxAttempts);
  const startedAt = x.clock.now();
  let error: SerializedError | null = null;
  for (let attempt = attemptsBefore + 1; ; attempt++) {
    await x.commit({
      journal: [{ ...base, status: 'running', attempts: attempt, queuedAt: startedAt, startedAt }],
      events: [
        { type: 'compensation.started', data: { seq, executionId, tool: tool.name, attempt } },
      ],
    });
    crashPoint('dispatch.before-execute');
    try {
      const signal = AbortSignal.timeout(tool.timeoutMs ?? COMPENSATION_TIMEOUT_MS_DEFAULT);
      await Promise.race([
        Promise.resolve().then(() =>
          tool.compensate!(executionId, target.result as never, { runId: x.runId, signal }),
        ),
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        ),
      ]);
      error = null;
    } catch (thrown) {
      const decision = decideRetry(
        { ...policy, maxAttempts: attemptsBefore + policy.maxAttempts },
        attempt,
        thrown,
        UNLIMITED,
      );
      if (decision.retry) {
        await backoff(decision.delayMs, NEVER_ABORTED, x.clock);
        continue;
      }
      error = serializeError(decision.error, 'tool_failed');
    }
    crashPoint('execute.before-commit');
    await x.commit({
      journal: [
        {
          ...base,
          status: error === null ? 'succeeded' : 'failed',
          attempts: attempt,
          queuedAt: startedAt,
          startedAt,
          endedAt: x.clock.now(),
          error,
        },
      ],
      events: [
        {
          type: 'compensation.completed',
          data: {
            seq,
            executionId,
            tool: tool.name,
            status: error === null ? 'succeeded' : 'failed',
            attempts: attempt,
            ...(error === null ? {} : { code: error.code }),
          },
        },
      ],
    });
    return error;
  }
}
