// Attempts across a real crash, on both stores: the process running a run is killed with SIGKILL in
// the middle of a step, and the process that takes the run over must say so: `run.recovered`
// (previous worker, when its lease expired, the new attempt's number, the positions it replays), a
// warn line in its log, and both attempts in GET /v1/runs/:id/attempts with their endings (the
// first `lease_expired`, the second `completed`). The run counts 2 attempts and 1 lease expiry,
// while its poison counter (leaseLosses) is back to 0 after the recovery made progress.
// SQLite: `keel dev` killed and restarted on the same data. Postgres: a `keel worker` killed, a
// second worker taking over once the lease has expired.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  apiClient,
  distributedScene,
  readLedger,
  until,
  type ApiClient,
} from './support/distributed.ts';
import {
  freePort,
  startKeelProcess,
  startKeelRole,
  type KeelProcess,
} from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';
import { runRunsCommand } from '../src/cli/client/runs-command.ts';

const CRASH_AGENTS = fileURLToPath(new URL('./fixtures/crash-agents.ts', import.meta.url));
const DIST_AGENTS = fileURLToPath(new URL('./fixtures/distributed-agents.ts', import.meta.url));
const KEY = 'attempts-crash-key';
/** Long enough that the kill lands inside the step body. */
const STEP_MS = 1_500;
const LEASE_TTL_MS = 1_000;
const RECOVERY_LOG = 'recovering a run whose worker died or stalled';

/** The run's story after the crash: its events, attempts and view, checked the same on both stores. */
async function assertRecovered(api: ApiClient, runId: string, deadWorker: string): Promise<void> {
  const run = await until(
    'the run to succeed after the recovery',
    async () => {
      const r = (await api.request('GET', `/v1/runs/${runId}`)).body;
      return r.status === 'succeeded' ? r : undefined;
    },
    60_000,
  );
  const events: Array<{ type: string; at: string; data: any }> = (
    await api.request('GET', `/v1/runs/${runId}/events?format=json`)
  ).body;
  const started = events.filter((e) => e.type === 'run.started');
  const recovered = events.filter((e) => e.type === 'run.recovered');
  assert.equal(started.length, 2, events.map((e) => e.type).join(' '));
  assert.deepEqual(
    started.map((e) => [e.data.attempt, e.data.worker]),
    [
      [1, deadWorker],
      [2, started[1]!.data.worker],
    ],
  );
  assert.notEqual(started[1]!.data.worker, deadWorker, 'another worker took the run over');
  assert.equal(recovered.length, 1, 'one recovery');
  const r = recovered[0]!.data;
  assert.equal(r.previousWorker, deadWorker);
  assert.equal(r.attempt, 2);
  assert.equal(typeof r.leaseExpiredAt, 'number');
  assert.ok(r.replayedPositions >= 1, 'step s0 had committed: the new attempt replays it');
  assert.ok(
    events.indexOf(recovered[0]!) < events.findIndex((e) => e.type === 'run.succeeded'),
    'the recovery is told before the run ends',
  );

  const { attempts } = (await api.request('GET', `/v1/runs/${runId}/attempts`)).body;
  assert.deepEqual(
    attempts.map((a: any) => [a.number, a.worker, a.ending]),
    [
      [1, deadWorker, 'lease_expired'],
      [2, started[1]!.data.worker, 'completed'],
    ],
  );
  assert.equal(
    Date.parse(attempts[0].endedAt),
    r.leaseExpiredAt,
    'it ended when its lease expired',
  );
  assert.ok(Date.parse(attempts[1].startedAt) >= Date.parse(attempts[0].startedAt));
  assert.deepEqual(
    [run.attempts, run.leaseExpiries, run.leaseLosses],
    [2, 1, 0],
    'every expiry is counted; the poison counter was reset by the progress made since',
  );
}

/** `keel runs <argv…>` against a real Keel: its exit code and what it printed. */
async function keelRuns(url: string, argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const sink = (into: (s: string) => void) =>
    new Writable({
      write(chunk, _encoding, callback) {
        into(String(chunk));
        callback();
      },
    });
  const code = await runRunsCommand(argv, {
    stdout: sink((s) => (stdout += s)),
    stderr: sink(() => {}),
    env: { KEEL_URL: url, KEEL_API_KEY: KEY },
  });
  return { code, stdout };
}

test('kill -9 of keel dev (SQLite): the restart recovers the run as attempt 2 and says so', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-attempts-'));
  const ledger = join(dir, 'ledger.txt');
  const port = await freePort();
  const options = {
    agents: CRASH_AGENTS,
    dataDir: join(dir, 'data'),
    port,
    apiKey: KEY,
    env: { KEEL_TEST_LEDGER: ledger },
  };
  let keel: KeelProcess = await startKeelProcess(options);
  t.after(async () => {
    await keel.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const api = apiClient(keel.url, KEY);
  const runId = await api.submit('crash-steps', { key: 'a', ms: STEP_MS });
  await until(
    'step s1 to be running (s0 committed)',
    async () => {
      let text = '';
      try {
        text = readFileSync(ledger, 'utf8');
      } catch {}
      return text.includes('step a 1\n') ? true : undefined;
    },
    30_000,
  );
  const before = (await api.request('GET', `/v1/runs/${runId}/events?format=json`)).body;
  const deadWorker = before.find((e: any) => e.type === 'run.started').data.worker;
  await keel.kill('SIGKILL');

  keel = await startKeelProcess(options);
  await assertRecovered(apiClient(keel.url, KEY), runId, deadWorker);
  assert.match(keel.output(), new RegExp(RECOVERY_LOG), 'the restarted process logs the recovery');
  const cli = await keelRuns(keel.url, ['attempts', runId]);
  assert.equal(cli.code, 0);
  const rows = cli.stdout.trimEnd().split('\n').slice(1);
  assert.match(rows[0]!, new RegExp(`^1\\s+${deadWorker}\\s.*lease_expired$`), cli.stdout);
  assert.match(rows[1]!, /^2 \(recovery\)\s.*completed$/, cli.stdout);
  const get = await keelRuns(keel.url, ['get', runId]);
  assert.match(
    get.stdout,
    /attempts:\nATTEMPT[^\n]*\n1 [^\n]*lease_expired\n2 \(recovery\)/,
    get.stdout,
  );
});

test('a killed worker (Postgres): another worker recovers the run as attempt 2 and says so', {
  timeout: 120_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'attempts-crash');
  const ledger = join(dir, 'ledger.txt');
  const env = { KEEL_TEST_LEDGER: ledger, KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS) };
  const start = async (role: 'server' | 'worker', name: string, extra = {}) => {
    const p = await startKeelRole({
      role,
      name,
      agents: DIST_AGENTS,
      databaseUrl: db.url,
      ...(role === 'server' ? { apiKey: KEY } : {}),
      env: { ...env, ...extra },
    });
    processes.push(p);
    return p;
  };
  const ownerOf = async (id: string) =>
    (
      await db.query<{ lease_owner: string | null }>('SELECT lease_owner FROM runs WHERE id = $1', [
        id,
      ])
    )[0]!.lease_owner;
  // The server's only slot goes to a blocker run: the workers do the work.
  const server = await start('server', 'keel-server', { KEEL_MAX_ACTIVE_RUNS: '1' });
  const api = apiClient(server.url, KEY);
  const blocker = await api.submit('dist-blocker', { ms: 600_000 });
  await until(
    'the server to hold the blocker',
    async () => ((await ownerOf(blocker)) === server.owner ? true : undefined),
    20_000,
  );
  const w1 = await start('worker', 'keel-worker-1');
  const runId = await api.submit('dist-steps', { key: 'r', steps: 3, ms: [50, STEP_MS * 4, 50] });
  await until(
    'worker 1 to be inside step s1',
    async () =>
      readLedger(ledger).some(
        (l) => l.what === 'step' && l.key === 'r' && l.step === 1 && l.pid === w1.pid,
      )
        ? true
        : undefined,
    20_000,
  );
  assert.equal(await ownerOf(runId), w1.owner);
  await w1.kill('SIGKILL');

  const w2 = await start('worker', 'keel-worker-2');
  await assertRecovered(api, runId, w1.owner);
  assert.match(w2.output(), new RegExp(RECOVERY_LOG), 'the worker that took over logs it');
});
