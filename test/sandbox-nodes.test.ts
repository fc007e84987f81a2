// Sandbox nodes end to end (issue 24): a real `keel server` on a fresh Postgres database places the
// built-in sandbox tools' calls (KEEL_SANDBOX_PLACEMENT=nodes) on three real `keel node` processes,
// each created through the admin API with its own token. Checked: calls spread over the nodes; a
// node at capacity refuses (typed `node_refused`) and the call lands on one with room; `kill -9` of
// a node mid-call makes a side effect `unknown` (the run parks) while a read call runs again on a
// survivor, later calls go to the survivors, and a workspace written on the killed node is rebuilt
// from its artifacts on another. Namespace tier where bubblewrap works, else the process tier.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nodeTokenHash } from '../src/domain/sandbox-nodes.ts';
import {
  NODE_CALL_PATH,
  NODE_SIGNATURE_HEADER,
  NODE_TIME_HEADER,
  signNodeCall,
} from '../src/nodes/node-call.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { sweepStaleSandboxes } from '../src/sandbox/stale-sweep.ts';
import { tierAvailability } from '../src/sandbox/tiers.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { spawnNode, startKeelRole, type KeelRoleProcess } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('./fixtures/node-agents.ts', import.meta.url));
const KEY = 'sandbox-nodes-test-key';
const ADMIN = 'sandbox-nodes-admin-key-0123456789';
const TIER = tierAvailability('namespace').ok ? 'namespace' : 'process';

const skip = !(await postgresAvailable())
  ? 'PostgreSQL is not reachable on 127.0.0.1:5432'
  : !tierAvailability(TIER).ok
    ? `no sandbox tier works here (${JSON.stringify(tierAvailability(TIER))})`
    : false;

interface NodeProcess {
  name: string;
  id: string;
  token: string;
  url: string;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
  pid: number;
  dataDir: string;
  /** Execution ids this node admitted / refused, from its log. */
  admitted(): string[];
  refused(): string[];
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  for (const deadline = Date.now() + ms; ; ) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function calls(output: string, admitted: boolean): string[] {
  const ids: string[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { executionId?: string; admitted?: boolean };
    if (entry.executionId !== undefined && entry.admitted === admitted) ids.push(entry.executionId);
  }
  return ids;
}

async function api(base: string, path: string, init: RequestInit & { key?: string } = {}) {
  const response = await fetch(`${base}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${init.key ?? KEY}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

async function startNode(
  server: KeelRoleProcess,
  dbUrl: string,
  name: string,
  slots: number,
  /** A restart: the same node (token) on the same data directory. */
  again?: NodeProcess,
) {
  let token: string;
  let nodeId: string;
  if (again === undefined) {
    const created = await api(server.url, '/v1/admin/nodes', {
      method: 'POST',
      key: ADMIN,
      body: JSON.stringify({ name }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    token = created.body.token;
    nodeId = created.body.node.id;
  } else {
    token = again.token;
    nodeId = again.id;
  }
  const dataDir = again?.dataDir ?? mkdtempSync(join(tmpdir(), `keel-node-test-${name}-`));
  chmodSync(dataDir, 0o711); // sandbox uids must traverse to their workspace
  const spawned = spawnNode(MAIN, ['node', '--server', server.url, '--port', '0'], {
    KEEL_DATABASE_URL: dbUrl,
    KEEL_NODE_TOKEN: token,
    KEEL_NODE_SLOTS: String(slots),
    KEEL_LOG_LEVEL: 'info',
    KEEL_DATA_DIR: dataDir,
  });
  const url = await until(`keel node ${name} to register`, async () => {
    if (spawned.child.exitCode !== null)
      throw new Error(`node ${name} exited: ${spawned.output()}`);
    return /keel node: (http:\/\/\S+)/.exec(spawned.output())?.[1];
  });
  const node: NodeProcess = {
    name,
    id: nodeId,
    token,
    url,
    pid: spawned.child.pid!,
    output: spawned.output,
    kill: spawned.kill,
    admitted: () => calls(spawned.output(), true),
    refused: () => calls(spawned.output(), false),
    dataDir,
  };
  return node;
}

/** Mount points under `dir` (this test runs as root, in the host's mount namespace). */
const mountsUnder = (dir: string): string[] =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point.startsWith(`${dir}/`));

/** Host pids in a sandbox cgroup of the node (environments are named `k<owner pid>-…`). */
const sandboxPidsOf = (node: NodeProcess): number[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(`keel-sandbox/k${node.pid}-`);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);

/**
 * Kills the node and removes its data directory: its sandboxes die with it, and what a killed node
 * leaves (workspace mounts, cgroups) is swept as a node starting on that directory would, so no
 * mount outlives the test.
 */
async function discard(node: NodeProcess): Promise<void> {
  await node.kill('SIGKILL');
  await sweepStaleSandboxes(join(node.dataDir, 'sandboxes'));
  rmSync(node.dataDir, { recursive: true, force: true });
}

async function submit(server: KeelRoleProcess, agent: string, input: unknown): Promise<string> {
  const created = await api(server.url, '/v1/runs', {
    method: 'POST',
    body: JSON.stringify({ agent, input }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id;
}

async function settle(server: KeelRoleProcess, id: string, statuses = ['succeeded', 'failed']) {
  return until(`run ${id} to reach ${statuses.join('|')}`, async () => {
    const run = (await api(server.url, `/v1/runs/${id}`)).body;
    return statuses.includes(run.status) ? run : undefined;
  });
}

/** Sends a signed call straight to a node, as a placer does (the test holds the node's token). */
async function directCall(
  node: NodeProcess,
  executionId: string,
  script: string,
  policy: 'one-shot' | 'resident' = 'one-shot',
) {
  const body = JSON.stringify({
    tenantId: 'direct',
    runId: `direct-${executionId}`,
    executionId,
    profile: defineSandboxProfile({ name: `direct-${policy}`, tier: TIER, policy }),
    argv: ['/bin/sh', '-c', script],
    snapshot: false,
    secrets: false,
  });
  const time = Date.now();
  const response = await fetch(`${node.url}${NODE_CALL_PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [NODE_TIME_HEADER]: String(time),
      [NODE_SIGNATURE_HEADER]: signNodeCall(nodeTokenHash(node.token), time, body),
    },
    body,
  });
  return { status: response.status, body: await response.json() };
}

/**
 * A fresh database, a server that places sandboxed calls on nodes, and one node of 2 slots per
 * name; all of it torn down after the test.
 */
async function placingCluster(t: TestContext, serverName: string, names: string[]) {
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const server = await startKeelRole({
    role: 'server',
    name: serverName,
    agents: AGENTS,
    databaseUrl: db.url,
    apiKey: KEY,
    env: {
      KEEL_ADMIN_KEY: ADMIN,
      KEEL_SANDBOX_PLACEMENT: 'nodes',
      KEEL_PLACEMENT_REFRESH_MS: '300',
      KEEL_NODE_STALE_MS: '4000',
      TEST_NODE_TIER: TIER,
    },
  });
  t.after(() => server.kill('SIGKILL'));
  const nodes: NodeProcess[] = [];
  for (const name of names) {
    const node = await startNode(server, db.url, name, 2);
    t.after(() => discard(node));
    nodes.push(node);
  }
  return { server, nodes };
}

/** The nodes that admitted a call of the run (execution ids are `<runId>.<seq>`). */
const whoRan = (nodes: NodeProcess[], runId: string) =>
  nodes.filter((n) => n.admitted().some((e) => e.startsWith(`${runId}.`))).map((n) => n.name);
const ranOn = (node: NodeProcess, runId: string) =>
  node.admitted().some((e) => e.startsWith(`${runId}.`));

test('sandbox nodes: placement spreads, a full node refuses, kill -9 mid-call follows the effect rules', {
  skip,
  timeout: 300_000,
}, async (t) => {
  const { server, nodes } = await placingCluster(t, 'nodes-server', ['node-a', 'node-b', 'node-c']);
  // The admin view: three ready nodes with their capacity and a heartbeat.
  const listed = await until('three heartbeating nodes', async () => {
    const body = (await api(server.url, '/v1/admin/nodes', { key: ADMIN })).body;
    return body.nodes.every((n: any) => n.state === 'ready' && n.load !== null) ? body : undefined;
  });
  assert.deepEqual(
    listed.nodes.map((n: any) => [n.name, n.capacity.slots, n.capacity.tiers.includes(TIER)]),
    [
      ['node-a', 2, true],
      ['node-b', 2, true],
      ['node-c', 2, true],
    ],
  );
  assert.ok(
    listed.nodes.every((n: any) => !('tokenHash' in n)),
    'the token hash is never shown',
  );
  // The dashboard's Nodes page reads the same rows.
  const page = (await api(server.url, '/v1/dashboard/nodes')).body;
  assert.equal(page.available, true, JSON.stringify(page));
  assert.deepEqual(
    page.nodes.map((n: any) => [n.id, n.slotsTotal]),
    [
      ['node-a', 2],
      ['node-b', 2],
      ['node-c', 2],
    ],
  );
  // A node refuses a call not signed with its token.
  const forged = await fetch(`${nodes[0]!.url}${NODE_CALL_PATH}`, { method: 'POST', body: '{}' });
  assert.equal(forged.status, 401);

  // 1. Placement spreads calls: 12 runs of 0.3 s over 3 nodes of 2 slots.
  const spread = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      submit(server, 'node-shell', { script: `sleep 0.3; echo run-${i}`, effect: 'read' }),
    ),
  );
  for (const [i, id] of spread.entries()) {
    const run = await settle(server, id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(run.result.stdout, `run-${i}\n`, JSON.stringify(run.result));
  }
  const perNode = nodes.map((n) => n.admitted().length);
  assert.equal(
    perNode.reduce((a, b) => a + b, 0),
    12,
    `calls per node ${perNode}: ${nodes[0]!.output().slice(-1500)}`,
  );
  assert.ok(
    perNode.every((count) => count > 0),
    `every node took calls: ${perNode}`,
  );

  // 2. A node at capacity refuses (typed) and the call lands on a node with room: fill node-a and
  // node-b (2 slots each) with direct calls, then submit.
  const fillers = [nodes[0]!, nodes[0]!, nodes[1]!, nodes[1]!].map((node, i) =>
    directCall(node, `filler-${i}`, 'sleep 6'),
  );
  await until('node-a and node-b full', async () =>
    nodes[0]!.admitted().filter((id) => id.startsWith('filler')).length === 2 &&
    nodes[1]!.admitted().filter((id) => id.startsWith('filler')).length === 2
      ? true
      : undefined,
  );
  const refusal = await directCall(nodes[0]!, 'over-capacity', 'true');
  assert.equal(refusal.status, 503);
  assert.equal(refusal.body.error.code, 'node_refused');
  const landing = await Promise.all(
    [0, 1].map((i) => submit(server, 'node-shell', { script: `echo landed-${i}`, effect: 'read' })),
  );
  for (const id of landing) {
    const run = await settle(server, id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(whoRan(nodes, id), ['node-c'], 'only node-c had room');
  }
  for (const filler of await Promise.all(fillers)) assert.equal(filler.status, 200);

  // 3. kill -9 mid-call. A side effect: its run parks with the outcome unknown.
  const sideEffect = await submit(server, 'node-shell', { script: 'sleep 30; echo never' });
  const victim = await until('the side effect to start on a node', async () =>
    nodes.find((n) => ranOn(n, sideEffect)),
  );
  await victim.kill('SIGKILL');
  const parked = await settle(server, sideEffect, ['waiting', 'failed', 'succeeded']);
  assert.equal(parked.status, 'waiting', JSON.stringify(parked));
  assert.equal(parked.waitingReason, 'unknown_side_effect', JSON.stringify(parked));
  const survivors = nodes.filter((n) => n !== victim);

  // A read call whose node dies mid-call runs again on a survivor, same execution id.
  const read = await submit(server, 'node-shell', {
    script: 'sleep 3; echo read-again',
    effect: 'read',
  });
  const readVictim = await until('the read call to start on a node', async () =>
    survivors.find((n) => ranOn(n, read)),
  );
  await readVictim.kill('SIGKILL');
  const reread = await settle(server, read);
  assert.equal(reread.status, 'succeeded', JSON.stringify(reread));
  assert.equal(reread.result.stdout, 'read-again\n');
  const last = survivors.find((n) => n !== readVictim)!;
  assert.ok(ranOn(last, read), 'the read ran again on the last node');

  // Later calls go to the survivor (dead nodes refuse connections, then drop out of the view).
  const later = await Promise.all(
    [0, 1, 2].map((i) =>
      submit(server, 'node-shell', { script: `echo later-${i}`, effect: 'read' }),
    ),
  );
  for (const id of later) {
    const run = await settle(server, id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(whoRan(nodes, id), [last.name]);
  }

  // Drain and remove through the admin API.
  const drained = await api(server.url, `/v1/admin/nodes/${victim.id}/drain`, {
    method: 'POST',
    key: ADMIN,
  });
  assert.equal(drained.body.node.state, 'draining');
  assert.equal(
    (await api(server.url, `/v1/admin/nodes/${victim.id}`, { method: 'DELETE', key: ADMIN }))
      .status,
    204,
  );
  assert.equal((await api(server.url, '/v1/admin/nodes', { key: ADMIN })).body.nodes.length, 2);
});

test('sandbox nodes: a workspace written on a node killed afterwards is rebuilt from its artifacts on another', {
  skip,
  timeout: 240_000,
}, async (t) => {
  const { server, nodes } = await placingCluster(t, 'nodes-ws-server', ['ws-a', 'ws-b']);
  const id = await submit(server, 'node-workspace', { text: 'kept across nodes' });
  await settle(server, id, ['waiting', 'failed']);
  const writer = nodes.find((n) => ranOn(n, id));
  assert.ok(writer !== undefined, 'a node ran write_file');
  await writer.kill('SIGKILL');
  const answered = await api(server.url, `/v1/runs/${id}/input`, {
    method: 'POST',
    body: JSON.stringify({ key: 'go', value: true }),
  });
  assert.ok(answered.status < 300, JSON.stringify(answered.body));
  const run = await settle(server, id);
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result, { content: 'kept across nodes' });
  const reader = nodes.find((n) => n !== writer)!;
  assert.ok(ranOn(reader, id), 'read_file ran on the other node');
});

test('sandbox nodes: kill -9 of a node holding a kept sandbox leaves no sandbox process; its restart leaves no mount', {
  skip,
  timeout: 180_000,
}, async (t) => {
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const server = await startKeelRole({
    role: 'server',
    name: 'nodes-kept-server',
    agents: AGENTS,
    databaseUrl: db.url,
    apiKey: KEY,
    env: { KEEL_ADMIN_KEY: ADMIN, TEST_NODE_TIER: TIER },
  });
  t.after(() => server.kill('SIGKILL'));
  let node = await startNode(server, db.url, 'kept', 2);
  t.after(() => discard(node));
  // A resident environment: kept after the call, with a process of its own left in the background.
  const kept = await directCall(
    node,
    'kept-1',
    'sleep 987101 >/dev/null 2>&1 & echo kept',
    'resident',
  );
  assert.equal(kept.status, 200, JSON.stringify(kept.body));
  const before = sandboxPidsOf(node);
  const sandboxes = join(node.dataDir, 'sandboxes');
  assert.ok(before.length >= 2, `the kept sandbox's processes: ${before}`);
  assert.ok(mountsUnder(sandboxes).length >= 1, 'its workspace is mounted');

  await node.kill('SIGKILL');
  // Every process of the sandbox dies with the node (bounded wait; no timing asserted).
  const alive = (pid: number) => existsSync(`/proc/${pid}`);
  await until(
    'the kept sandbox to die with its node',
    async () => (before.some(alive) ? undefined : true),
    30_000,
  ).catch((error: Error) => {
    const left = before
      .filter(alive)
      .map((pid) => `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8')}`);
    throw new Error(`${error.message}; alive: ${JSON.stringify(left)}`);
  });

  // The restarted node sweeps what the killed one left, before any call.
  const killed = node;
  node = await startNode(server, db.url, 'kept', 2, killed);
  await until('the restart to sweep the killed node’s mounts', async () =>
    mountsUnder(sandboxes).length === 0 &&
    readdirSync(sandboxes).every((name) => !name.startsWith(`k${killed.pid}-`))
      ? true
      : undefined,
  );
  assert.deepEqual(sandboxPidsOf(killed), []);
});
