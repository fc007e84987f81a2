// The fields every run-scoped log line carries: runId, tenantId and traceId (the run's trace id, the same in every
// process and whether or not tracing is on, so a log line leads to its trace). Pure: it only adds fields.
import { runLabels } from './run-labels.ts';
import { runTraceId } from './run-spans.ts';

export interface RunLogFields {
  runId: string;
  tenantId?: string;
  traceId: string;
}

export function runLogFields(runId: string, tenantId?: string): RunLogFields {
  const tenant = tenantId ?? runLabels(runId)?.tenantId;
  return { runId, ...(tenant !== undefined ? { tenantId: tenant } : {}), traceId: runTraceId(runId) };
}

/**
 * Log fields with the run context added when they name a run (`runId`); other fields pass unchanged.
 * @example
 * log.warn(withRunContext({ runId, error }), 'commit failed'); // { runId, tenantId, traceId, error }
 */
export function withRunContext(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  const runId = fields?.runId;
  if (typeof runId !== 'string') return fields ?? {};
  return { ...fields, ...runLogFields(runId, typeof fields?.tenantId === 'string' ? fields.tenantId : undefined) };
}
