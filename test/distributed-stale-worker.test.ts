// A worker paused with SIGSTOP past its lease cannot commit. Processes on one Postgres: a `keel
// server` kept from claiming (KEEL_MAX_ACTIVE_RUNS=1, its one slot held by a blocker run), worker
// W1, later worker W2. W1 claims a three-step run and is stopped in the middle of step s1; its
// lease expires; W2 claims the run, runs s1 again and finishes it. Then W1 is resumed: its step
// body completes and it tries to commit s1 under its old fencing token. That late commit must be
// rejected and recorded (an `audit` row of kind `stale_commit`), and the run's result and journal
// stay exactly those W2 committed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { apiClient, distributedScene, readLedger, until } from './support/distributed.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/distributed-agents.ts', import.meta.url));
const KEY = 'distributed-stale-key';
const LEASE_TTL_MS = 1_000;
/** Step s1 outlasts the moment W1 is stopped, so W1 is paused inside the step body. */
const SLOW_STEP_MS = 1_500;
/** How long W1 is given, after its rejected commit, to (wrongly) do anything more to the run. */
const QUIET_MS = 1_000;

test('a worker paused past its lease cannot commit: its late result is rejected and audited', {
  timeout: 60_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'dist-stale');
  const ledger = join(dir, 'ledger.txt');
  const env = { KEEL_TEST_LEDGER: ledger, KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS) };
  const start = async (
    role: 'server' | 'worker',
    name: string,
    extra: Record<string, string> = {},
  ) => {
    const p = await startKeelRole({
      role,
      name,
      agents: AGENTS,
      databaseUrl: db.url,
      ...(role === 'server' ? { apiKey: KEY } : {}),
      env: { ...env, ...extra },
    });
    processes.push(p);
    return p;
  };
  const leaseOf = async (id: string) =>
    (
      await db.query<{ lease_owner: string | null; lease_token: string; status: string }>(
        'SELECT lease_owner, lease_token, status FROM runs WHERE id = $1',
        [id],
      )
    )[0]!;

  // The server's only slot goes to a blocker run, so it claims nothing else: the workers do the
  // work.
  const server = await start('server', 'keel-server', { KEEL_MAX_ACTIVE_RUNS: '1' });
  const api = apiClient(server.url, KEY);
  const blocker = await api.submit('dist-blocker', { ms: 600_000 });
  await until(
    'the server to hold the blocker',
    async () => ((await leaseOf(blocker)).lease_owner === server.owner ? true : undefined),
    10_000,
  );

  // W1 runs agent code on its main thread, so its step's timer and its heartbeat resume in one
  // event loop and the late commit is sent. With the step in an isolate (lower CPU priority), a
  // loaded machine can let W1's heartbeat learn of the lost lease first; W1 then drops the late
  // result without sending it: also safe, but it proves nothing here.
  const w1 = await start('worker', 'keel-worker-1', { KEEL_AGENT_ISOLATION: 'thread' });
  const runId = await api.submit('dist-steps', { key: 'r', steps: 3, ms: [50, SLOW_STEP_MS, 50] });
  await until(
    'W1 to be inside step s1',
    async () =>
      readLedger(ledger).some(
        (l) => l.what === 'step' && l.key === 'r' && l.step === 1 && l.pid === w1.pid,
      )
        ? true
        : undefined,
    10_000,
  );
  w1.signal('SIGSTOP');
  const paused = await leaseOf(runId);
  assert.equal(paused.lease_owner, w1.owner, 'W1 holds the run while paused');
  const w1Token = Number(paused.lease_token);

  // W2 takes the run over once W1's lease has expired, runs s1 itself and finishes the run.
  const w2 = await start('worker', 'keel-worker-2');
  const done = await until(
    'W2 to finish the run',
    async () => {
      const r = (await api.request('GET', `/v1/runs/${runId}`)).body;
      return r.status === 'succeeded' ? r : undefined;
    },
    20_000,
    () => w2.output(),
  );
  const expectedResult = {
    out: [
      { i: 0, pid: w1.pid },
      { i: 1, pid: w2.pid },
      { i: 2, pid: w2.pid },
    ],
  };
  assert.deepEqual(
    done.result,
    expectedResult,
    'W1 committed s0 before the pause; W2 ran s1 and s2',
  );
  const journalBefore = (await api.request('GET', `/v1/runs/${runId}/steps`)).body.steps;
  const before = await db.query(
    'SELECT state_version, lease_token, result FROM runs WHERE id = $1',
    [runId],
  );
  const eventsBefore = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM events WHERE run_id = $1',
    [runId],
  );
  assert.ok(Number(before[0]!.lease_token) > w1Token, 'W2 claimed under a newer fencing token');
  assert.equal(
    (await db.query("SELECT 1 FROM audit WHERE run_id = $1 AND kind = 'stale_commit'", [runId]))
      .length,
    0,
    'nothing was rejected before W1 resumed',
  );

  // W1 resumes: its step body finishes and its commit of s1 arrives late, under the old token.
  w1.signal('SIGCONT');
  const audit = await until(
    'the late commit of W1 to be rejected',
    async () => {
      const rows = await db.query<{ data: string }>(
        "SELECT data FROM audit WHERE run_id = $1 AND kind = 'stale_commit' ORDER BY id",
        [runId],
      );
      return rows.length > 0 ? rows.map((r) => JSON.parse(r.data)) : undefined;
    },
    15_000,
    () => w1.output(),
  );
  assert.ok(
    readLedger(ledger).some(
      (l) => l.what === 'end' && l.key === 'r' && l.step === 1 && l.pid === w1.pid,
    ),
    'W1’s step body did run to its end',
  );
  const [late] = audit;
  assert.equal(late.leaseToken, w1Token, 'the rejected commit carried W1’s fencing token');
  assert.equal(late.currentLeaseToken, Number(before[0]!.lease_token));
  assert.equal(late.currentStatus, 'succeeded');
  assert.deepEqual(
    late.journal.map((j: { name: string; status: string }) => [j.name, j.status]),
    [['s1', 'succeeded']],
    'what was rejected is W1’s result of s1',
  );

  // A bounded wait for something that must NOT happen: W1, now awake, changes nothing more on the
  // run.
  await new Promise((r) => setTimeout(r, QUIET_MS));
  const after = await db.query(
    'SELECT state_version, lease_token, result FROM runs WHERE id = $1',
    [runId],
  );
  assert.deepEqual(after, before, 'the run is untouched by W1’s late work');
  assert.deepEqual(
    (await api.request('GET', `/v1/runs/${runId}/steps`)).body.steps,
    journalBefore,
    'the journal is W2’s',
  );
  assert.equal(
    (
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE run_id = $1', [
        runId,
      ])
    )[0]!.n,
    eventsBefore[0]!.n,
    'no event from W1',
  );
  assert.deepEqual((await api.request('GET', `/v1/runs/${runId}`)).body.result, expectedResult);

  // s1 ran twice (W1's execution was not applied); s0 and s2 once; W1 never got past s1.
  const starts = readLedger(ledger)
    .filter((l) => l.what === 'step' && l.key === 'r')
    .map((l) => [l.step, l.pid === w1.pid ? 'W1' : l.pid === w2.pid ? 'W2' : 'other']);
  assert.deepEqual(starts, [
    [0, 'W1'],
    [1, 'W1'],
    [1, 'W2'],
    [2, 'W2'],
  ]);
  assert.ok(w1.alive() && w2.alive() && server.alive(), 'every process is still running');
  assert.equal(
    (await leaseOf(blocker)).lease_owner,
    server.owner,
    'the server kept its blocker the whole time',
  );
  t.diagnostic(
    `W1 resumed; rejected late commits: ${JSON.stringify(audit.map((a) => ({ token: a.leaseToken, journal: a.journal.map((j: { name: string; status: string }) => `${j.name}:${j.status}`) })))}`,
  );
});
