// GET /v1/agents and `keel agents list` from real processes: in `keel dev`, every agent version
// with its schemas as JSON Schema, served by this process; in distributed mode (Postgres), a
// server lists the versions a worker serves too (announced in the store), and forgets them when
// the worker stops.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createFreshDatabase } from './support/fresh-database.ts';
import { startKeelProcess, startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('./fixtures/contract-agents.ts', import.meta.url));
const AGENTS_V2 = fileURLToPath(new URL('./fixtures/contract-agents-v2.ts', import.meta.url));
const KEY = 'agents-api-test-key-0123456789';

async function getAgents(url: string): Promise<any> {
  const res = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.equal(res.status, 200);
  return res.json();
}

function cli(args: string[], url: string): Promise<{ status: number | null; stdout: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, KEEL_URL: url, KEEL_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout })));
}

test('keel dev: GET /v1/agents lists each version with its JSON Schemas, served by this process; keel agents list shows it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-agents-api-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const dev = await startKeelProcess({
    agents: AGENTS,
    dataDir: dir,
    apiKey: KEY,
  });
  t.after(() => dev.kill('SIGTERM'));

  const unauthorized = await fetch(`${dev.url}/v1/agents`);
  assert.equal(unauthorized.status, 401);
  const { agents } = await getAgents(dev.url);
  assert.deepEqual(
    agents.map((a: any) => a.name),
    ['free', 'typed'],
  );
  const typed = agents.find((a: any) => a.name === 'typed').versions;
  assert.equal(typed.length, 1);
  const [v1] = typed;
  assert.equal(v1.version, '1');
  assert.equal(v1.latest, true);
  assert.equal(v1.loadedHere, true);
  // The input schema as a client may send it: `days` has a default, so it is optional.
  assert.equal(v1.input.type, 'object');
  assert.deepEqual(v1.input.required, ['city']);
  assert.deepEqual(v1.input.properties.city, { type: 'string' });
  assert.equal(v1.output.type, 'object');
  assert.deepEqual(v1.output.required, ['forecast']);
  const free = agents.find((a: any) => a.name === 'free').versions[0];
  assert.equal(free.input, null);
  assert.equal(free.output, null);
  // Served by this very process.
  assert.equal(v1.servedBy.length, 1);
  const [me] = v1.servedBy;
  assert.equal(me.role, 'dev');
  assert.equal(me.pid, dev.child.pid);
  assert.ok(Date.parse(me.since) <= Date.parse(me.lastSeenAt));

  const listed = await cli(['agents', 'list'], dev.url);
  assert.equal(listed.status, 0, listed.stdout);
  assert.match(listed.stdout, /^AGENT +VERSION +INPUT +OUTPUT +SERVED BY/);
  assert.match(
    listed.stdout,
    new RegExp(`typed +1 \\(latest\\) +schema +schema +dev ${me.workerId.slice(0, 15)} on \\S+\n`),
  );
  assert.match(listed.stdout, /free +1 \(latest\) +any +any +dev /);
  const json = await cli(['agents', 'list', '--json'], dev.url);
  assert.deepEqual(JSON.parse(json.stdout), await getAgents(dev.url));

  // The contract holds in the dev process, whose agent code runs in isolates: a bad input is 400,
  // a good one reaches the agent parsed (its default filled in).
  const submit = (input: unknown) =>
    fetch(`${dev.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'typed', input }),
    });
  const bad = await submit({ city: 1 });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as any).error.code, 'agent_input_invalid');
  const good = (await (await submit({ city: 'Oslo' })).json()) as any;
  let run: any;
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    run = await (
      await fetch(`${dev.url}/v1/runs/${good.id}`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json();
    if (run.status === 'succeeded' || run.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(run.result, { forecast: 'Oslo ×3' }, JSON.stringify(run));
});

test('distributed (Postgres): the server lists the versions a worker serves, with the worker, and drops them when it stops', {
  timeout: 90_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const server = await startKeelRole({
    role: 'server',
    name: 'agents-server',
    agents: AGENTS,
    databaseUrl: db.url,
    apiKey: KEY,
  });
  t.after(() => server.kill('SIGKILL'));
  const worker = await startKeelRole({
    role: 'worker',
    name: 'agents-worker',
    agents: AGENTS_V2,
    databaseUrl: db.url,
  });
  t.after(() => worker.kill('SIGKILL'));

  const typed = (await getAgents(server.url)).agents.find((a: any) => a.name === 'typed');
  assert.deepEqual(
    typed.versions.map((v: any) => [
      v.version,
      v.loadedHere,
      v.servedBy.map((p: any) => [p.role, p.workerId]),
    ]),
    [
      ['1', true, [['server', server.owner]]],
      ['2', false, [['worker', worker.owner]]],
    ],
  );
  const v2 = typed.versions[1];
  assert.equal(v2.input, null, 'this server did not load typed@2: its schema is unknown here');
  assert.equal(v2.latest, false);
  assert.equal(v2.servedBy[0].pid, worker.pid);

  await worker.kill('SIGTERM'); // a graceful stop retires its row
  const after = (await getAgents(server.url)).agents.find((a: any) => a.name === 'typed');
  assert.deepEqual(
    after.versions.map((v: any) => v.version),
    ['1'],
  );
});
