// MCP servers' tools as Keel tools, against real servers from npm nobody here wrote, through a real
// `keel dev` process: @modelcontextprotocol/server-everything over stdio (in the namespace sandbox)
// and over streamable HTTP (configured for the tenant by the admin API, allowed by origin), and
// @modelcontextprotocol/server-filesystem over stdio in the sandbox on a workspace directory. Then
// kill -9 while a slow MCP call is in flight: a read call runs again after the restart, a side
// effect becomes an unknown outcome resolved with `keel runs resolve`.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from './support/keel-process.ts';
import { keelScene, type KeelScene } from './support/keel-scene.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/mcp-agents.ts', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const EVERYTHING = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);
const KEY = 'mcp-tools-test-key';
const ADMIN = 'mcp-tools-admin-key-0123456789';
const bwrapUsable =
  process.platform === 'linux' && existsSync('/usr/bin/bwrap') && process.getuid?.() === 0;

function scene(t: TestContext): Promise<KeelScene> {
  return keelScene(t, {
    agents: AGENTS,
    apiKey: KEY,
    prefix: 'keel-mcp-',
    env: () => ({ KEEL_ADMIN_KEY: ADMIN }),
    untilMs: 60_000,
  });
}

const textOf = (answer: any): string => answer.content.map((c: any) => c.text ?? '').join('');

test('stdio server-everything in the sandbox: tools called as journaled effects, effect classes from annotations', {
  skip: !bwrapUsable && 'needs root and bubblewrap',
}, async (t) => {
  const s = await scene(t);
  await s.start();
  const res = await s.api('POST', '/v1/runs', {
    agent: 'mcp-echo',
    input: { message: 'hello mcp' },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const run = await s.until(res.body.id, (r) => r.status === 'succeeded' || r.status === 'failed');
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.equal(textOf(run.result.echo), 'Echo: hello mcp');
  assert.match(textOf(run.result.sum), /\b5\b/);
  const steps = (await s.api('GET', `/v1/runs/${run.id}/steps`)).body.steps;
  assert.deepEqual(
    steps.map((st: any) => [st.name, st.status, st.effectClass, st.executionId]),
    [
      ['mcp.everything.echo', 'succeeded', 'read', `${run.id}.1`],
      ['mcp.everything.get-sum', 'succeeded', 'read', `${run.id}.2`],
    ],
  );
  // A tool the pinned list lacks is a typed, journaled failure.
  const missing = await s.api('POST', '/v1/runs', { agent: 'mcp-missing', input: null });
  const ended = await s.until(missing.body.id, (r) => r.status === 'succeeded');
  assert.deepEqual(ended.result, { code: 'mcp_tool_not_found' });
});

test('stdio server-filesystem in the sandbox: writes land in the workspace, nothing else of the host is writable', {
  skip: !bwrapUsable && 'needs root and bubblewrap',
}, async (t) => {
  const s = await scene(t);
  const workspace = join(s.dir, 'workspace');
  mkdirSync(workspace);
  chmodSync(s.dir, 0o755); // nobody must reach the workspace to bind it
  chownSync(workspace, 65_534, 65_534); // the sandboxed server runs as nobody
  await s.start({ KEEL_TEST_MCP_WORKSPACE: workspace });
  const res = await s.api('POST', '/v1/runs', {
    agent: 'mcp-files',
    input: { name: 'note.txt', text: 'written through MCP' },
  });
  const run = await s.until(res.body.id, (r) => r.status === 'succeeded' || r.status === 'failed');
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.equal(readFileSync(join(workspace, 'note.txt'), 'utf8'), 'written through MCP');
  assert.match(textOf(run.result.listing), /note\.txt/);
  assert.equal(textOf(run.result.read), 'written through MCP');
  const steps = (await s.api('GET', `/v1/runs/${run.id}/steps`)).body.steps;
  assert.deepEqual(
    steps.map((st: any) => [st.name, st.effectClass]),
    [
      ['mcp.fs.write_file', 'idempotent'], // its annotations: idempotentHint
      ['mcp.fs.list_directory', 'read'],
      ['mcp.fs.read_text_file', 'read'],
    ],
  );
  // The same server allowed `/` cannot write the host outside its workspace: the sandbox holds.
  const outside = join(s.dir, 'escaped.txt');
  const attempt = await s.api('POST', '/v1/runs', {
    agent: 'mcp-escape',
    input: { path: outside },
  });
  const tried = await s.until(attempt.body.id, (r) => r.status === 'succeeded');
  assert.equal(tried.result.code, 'mcp_tool_error');
  assert.equal(existsSync(outside), false);
});

/** server-everything over streamable HTTP on a free port, as its CLI starts it. */
async function startHttpEverything(t: TestContext): Promise<string> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    // Any HTTP answer means it listens (a GET without a session is refused, 400).
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return url;
    if (Date.now() > deadline) throw new Error('server-everything (HTTP) did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('streamable-HTTP server-everything, configured for the tenant by the admin API and allowed by origin', async (t) => {
  const url = await startHttpEverything(t);
  const s = await scene(t);
  await s.start({ KEEL_MCP_ALLOWED_ORIGINS: new URL(url).origin });
  const tenants = (await s.api('GET', '/v1/admin/tenants', undefined, ADMIN)).body.tenants;
  const tenant = tenants[0].id;
  const bad = await s.api(
    'PUT',
    `/v1/admin/tenants/${tenant}/mcp-servers/remote`,
    { transport: { type: 'http', url: 'ftp://x' } },
    ADMIN,
  );
  assert.equal(bad.status, 400);
  const put = await s.api(
    'PUT',
    `/v1/admin/tenants/${tenant}/mcp-servers/remote`,
    { transport: { type: 'http', url } },
    ADMIN,
  );
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual(
    (
      await s.api('GET', `/v1/admin/tenants/${tenant}/mcp-servers`, undefined, ADMIN)
    ).body.servers.map((x: any) => x.name),
    ['remote'],
  );
  const res = await s.api('POST', '/v1/runs', {
    agent: 'mcp-echo',
    input: { server: 'remote', message: 'over http' },
  });
  const run = await s.until(res.body.id, (r) => r.status === 'succeeded' || r.status === 'failed');
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.equal(textOf(run.result.echo), 'Echo: over http');

  // An origin outside the allowlist is refused, typed, before any request leaves.
  await s.api(
    'PUT',
    `/v1/admin/tenants/${tenant}/mcp-servers/remote`,
    { transport: { type: 'http', url: url.replace('127.0.0.1', 'localhost') } },
    ADMIN,
  );
  const refused = await s.api('POST', '/v1/runs', {
    agent: 'mcp-echo',
    input: { server: 'remote', message: 'nope' },
  });
  const failed = await s.until(refused.body.id, (r) => r.status === 'failed');
  assert.equal(failed.error.code, 'mcp_origin_not_allowed');
  assert.equal(
    (await s.api('DELETE', `/v1/admin/tenants/${tenant}/mcp-servers/remote`, undefined, ADMIN))
      .status,
    204,
  );
});

/** Polls the run's tool pin in the store file (written durably before the call is sent). */
async function untilPinned(dataDir: string, runId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const db = new DatabaseSync(join(dataDir, 'keel.db'), { readOnly: true });
    try {
      const row = db.prepare('SELECT hash FROM mcp_tool_pins WHERE run_id = ?').get(runId);
      if (row !== undefined) return;
    } catch {
      // the table is created at start; a busy moment is tried again
    } finally {
      db.close();
    }
    if (Date.now() > deadline) throw new Error(`run ${runId} never pinned its MCP tools`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('kill -9 mid-call: a read MCP call runs again after the restart', {
  skip: !bwrapUsable && 'needs root and bubblewrap',
}, async (t) => {
  const s = await scene(t);
  const keel = await s.start();
  const res = await s.api('POST', '/v1/runs', {
    agent: 'mcp-slow',
    input: { server: 'everything', seconds: 4 },
  });
  await untilPinned(join(s.dir, 'data'), res.body.id);
  // The call follows the pin at once and lasts 4 s: 1 s later it is in flight.
  await new Promise((r) => setTimeout(r, 1_000));
  await keel.kill('SIGKILL');
  await s.start();
  const run = await s.until(res.body.id, (r) => r.status === 'succeeded' || r.status === 'failed');
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.match(textOf(run.result.done), /Long running operation completed/);
  const [step] = (await s.api('GET', `/v1/runs/${run.id}/steps`)).body.steps;
  assert.equal(step.effectClass, 'read');
  assert.equal(
    step.fencingToken,
    2,
    'committed under the second lease: it ran again after the crash',
  );
});

test('kill -9 mid-call: a side-effect MCP call becomes unknown, parked, and `keel runs resolve` settles it', {
  skip: !bwrapUsable && 'needs root and bubblewrap',
}, async (t) => {
  const s = await scene(t);
  const keel = await s.start();
  const res = await s.api('POST', '/v1/runs', {
    agent: 'mcp-slow',
    input: { server: 'everything-fx', seconds: 4 },
  });
  const id = res.body.id as string;
  // A side effect journals `running` (effect.started) before the call is sent.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = (await s.api('GET', `/v1/runs/${id}/events?format=json`)).body as any[];
    if (events.some((e) => e.type === 'effect.started')) break;
    if (Date.now() > deadline) throw new Error('the MCP side effect never started');
    await new Promise((r) => setTimeout(r, 25));
  }
  await keel.kill('SIGKILL');
  await s.start();
  const parked = await s.until(id, (r) => r.status === 'waiting');
  assert.equal(parked.waitingReason, 'unknown_side_effect');
  const [step] = (await s.api('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.deepEqual([step.status, step.effectClass], ['unknown', 'side-effect']);
  const resolved = spawnSync(
    process.execPath,
    [
      MAIN,
      'runs',
      'resolve',
      id,
      `${id}.1`,
      '--as',
      'succeeded',
      '--result',
      '{"content":[{"type":"text","text":"done by hand"}]}',
    ],
    { env: { ...process.env, KEEL_URL: s.keel!.url, KEEL_API_KEY: KEY }, encoding: 'utf8' },
  );
  assert.equal(resolved.status, 0, resolved.stderr + resolved.stdout);
  const run = await s.until(id, (r) => r.status === 'succeeded');
  assert.equal(textOf(run.result.done), 'done by hand');
});
