// The fields every run-scoped log line carries: runId, tenantId and traceId (the run's trace id,
// the same in every process and whether or not tracing is on, so a log line leads to its trace).
// Pure: it only adds fields.
import type { Logger } from 'pino';
import { runLabels } from './run-labels.ts';
import { runTraceId } from './run-spans.ts';

export interface RunLogFields {
  runId: string;
  tenantId?: string;
  traceId: string;
}

export function runLogFields(runId: string, tenantId?: string): RunLogFields {
  const tenant = tenantId ?? runLabels(runId)?.tenantId;
  return {
    runId,
    ...(tenant !== undefined ? { tenantId: tenant } : {}),
    traceId: runTraceId(runId),
  };
}

/**
 * Log fields with the run context added when they name a run (`runId`); other fields pass
 * unchanged.
 * @example
 * log.warn(withRunContext({ runId, error }), 'commit failed'); // { runId, tenantId, traceId, error }
 */
export function withRunContext(
  fields: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const runId = fields?.runId;
  if (typeof runId !== 'string') return fields ?? {};
  return {
    ...fields,
    ...runLogFields(runId, typeof fields?.tenantId === 'string' ? fields.tenantId : undefined),
  };
}

/**
 * The engine's log function over a pino logger: every line that names a run also carries its tenant
 * and trace.
 * @example
 * new Orchestrator({ ..., log: runScopedLog(log) });
 */
export function runScopedLog(
  log: Logger,
): (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void {
  return (level, message, fields) => log[level](withRunContext(fields), message);
}
