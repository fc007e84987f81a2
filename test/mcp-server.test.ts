// Keel as an MCP server (POST /v1/mcp), driven by the MCP SDK's own client over streamable HTTP
// against a real `keel dev` process: the agents are listed as tools (input schemas from their zod
// contracts), calling one runs it and returns its result with progress notifications from the
// run's events, a run longer than the wait answers with its id and keel_get_run returns its result
// later, and keys are checked: no key is refused (401), a read-only key cannot start runs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startKeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/mcp-agents.ts', import.meta.url));
const KEY = 'mcp-server-test-key';

async function connect(url: string, key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'keel-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/v1/mcp', url), {
      requestInit: { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

test('Keel as an MCP server: agents as tools, results, progress, long runs by id, auth', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-mcp-server-'));
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey: KEY,
  });
  t.after(async () => {
    await keel.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const client = await connect(keel.url, KEY);
  t.after(() => client.close());

  const { tools } = await client.listTools();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  assert.ok(byName.has('keel_get_run'));
  assert.deepEqual(byName.get('greet')?.inputSchema.properties, { name: { type: 'string' } });
  assert.deepEqual(byName.get('greet')?.inputSchema.required, ['name']);
  // A non-object contract travels in an `input` argument.
  assert.deepEqual(Object.keys(byName.get('slow-greet')?.inputSchema.properties ?? {}), ['input']);

  // A call runs the agent and answers with its result, reporting the run's events as progress.
  const progress: string[] = [];
  const greeted = await client.callTool({ name: 'greet', arguments: { name: 'ada' } }, undefined, {
    onprogress: (p) => progress.push(p.message ?? ''),
  });
  assert.equal(greeted.isError, undefined);
  const structured = greeted.structuredContent as any;
  assert.equal(structured.status, 'succeeded');
  assert.deepEqual(structured.result, { greeting: 'hello ADA' });
  assert.match(structured.runId, /^run_/);
  // The run's own events, in order: it was created, started, its two steps completed, it ended.
  assert.equal(progress[0], 'run.created', progress.join());
  assert.ok(progress.includes('run.started'), progress.join());
  assert.equal(progress.filter((m) => m === 'effect.completed').length, 2, progress.join());
  assert.equal(progress.at(-1), 'run.succeeded', progress.join());

  // Bad input is the agent contract's refusal, as a tool error (no run).
  const refused = await client.callTool({ name: 'greet', arguments: { name: 7 } });
  assert.equal(refused.isError, true);
  assert.match((refused.content as any)[0].text, /^agent_input_invalid/);

  // Longer than the wait: the run id comes back; keel_get_run waits for the result.
  const slow = await client.callTool({
    name: 'slow-greet',
    arguments: { input: 'bob' },
    _meta: { 'io.keel/waitMs': 200 },
  });
  const pending = slow.structuredContent as any;
  assert.notEqual(pending.status, 'succeeded');
  assert.match((slow.content as any)[0].text, /keel_get_run/);
  const polled = await client.callTool({
    name: 'keel_get_run',
    arguments: { runId: pending.runId, waitMs: 60_000 },
  });
  assert.deepEqual((polled.structuredContent as any).result, {
    greeting: 'hello bob, eventually',
  });
  const unknown = await client.callTool({ name: 'keel_get_run', arguments: { runId: 'run_nope' } });
  assert.equal(unknown.isError, true);

  // No key: the endpoint refuses before MCP starts.
  await assert.rejects(connect(keel.url, undefined), /401|unauthorized/i);
  // A read-only key lists tools and polls, but cannot start runs.
  const created = await fetch(`${keel.url}/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'mcp-reader', scopes: ['read'] }),
  });
  assert.equal(created.status, 201);
  const reader = await connect(keel.url, ((await created.json()) as any).secret);
  t.after(() => reader.close());
  assert.ok((await reader.listTools()).tools.length > 1);
  const forbidden = await reader.callTool({ name: 'greet', arguments: { name: 'x' } });
  assert.equal(forbidden.isError, true);
  assert.match((forbidden.content as any)[0].text, /^forbidden_scope/);
});
