// OpenTelemetry tracing: sets up the SDK's tracer provider and OTLP/HTTP exporter from Keel's
// configuration (the standard OTEL_* variables), or nothing at all. Off by default: then
// `tracingEnabled()` is false, no provider is built, and callers skip building spans (the API's
// tracer is a no-op). It never throws into the caller's path.
import { randomBytes } from 'node:crypto';
import { trace, type Tracer } from '@opentelemetry/api';
import type { IdGenerator, SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import type { KeelConfig } from '../config/config.ts';

const TRACER_NAME = 'keel';
/**
 * Spans buffered before the exporter drops new ones (bounded, so a dead collector cannot grow
 * memory).
 */
export const SPAN_QUEUE_MAX = 8192;
export const SPAN_EXPORT_BATCH_MAX = 512;
export const SPAN_EXPORT_DELAY_MS = 1000;

export interface TracingOptions {
  exporter: 'none' | 'otlp' | 'console';
  serviceName: string;
  /** Full URL spans are POSTed to (…/v1/traces); undefined: the exporter's default. */
  url: string | undefined;
  includeContent: boolean;
}

/**
 * Tracing is on when OTEL_TRACES_EXPORTER is `otlp` or `console`, or when it is unset and an OTLP
 * endpoint is configured; OTEL_SDK_DISABLED=true turns it off whatever else is set.
 */
export function tracingOptionsFrom(config: KeelConfig): TracingOptions {
  const endpoint =
    config.otelExporterOtlpTracesEndpoint ??
    (config.otelExporterOtlpEndpoint === undefined
      ? undefined
      : `${config.otelExporterOtlpEndpoint.replace(/\/+$/, '')}/v1/traces`);
  const exporter = config.otelSdkDisabled
    ? 'none'
    : (config.otelTracesExporter ?? (endpoint !== undefined ? 'otlp' : 'none'));
  return {
    exporter,
    serviceName: config.otelServiceName,
    url: endpoint,
    includeContent: config.telemetryIncludeContent,
  };
}

/**
 * Hands out the ids of the next span when told to: a run's root span gets ids derived from the run
 * id (see run-spans.ts), so every process that records part of a run lands in the same trace.
 * Random otherwise.
 */
class OverridableIdGenerator implements IdGenerator {
  next: { traceId: string; spanId: string } | undefined;
  generateTraceId(): string {
    return this.next?.traceId ?? randomBytes(16).toString('hex');
  }
  generateSpanId(): string {
    return this.next?.spanId ?? randomBytes(8).toString('hex');
  }
}

interface TracingState {
  provider: TracerProvider;
  tracer: Tracer;
  ids: OverridableIdGenerator;
  includeContent: boolean;
}

let state: TracingState | undefined;

export function tracingEnabled(): boolean {
  return state !== undefined;
}

/**
 * Whether prompts, tool arguments and results may go into spans (KEEL_TELEMETRY_INCLUDE_CONTENT).
 */
export function contentIncluded(): boolean {
  return state?.includeContent ?? false;
}

/** The tracer and the id override, for run-spans.ts; undefined when tracing is off. */
export function activeTracing(): Pick<TracingState, 'tracer' | 'ids'> | undefined {
  return state;
}

/**
 * Starts tracing for this process (once); returns its shutdown, which flushes buffered spans. The
 * SDK and the exporter are loaded only here, so a process with tracing off never loads them.
 */
export async function startTracing(options: TracingOptions): Promise<() => Promise<void>> {
  if (options.exporter === 'none' || state !== undefined) return async () => {};
  const [
    { BatchSpanProcessor, ConsoleSpanExporter, TracerProvider },
    { OTLPTraceExporter },
    { resourceFromAttributes },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const exporter: SpanExporter =
    options.exporter === 'console'
      ? new ConsoleSpanExporter()
      : new OTLPTraceExporter(options.url === undefined ? {} : { url: options.url });
  const ids = new OverridableIdGenerator();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    idGenerator: ids,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: SPAN_QUEUE_MAX,
        maxExportBatchSize: SPAN_EXPORT_BATCH_MAX,
        scheduledDelayMillis: SPAN_EXPORT_DELAY_MS,
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  const current = {
    provider,
    tracer: provider.getTracer(TRACER_NAME),
    ids,
    includeContent: options.includeContent,
  };
  state = current;
  return async () => {
    if (state !== current) return;
    state = undefined;
    await provider.shutdown().catch(() => {});
    trace.disable();
  };
}
