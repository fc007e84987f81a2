// Per-run delegated tokens on real Keel processes: under `keel dev` a tool's token (minted by the
// runtime, its apiUrl the process's own address) starts a child of its run; on Postgres, two
// `keel server` processes without KEEL_DELEGATION_KEY share the key kept in the store, so each
// accepts the token the other's tool holds; once the run ends both refuse it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { createFreshDatabase } from './support/fresh-database.ts';
import { startKeelProcess, startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/delegation-agents.ts', import.meta.url));
const KEY = 'keel_delegation-processes-test-key';
const WAIT_MS = 30_000;

async function call(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function waitForRun(url: string, id: string, predicate: (run: any) => boolean) {
  let last: any;
  for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; ) {
    last = (await call(url, KEY, 'GET', `/v1/runs/${id}`)).body;
    if (predicate(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${id} did not reach the expected state; last: ${JSON.stringify(last)}`);
}

/** Submits `delegator`, waits until its tool has run, and returns its run id, result and token. */
async function delegatedRun(url: string, tokenFile: string) {
  const created = await call(url, KEY, 'POST', '/v1/runs', { agent: 'delegator' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const runId: string = created.body.id;
  await waitForRun(url, runId, (r) => r.status === 'waiting');
  const steps = await call(url, KEY, 'GET', `/v1/runs/${runId}/steps`);
  const spawned = steps.body.steps.find((s: any) => s.name === 'spawn_child').output;
  assert.ok(existsSync(tokenFile), 'the tool had a token');
  return { runId, spawned, token: readFileSync(tokenFile, 'utf8') };
}

test('keel dev: a tool’s token from the runtime starts a child of its run on the process’s own API', {
  timeout: 90_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-delegation-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tokenFile = join(dir, 'token');
  const dev = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey: KEY,
    env: { KEEL_TEST_TOKEN_FILE: tokenFile, KEEL_DELEGATION_TTL_MS: '60000' },
  });
  t.after(() => dev.kill('SIGTERM'));
  const { runId, spawned, token } = await delegatedRun(dev.url, tokenFile);
  assert.equal(spawned.status, 201, JSON.stringify(spawned));
  assert.equal(spawned.parentRunId, runId);
  await waitForRun(dev.url, spawned.childId, (r) => r.status === 'succeeded');
  assert.equal((await call(dev.url, token, 'GET', `/v1/runs/${runId}`)).status, 200);
  assert.equal((await call(dev.url, token, 'GET', '/v1/keys')).status, 403);

  await call(dev.url, KEY, 'POST', `/v1/runs/${runId}/input`, { key: 'finish', value: 1 });
  await waitForRun(dev.url, runId, (r) => r.status === 'succeeded');
  const ended = await call(dev.url, token, 'GET', `/v1/runs/${runId}`);
  assert.deepEqual([ended.status, ended.body.error.code], [401, 'delegated_token_revoked']);
});

test('two keel servers on one Postgres accept each other’s tokens (the key kept in the store)', {
  timeout: 120_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-delegation-pg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tokenFile = join(dir, 'token');
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const servers = [];
  for (const name of ['delegation-a', 'delegation-b']) {
    const server = await startKeelRole({
      role: 'server',
      name,
      agents: AGENTS,
      databaseUrl: db.url,
      apiKey: KEY,
      env: { KEEL_TEST_TOKEN_FILE: tokenFile },
    });
    t.after(() => server.kill('SIGKILL'));
    servers.push(server);
  }
  const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
  const { runId, spawned, token } = await delegatedRun(a.url, tokenFile);
  assert.equal(spawned.status, 201, JSON.stringify(spawned));
  assert.equal(spawned.parentRunId, runId);
  for (const server of [a, b]) {
    const read = await call(server.url, token, 'GET', `/v1/runs/${runId}`);
    assert.equal(read.status, 200, `${server.url}: ${JSON.stringify(read.body)}`);
  }

  await call(a.url, KEY, 'POST', `/v1/runs/${runId}/input`, { key: 'finish', value: 1 });
  await waitForRun(a.url, runId, (r) => r.status === 'succeeded');
  for (const server of [a, b]) {
    const ended = await call(server.url, token, 'GET', `/v1/runs/${runId}`);
    assert.deepEqual([ended.status, ended.body.error.code], [401, 'delegated_token_revoked']);
  }
});
