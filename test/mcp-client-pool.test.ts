// The MCP client pool against a real server (@modelcontextprotocol/server-everything over stdio in
// the namespace sandbox): an idle session is closed (its server exits), a server that dies is
// started again on the next call (the call in flight when it died fails typed), an HTTP origin
// outside the allowlist is refused before any request, and the servers file is validated whole.
// The tool source on a real SQLite store: a run keeps the tool list it pinned, and a tool that
// changed under the pin is refused (mcp_tools_changed) while a new run pins the new list.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test, type TestContext } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EgressRecord, SecretUse } from '../src/sandbox/egress/egress-proxy.ts';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { McpClientPool } from '../src/tools/mcp/client-pool.ts';
import { parseMcpServerConfig } from '../src/sdk/mcp-server-config.ts';
import { readMcpServersFile } from '../src/tools/mcp/servers-file.ts';
import { pinTools } from '../src/tools/mcp/tool-pin.ts';
import { McpToolSource } from '../src/tools/mcp/tool-source.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { defineAgent } from '../src/sdk/define.ts';
import type { RunRecord } from '../src/domain/records.ts';
import { newManager } from './support/sandbox.ts';

const MODULES = fileURLToPath(new URL('../node_modules/', import.meta.url)).replace(/\/$/, '');
const EVERYTHING = `${MODULES}/@modelcontextprotocol/server-everything/dist/index.js`;
const EXAMPLE = fileURLToPath(new URL('../examples/mcp-servers.json', import.meta.url));
const bwrapUsable =
  process.platform === 'linux' && existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;
const call = { executionId: 'run_test.1', signal: new AbortController().signal };
// The node's sandbox manager, which runs the stdio servers.
const node = newManager();
after(() => node.cleanup());
const sandboxes = () => node.manager;

/** A server-everything config whose processes carry `marker` on their command line. */
function everything(marker: string) {
  return parseMcpServerConfig({
    name: 'everything',
    transport: {
      type: 'stdio',
      command: process.execPath,
      args: [EVERYTHING, 'stdio', marker],
      readOnlyPaths: [MODULES],
    },
  });
}

/** Pids of the server processes (the node inside the sandbox) carrying `marker`. */
function serverPids(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0] === process.execPath && argv.includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function until(what: string, predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('idle sessions close, and their sandboxed server exits', {
  skip: !bwrapUsable && 'needs root and bubblewrap',
}, async (t) => {
  const pool = new McpClientPool({
    allowedOrigins: [],
    env: () => undefined,
    sandboxes,
    idleCloseMs: 300,
  });
  t.after(() => pool.close());
  const marker = `keel-pool-${randomUUID()}`;
  const config = everything(marker);
  const pin = pinTools(config, await pool.listTools('tenant-a', config));
  assert.equal(pin.tools.find((tool) => tool.name === 'echo')?.effect, 'read');
  assert.equal(
    pin.tools.find((tool) => tool.name === 'toggle-simulated-logging')?.effect,
    'side-effect',
  );
  assert.equal(
    pinTools(config, await pool.listTools('tenant-a', config)).hash,
    pin.hash,
    'a stable hash',
  );
  assert.equal(pool.openSessions(), 1);
  assert.equal(serverPids(marker).length, 1);
  await until('the idle close', () => pool.openSessions() === 0);
  await until('the server to exit', () => serverPids(marker).length === 0);
});

test('a server that dies is started again; the call it was serving fails as mcp_server_unavailable', {
  skip: !bwrapUsable && 'needs root and bubblewrap',
}, async (t) => {
  const pool = new McpClientPool({ allowedOrigins: [], env: () => undefined, sandboxes });
  t.after(() => pool.close());
  const marker = `keel-pool-${randomUUID()}`;
  const config = everything(marker);
  const answer = await pool.callTool('tenant-a', config, 'echo', { message: 'one' }, call);
  assert.deepEqual(answer, { content: [{ type: 'text', text: 'Echo: one' }] });
  const [first] = serverPids(marker);
  assert.ok(first !== undefined);
  const inFlight = pool.callTool(
    'tenant-a',
    config,
    'trigger-long-running-operation',
    { duration: 5, steps: 5 },
    call,
  );
  await new Promise((r) => setTimeout(r, 300));
  process.kill(first, 'SIGKILL'); // a process of our own test's server
  await assert.rejects(inFlight, { code: 'mcp_server_unavailable' });
  const again = await pool.callTool('tenant-a', config, 'echo', { message: 'two' }, call);
  assert.deepEqual(again, { content: [{ type: 'text', text: 'Echo: two' }] });
  const [second] = serverPids(marker);
  assert.ok(second !== undefined && second !== first, 'a new server process');
  // Tenants never share a session, even with the same configuration.
  await pool.callTool('tenant-b', config, 'echo', { message: 'b' }, call);
  assert.equal(serverPids(marker).length, 2);
});

test('an HTTP origin outside the allowlist is refused before any request', async () => {
  const pool = new McpClientPool({
    allowedOrigins: ['https://allowed.example'],
    env: () => undefined,
    sandboxes,
  });
  const config = parseMcpServerConfig({
    name: 'remote',
    transport: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
  });
  await assert.rejects(pool.listTools('tenant-a', config), { code: 'mcp_origin_not_allowed' });
  await pool.close();
});

/**
 * A stateless streamable-HTTP MCP server on loopback with one tool, `hello`; `headers` collects
 * each request's headers.
 */
async function httpServer(
  t: TestContext,
): Promise<{ port: number; headers: IncomingHttpHeaders[] }> {
  const headers: IncomingHttpHeaders[] = [];
  const http = createServer(async (req, res) => {
    headers.push(req.headers);
    const server = new McpServer({ name: 'hello', version: '1.0.0' });
    server.registerTool('hello', { inputSchema: {} }, async () => ({
      content: [{ type: 'text', text: 'hello over http' }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  t.after(() => http.close());
  return { port: (http.address() as AddressInfo).port, headers };
}

test('HTTP servers: the address is checked at connect, secret headers are revealed and audited, each request is recorded', async (t) => {
  const { port, headers } = await httpServer(t);
  const records: EgressRecord[] = [];
  const uses: Array<[string, string, SecretUse]> = [];
  const pool = new McpClientPool({
    allowedOrigins: [`http://127.0.0.1:${port}`, `http://localhost:${port}`],
    env: () => undefined,
    sandboxes,
    onEgress: (record) => records.push(record),
    revealSecret: async (tenantId, ref, use) => {
      uses.push([tenantId, ref, use]);
      return 'tok-3b9e';
    },
  });
  t.after(() => pool.close());
  const config = (host: string) =>
    parseMcpServerConfig({
      name: 'remote',
      transport: {
        type: 'http',
        url: `http://${host}:${port}/mcp`,
        secretHeaders: [{ header: 'Authorization', secret: 'secret:REMOTE_TOKEN' }],
      },
    });
  const answer = await pool.callTool('tenant-a', config('127.0.0.1'), 'hello', {}, call);
  assert.deepEqual(answer, { content: [{ type: 'text', text: 'hello over http' }] });
  assert.ok(headers.length >= 2 && headers.every((h) => h.authorization === 'Bearer tok-3b9e'));
  assert.deepEqual(uses, [
    [
      'tenant-a',
      'secret:REMOTE_TOKEN',
      { runId: '', executionId: null, via: 'header', destination: `127.0.0.1:${port}` },
    ],
  ]);
  assert.ok(records.length >= 2);
  for (const record of records)
    assert.deepEqual(
      [record.tenantId, record.service, record.destination, record.address, record.verdict],
      ['tenant-a', 'mcp:remote', `127.0.0.1:${port}`, '127.0.0.1', 'allowed'],
    );
  // An allowed origin by name that resolves to a loopback address is refused at connect: only an
  // origin naming the address itself reaches a non-public one (no DNS rebinding into the node).
  const before = headers.length;
  await assert.rejects(pool.listTools('tenant-a', config('localhost')), (error: any) => {
    assert.match(String(error.message), /not a public address/);
    return true;
  });
  assert.equal(headers.length, before, 'nothing reached the server');
  assert.deepEqual(
    records.slice(-1).map((r) => [r.destination, r.verdict]),
    [[`localhost:${port}`, 'denied']],
  );
});

test('the servers file: the example parses; a bad server names its place', () => {
  const example = readMcpServersFile(EXAMPLE);
  assert.deepEqual(
    example.get('dev')?.map((s) => [s.name, s.transport.type]),
    [
      ['everything', 'stdio'],
      ['files', 'stdio'],
      ['search', 'http'],
    ],
  );
  const dir = mkdtempSync(join(tmpdir(), 'keel-mcp-file-'));
  try {
    const file = join(dir, 'servers.json');
    writeFileSync(
      file,
      JSON.stringify({
        tenants: { dev: [{ name: 'x', transport: { type: 'stdio', command: 'node' } }] },
      }),
    );
    assert.throws(() => readMcpServersFile(file), /tenants\.dev\[0\].*transport\.command/);
    // The sandbox is checked whole against the profile schema by the node (the SDK checks its shape).
    const badSandbox = {
      name: 'x',
      transport: { type: 'stdio', command: '/usr/bin/true', sandbox: { limits: { pidsMax: 1 } } },
    };
    writeFileSync(file, JSON.stringify({ tenants: { dev: [badSandbox] } }));
    assert.throws(() => readMcpServersFile(file), /transport\.sandbox\.limits\.pidsMax/);
    assert.doesNotThrow(() => parseMcpServerConfig(badSandbox), 'the SDK checks only the shape');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a run keeps the tools it pinned: a server whose tool changed under the pin is refused, typed', {
  skip: !bwrapUsable && 'needs root and bubblewrap',
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-mcp-pin-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const pool = new McpClientPool({ allowedOrigins: [], env: () => undefined, sandboxes });
  t.after(async () => {
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const source = new McpToolSource({ store, pool });
  const marker = `keel-pool-${randomUUID()}`;
  const agentWith = (effects: Record<string, 'read' | 'side-effect'>) =>
    defineAgent({
      name: 'pinned',
      version: '1',
      mcpServers: [{ ...everything(marker), effects }],
      run: async () => null,
    });
  const run = { id: 'run_pinned', tenantId: 'tenant-a' } as RunRecord;
  const ctx = {
    executionId: 'run_pinned.1',
    runId: run.id,
    tenantId: 'tenant-a',
    attempt: 1,
    signal: new AbortController().signal,
    node: { dataDir: undefined, sandboxManager: () => undefined },
  };
  const first = await source.resolve(run, agentWith({}), 'everything', 'echo');
  assert.equal(first.effect, 'read');
  assert.deepEqual(await first.run({ message: 'pinned' }, ctx), {
    content: [{ type: 'text', text: 'Echo: pinned' }],
  });
  const pinned = await store.getMcpToolPin(run.id, 'everything');
  assert.ok(pinned !== null);
  // The configuration now says echo is a side effect: the run still resolves echo as it pinned it,
  // and refuses to call it while the live server's echo differs from the pin.
  const later = await source.resolve(run, agentWith({ echo: 'side-effect' }), 'everything', 'echo');
  assert.equal(later.effect, 'read');
  await assert.rejects(Promise.resolve(later.run({ message: 'changed' }, ctx)), {
    code: 'mcp_tools_changed',
  });
  // Another tool of the same server, unchanged, is still called.
  const sum = await source.resolve(
    run,
    agentWith({ echo: 'side-effect' }),
    'everything',
    'get-sum',
  );
  assert.match(JSON.stringify(await sum.run({ a: 1, b: 2 }, ctx)), /3/);
  // A new run pins the new list.
  const fresh = await source.resolve(
    { ...run, id: 'run_fresh' },
    agentWith({ echo: 'side-effect' }),
    'everything',
    'echo',
  );
  assert.equal(fresh.effect, 'side-effect');
  await assert.rejects(source.resolve(run, agentWith({}), 'everything', 'nope'), {
    code: 'mcp_tool_not_found',
  });
  await assert.rejects(source.resolve(run, agentWith({}), 'elsewhere', 'echo'), {
    code: 'mcp_server_not_found',
  });
});
