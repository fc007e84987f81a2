// Traces from a real `keel dev` process, exported over OTLP/HTTP (JSON) to a receiver this test
// runs: a run with a model call, two parallel tool calls and a wait answered through the API forms
// one trace whose root is the run, with each effect a child carrying its queue and execution time.
// Content is redacted unless turned on.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runRootSpanId, runTraceId } from '../src/telemetry/run-spans.ts';
import { startKeelProcess } from './support/keel-process.ts';
import { client, until } from './support/telemetry.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/telemetry-agents.ts', import.meta.url));
const KEY = 'trace-tenant-key';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number; message?: string };
}

interface Received {
  service: string | undefined;
  span: OtlpSpan;
}

/** OTLP/JSON ids are hex; accept base64 too, which some encoders emit. */
const hex = (id: string | undefined) =>
  id === undefined || id === ''
    ? ''
    : /^[0-9a-f]+$/i.test(id)
      ? id.toLowerCase()
      : Buffer.from(id, 'base64').toString('hex');
const attr = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (value === undefined) return undefined;
  const v = Object.values(value)[0];
  return typeof v === 'string' && 'intValue' in value ? Number(v) : v;
};
const ms = (nanos: string) => Number(BigInt(nanos) / 1_000_000n);

/** An OTLP/HTTP trace receiver: POST /v1/traces with JSON bodies. */
async function startReceiver(): Promise<{
  url: string;
  spans: Received[];
  bodies: string[];
  server: Server;
}> {
  const spans: Received[] = [];
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      assert.equal(request.url, '/v1/traces');
      assert.match(request.headers['content-type'] ?? '', /application\/json/);
      bodies.push(body);
      const parsed = JSON.parse(body) as {
        resourceSpans: Array<{
          resource?: { attributes?: OtlpSpan['attributes'] };
          scopeSpans: Array<{ spans: OtlpSpan[] }>;
        }>;
      };
      for (const rs of parsed.resourceSpans) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value
          .stringValue as string | undefined;
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ service, span });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, spans, bodies, server };
}

async function runTraced(url: string): Promise<string> {
  const api = client(url, KEY);
  const id = (await api('POST', '/v1/runs', { agent: 'traced', input: { topic: 'tracing' } })).body
    .id as string;
  await until('the run to wait for approval', async () =>
    (await api('GET', `/v1/runs/${id}`)).body.status === 'waiting' ? true : undefined,
  );
  await new Promise((r) => setTimeout(r, 150)); // the wait has a visible length in its span
  assert.equal(
    (await api('POST', `/v1/runs/${id}/input`, { key: 'approval', value: 'approved' })).status,
    202,
  );
  await until('the run to succeed', async () =>
    (await api('GET', `/v1/runs/${id}`)).body.status === 'succeeded' ? true : undefined,
  );
  return id;
}

test('traces: a run is one trace — root run span; model, two parallel tools, the wait and commits as children', {
  timeout: 120_000,
}, async (t) => {
  const receiver = await startReceiver();
  const dir = mkdtempSync(join(tmpdir(), 'keel-traces-'));
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey: KEY,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'keel-trace-test' },
  });
  t.after(async () => {
    await keel.kill('SIGKILL');
    receiver.server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const runId = await runTraced(keel.url);
  const traceId = runTraceId(runId);
  const rootId = runRootSpanId(runId);
  await until('the root span to be exported', async () =>
    receiver.spans.some((r) => hex(r.span.spanId) === rootId) ? true : undefined,
  );

  const spans = receiver.spans.filter((r) => hex(r.span.traceId) === traceId).map((r) => r.span);
  assert.ok(
    receiver.spans.every((r) => r.service === 'keel-trace-test'),
    'OTEL_SERVICE_NAME names the service',
  );
  const root = spans.find((s) => hex(s.spanId) === rootId)!;
  assert.equal(hex(root.parentSpanId), '', 'the run span is the root');
  assert.equal(root.name, 'run traced');
  assert.equal(attr(root, 'keel.run.id'), runId);
  assert.equal(attr(root, 'keel.run.status'), 'succeeded');
  assert.equal(typeof attr(root, 'keel.tenant.id'), 'string');
  const children = spans.filter((s) => s !== root);
  for (const child of children)
    assert.equal(hex(child.parentSpanId), rootId, `${child.name} is a child of the run`);
  for (const child of children) {
    assert.ok(
      ms(child.startTimeUnixNano) >= ms(root.startTimeUnixNano) &&
        ms(child.endTimeUnixNano) <= ms(root.endTimeUnixNano) + 1,
      `${child.name} lies within the run`,
    );
  }

  const model = children.filter((s) => s.name === 'model priced');
  assert.equal(model.length, 1);
  assert.equal(attr(model[0]!, 'gen_ai.system'), 'mock');
  assert.equal(attr(model[0]!, 'gen_ai.request.model'), 'priced');
  assert.ok(Number(attr(model[0]!, 'gen_ai.usage.input_tokens')) > 0);
  assert.ok(Number(attr(model[0]!, 'gen_ai.usage.output_tokens')) > 0);
  assert.ok(Number(attr(model[0]!, 'keel.model.cost_usd')) > 0);

  const tools = children.filter((s) => s.name === 'tool lookup');
  assert.equal(tools.length, 2);
  const [a, b] = tools as [OtlpSpan, OtlpSpan];
  assert.notEqual(attr(a, 'keel.tool.execution_id'), attr(b, 'keel.tool.execution_id'));
  for (const tool of tools) {
    assert.match(String(attr(tool, 'keel.tool.execution_id')), new RegExp(`^${runId}\\.\\d+$`));
    assert.equal(attr(tool, 'keel.effect.status'), 'succeeded');
    assert.ok(Number(attr(tool, 'keel.effect.execution_ms')) >= 90, 'a 100 ms tool');
    assert.equal(typeof attr(tool, 'keel.effect.queue_ms'), 'number');
  }
  assert.ok(
    ms(a.startTimeUnixNano) < ms(b.endTimeUnixNano) &&
      ms(b.startTimeUnixNano) < ms(a.endTimeUnixNano),
    'the two tool calls overlap: they ran in parallel',
  );

  const wait = children.filter((s) => s.name === 'input approval');
  assert.equal(wait.length, 1);
  assert.ok(Number(attr(wait[0]!, 'keel.effect.queue_ms')) >= 150, 'the wait is queue time');
  assert.equal(attr(wait[0]!, 'keel.effect.execution_ms'), 0);
  assert.ok(
    ms(wait[0]!.startTimeUnixNano) >= Math.max(ms(a.endTimeUnixNano), ms(b.endTimeUnixNano)) - 1,
    'the wait follows the tools',
  );

  const commits = children.filter((s) => s.name === 'keel.commit');
  assert.ok(commits.length >= 4, 'model, two tools, park, input and the end each commit');
  for (const commit of commits) assert.ok(Number(attr(commit, 'keel.commit.batch_size')) >= 1);
  assert.ok(
    commits.some((c) => attr(c, 'keel.run.status') === 'waiting') &&
      commits.some((c) => attr(c, 'keel.run.status') === 'succeeded'),
  );

  // Redaction by default: no prompt, argument or result reached the collector.
  assert.equal(attr(tools[0]!, 'keel.tool.args'), '[redacted]');
  assert.equal(attr(model[0]!, 'keel.effect.result'), '[redacted]');
  assert.equal(attr(model[0]!, 'keel.model.prompt'), '[redacted]');
  assert.ok(
    !receiver.bodies.join('').includes('secret'),
    'nothing of the run’s content was exported',
  );
});

test('traces: KEEL_TELEMETRY_INCLUDE_CONTENT=true puts arguments and results into spans', {
  timeout: 60_000,
}, async (t) => {
  const receiver = await startReceiver();
  const dir = mkdtempSync(join(tmpdir(), 'keel-traces-'));
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey: KEY,
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      KEEL_TELEMETRY_INCLUDE_CONTENT: 'true',
    },
  });
  t.after(async () => {
    await keel.kill('SIGKILL');
    receiver.server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const runId = await runTraced(keel.url);
  const rootId = runRootSpanId(runId);
  await until('the root span to be exported', async () =>
    receiver.spans.some((r) => hex(r.span.spanId) === rootId) ? true : undefined,
  );
  const tools = receiver.spans.map((r) => r.span).filter((s) => s.name === 'tool lookup');
  assert.deepEqual(tools.map((s) => JSON.parse(String(attr(s, 'keel.tool.args'))).q).sort(), [
    'alpha-secret',
    'beta-secret',
  ]);
  const model = receiver.spans.map((r) => r.span).find((s) => s.name === 'model priced')!;
  assert.match(String(attr(model, 'keel.effect.result')), /secret prompt about tracing/);
  assert.deepEqual(JSON.parse(String(attr(model, 'keel.model.prompt'))), [
    { role: 'user', content: 'secret prompt about tracing' },
  ]);

  // A child run is its own trace, linked to its parent run's root span.
  const api = client(keel.url, KEY);
  const parentId = (await api('POST', '/v1/runs', { agent: 'parent', input: null })).body
    .id as string;
  await until('the parent to succeed', async () =>
    (await api('GET', `/v1/runs/${parentId}`)).body.status === 'succeeded' ? true : undefined,
  );
  const childRoot = await until('the child run’s root span', async () =>
    receiver.spans
      .map((r) => r.span as OtlpSpan & { links?: Array<{ traceId: string; spanId: string }> })
      .find((s) => s.name === 'run spender' && attr(s, 'keel.run.parent_id') === parentId),
  );
  assert.deepEqual(
    childRoot.links?.map((l) => [hex(l.traceId), hex(l.spanId)]),
    [[runTraceId(parentId), runRootSpanId(parentId)]],
  );
});
