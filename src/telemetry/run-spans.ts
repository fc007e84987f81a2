// The spans of a run. A run outlives processes (it parks, resumes elsewhere, is replayed), so its
// trace id and its root span id are derived from the run id: every process that records an effect
// of the run attaches it to the same root, and the process that ends the run records the root
// itself, from the run's creation to its end. Spans are recorded after the fact with their real
// start and end times. Does nothing (and builds nothing) when tracing is off.
import { createHash } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { activeTracing, tracingEnabled } from './tracing.ts';

/**
 * The W3C trace id (32 hex digits) of a run's trace: the same in every process, with or without
 * tracing on.
 */
export function runTraceId(runId: string): string {
  return createHash('sha256').update(`keel.trace:${runId}`).digest('hex').slice(0, 32);
}

/** The span id (16 hex digits) of a run's root span. */
export function runRootSpanId(runId: string): string {
  return createHash('sha256').update(`keel.root:${runId}`).digest('hex').slice(0, 16);
}

/** A context whose parent is the run's root span (recorded by whichever process ends the run). */
export function runContext(runId: string): Context {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: runTraceId(runId),
    spanId: runRootSpanId(runId),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
}

export interface SpanRecord {
  name: string;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  error?: string | undefined;
}

/** Records a finished child span of the run's root. */
export function recordRunChildSpan(runId: string, span: SpanRecord): void {
  const active = activeTracing();
  if (active === undefined) return;
  const s = active.tracer.startSpan(
    span.name,
    { startTime: new Date(span.startMs), attributes: span.attributes, kind: SpanKind.INTERNAL },
    runContext(runId),
  );
  if (span.error !== undefined) s.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
  s.end(new Date(Math.max(span.startMs, span.endMs)));
}

/**
 * Records the run's root span, with the ids every child already points at. A child run is its own
 * trace, linked to its parent run's root span.
 */
export function recordRunRootSpan(
  runId: string,
  span: SpanRecord,
  parentRunId?: string | null,
): void {
  const active = activeTracing();
  if (active === undefined) return;
  const links =
    parentRunId == null
      ? []
      : [
          {
            context: {
              traceId: runTraceId(parentRunId),
              spanId: runRootSpanId(parentRunId),
              traceFlags: TraceFlags.SAMPLED,
            },
          },
        ];
  // The SDK takes ids from its generator; startSpan is synchronous, so the override covers exactly
  // this span.
  active.ids.next = { traceId: runTraceId(runId), spanId: runRootSpanId(runId) };
  const s = active.tracer.startSpan(span.name, {
    startTime: new Date(span.startMs),
    attributes: span.attributes,
    kind: SpanKind.INTERNAL,
    root: true,
    links,
  });
  active.ids.next = undefined;
  if (span.error !== undefined) s.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
  s.end(new Date(Math.max(span.startMs, span.endMs)));
}

/**
 * Runs `fn` inside a span (a child of the run's root when `runId` is given), ending it when `fn`
 * settles; a thrown error marks the span failed and is rethrown. With tracing off it only calls
 * `fn`.
 * @example
 * const env = await withSpan('sandbox.create', { runId, attributes: { 'keel.sandbox.node': node } }, () => node.create(spec));
 */
export async function withSpan<T>(
  name: string,
  options: { runId?: string; attributes?: Attributes },
  fn: () => Promise<T>,
): Promise<T> {
  const active = tracingEnabled() ? activeTracing() : undefined;
  if (active === undefined) return fn();
  const parent = options.runId === undefined ? ROOT_CONTEXT : runContext(options.runId);
  const span = active.tracer.startSpan(name, { attributes: options.attributes ?? {} }, parent);
  try {
    return await fn();
  } catch (error) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    span.end();
  }
}
