import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../config/config.ts';
import { recordRunChildSpan, runRootSpanId, runTraceId, withSpan } from './run-spans.ts';
import { tracingEnabled, tracingOptionsFrom } from './tracing.ts';

const options = (env: Record<string, string>) => tracingOptionsFrom(loadConfig(env).config);

describe('tracing configuration', () => {
  it('is off by default and content is redacted', () => {
    assert.deepEqual(options({}), {
      exporter: 'none',
      serviceName: 'keel',
      url: undefined,
      includeContent: false,
    });
  });
  it('an OTLP endpoint alone turns OTLP export on, to its /v1/traces', () => {
    assert.deepEqual(options({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }), {
      exporter: 'otlp',
      serviceName: 'keel',
      url: 'http://c:4318/v1/traces',
      includeContent: false,
    });
  });
  it('the traces endpoint wins over the base endpoint; OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED turn it off', () => {
    assert.equal(
      options({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/x',
      }).url,
      'http://b/x',
    );
    assert.equal(
      options({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'none' })
        .exporter,
      'none',
    );
    assert.equal(
      options({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).exporter,
      'none',
    );
    assert.equal(
      options({ OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'k' }).serviceName,
      'k',
    );
  });
  it('refuses an exporter it does not support, naming the variable', () => {
    assert.throws(() => loadConfig({ OTEL_TRACES_EXPORTER: 'zipkin' }), /OTEL_TRACES_EXPORTER/);
  });
});

describe('run spans', () => {
  it('derive one trace id and root span id per run, the same in every process', () => {
    assert.match(runTraceId('run_a'), /^[0-9a-f]{32}$/);
    assert.match(runRootSpanId('run_a'), /^[0-9a-f]{16}$/);
    assert.equal(runTraceId('run_a'), runTraceId('run_a'));
    assert.notEqual(runTraceId('run_a'), runTraceId('run_b'));
  });
  it('with tracing off, recording is a no-op and withSpan only runs the function', async () => {
    assert.equal(tracingEnabled(), false);
    recordRunChildSpan('run_a', { name: 'x', startMs: 1, endMs: 2, attributes: {} });
    assert.equal(await withSpan('x', { runId: 'run_a' }, async () => 42), 42);
    await assert.rejects(
      withSpan('x', {}, async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
  });
});
