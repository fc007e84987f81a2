// The MCP client pool against a real server (@modelcontextprotocol/server-everything over stdio in
// the namespace sandbox): an idle session is closed (its server exits), a server that dies is
// started again on the next call (the call in flight when it died fails typed), an HTTP origin
// outside the allowlist is refused before any request, and the servers file is validated whole.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { McpClientPool } from '../src/tools/mcp/client-pool.ts';
import { parseMcpServerConfig } from '../src/sdk/mcp-server-config.ts';
import { readMcpServersFile } from '../src/tools/mcp/servers-file.ts';
import { pinTools } from '../src/tools/mcp/tool-pin.ts';

const MODULES = fileURLToPath(new URL('../node_modules/', import.meta.url)).replace(/\/$/, '');
const EVERYTHING = `${MODULES}/@modelcontextprotocol/server-everything/dist/index.js`;
const EXAMPLE = fileURLToPath(new URL('../examples/mcp-servers.json', import.meta.url));
const bwrapUsable =
  process.platform === 'linux' && existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;
const call = { executionId: 'run_test.1', signal: new AbortController().signal };

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
  const pool = new McpClientPool({ allowedOrigins: [], env: () => undefined, idleCloseMs: 300 });
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
  const pool = new McpClientPool({ allowedOrigins: [], env: () => undefined });
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
  });
  const config = parseMcpServerConfig({
    name: 'remote',
    transport: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
  });
  await assert.rejects(pool.listTools('tenant-a', config), { code: 'mcp_origin_not_allowed' });
  await pool.close();
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
