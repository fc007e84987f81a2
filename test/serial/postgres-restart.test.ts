// A PostgreSQL restart under load: a `keel server` and a `keel worker` are running 60 runs when the
// machine's PostgreSQL is stopped (fast shutdown), kept down for 10 s and started again. Meanwhile
// both processes stay up and the server's /readyz answers 503; afterwards /readyz answers 200, both
// processes resume work (each may hold only half the runs, so both must), every run submitted
// before the stop finishes, and no step that had committed before the stop runs again. This stops
// the shared server: it lives in test/serial/, which `npm test` runs in a second, serial pass after
// every other test, and the cluster is always started again (finally, t.after, process exit).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createFreshDatabase } from '../support/fresh-database.ts';
import {
  TERMINAL_STATUSES,
  apiClient,
  committedSteps,
  readLedger,
  runStatuses,
  stepStarts,
  submitAll,
  until,
} from '../support/distributed.ts';
import { startKeelRole, type KeelRoleProcess } from '../support/keel-process.ts';
import { localCluster } from '../support/postgres-cluster.ts';
import { postgresAvailable } from '../support/postgres.ts';

const AGENTS = fileURLToPath(new URL('../fixtures/distributed-agents.ts', import.meta.url));
const KEY = 'postgres-restart-key';
const RUNS = 60;
const STEPS = 6;
const STEP_MS = 250;
const LEASE_TTL_MS = 2_000;
/** The outage the scenario asks for. */
const DOWN_MS = 10_000;

const available = await postgresAvailable();
const cluster = available ? localCluster() : undefined;
if (available && cluster === undefined && process.env.CI === 'true')
  throw new Error(
    'the Postgres restart test needs a local cluster under /etc/postgresql (pg_ctlcluster)',
  );

test('Postgres stopped for 10 s and started again: processes stay up, report not ready, then resume; nothing is lost or repeated', {
  timeout: 150_000,
  skip: cluster === undefined,
}, async (t) => {
  const pgCluster = cluster!;
  const dir = mkdtempSync(join(tmpdir(), 'keel-pg-restart-'));
  const ledger = join(dir, 'ledger.txt');
  const db = await createFreshDatabase();
  const processes: KeelRoleProcess[] = [];
  t.after(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
    try {
      await pgCluster.restore();
      await until(
        'PostgreSQL to answer again',
        async () => ((await postgresAvailable().catch(() => false)) ? true : undefined),
        30_000,
      );
    } finally {
      await db.drop();
    }
  });
  const env = {
    KEEL_TEST_LEDGER: ledger,
    KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS),
    KEEL_MAX_ACTIVE_RUNS: String(RUNS / 2),
  };
  const server = await startKeelRole({
    role: 'server',
    name: 'keel-server',
    agents: AGENTS,
    databaseUrl: db.url,
    apiKey: KEY,
    env,
  });
  processes.push(server);
  const worker = await startKeelRole({
    role: 'worker',
    name: 'keel-worker',
    agents: AGENTS,
    databaseUrl: db.url,
    env,
  });
  processes.push(worker);
  const api = apiClient(server.url, KEY);
  const readyz = async () => {
    assert.ok(
      server.alive() && worker.alive(),
      `a process died:\n${server.output()}\n${worker.output()}`,
    );
    return (await fetch(`${server.url}/readyz`)).status;
  };
  assert.equal(await readyz(), 200);

  const keys = Array.from({ length: RUNS }, (_, i) => `k${i}`);
  const ids = await submitAll(
    api,
    'dist-steps',
    keys.map((key) => ({ key, steps: STEPS, ms: [STEP_MS] })),
  );
  const idOf = new Map(keys.map((key, i) => [key, ids[i]!]));
  await until(
    'both processes running steps',
    async () => {
      const pids = new Set(readLedger(ledger).map((l) => l.pid));
      return pids.has(server.pid) && pids.has(worker.pid) && readLedger(ledger).length >= RUNS * 2
        ? true
        : undefined;
    },
    20_000,
  );

  // The last look at the journal before the stop: every step committed here must never run again.
  const committedBeforeStop = await committedSteps(db);
  const [unfinished] = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')",
  );
  assert.ok(unfinished!.n > 0, 'runs are mid-flight when Postgres stops');
  let ledgerAtRestart = 0;
  let stoppedAt = 0;
  let notReadyAfterMs = 0;
  let startedAt = 0;
  try {
    await pgCluster.stop();
    stoppedAt = Date.now();
    await until(
      '/readyz to answer 503',
      async () => ((await readyz()) === 503 ? true : undefined),
      5_000,
    );
    notReadyAfterMs = Date.now() - stoppedAt;
    // The scenario's fixed outage (not a wait for a state): check, through it, that both processes
    // stay alive.
    while (Date.now() - stoppedAt < DOWN_MS) {
      assert.ok(
        server.alive() && worker.alive(),
        `a process died while Postgres was down:\n${server.output()}\n${worker.output()}`,
      );
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(await readyz(), 503, 'still not ready at the end of the outage');
    const body = await (await fetch(`${server.url}/readyz`)).json();
    assert.equal(body.store, 'unavailable');
    // Work the processes do from here on is work they resumed (step bodies running at the stop
    // ended long ago).
    ledgerAtRestart = readLedger(ledger).length;
  } finally {
    startedAt = Date.now();
    await pgCluster.start();
  }
  await until(
    '/readyz to answer 200 again',
    async () => ((await readyz()) === 200 ? true : undefined),
    30_000,
    () => server.output(),
  );
  const readyAfterMs = Date.now() - startedAt;

  const finals = await until(
    'every run to finish',
    async () => {
      const statuses = await runStatuses(db, ids).catch(() => undefined);
      return statuses !== undefined &&
        [...statuses.values()].every((s) => TERMINAL_STATUSES.includes(s.status))
        ? statuses
        : undefined;
    },
    60_000,
    () => `${server.output()}\n${worker.output()}`,
  );
  for (const id of ids) {
    const run = finals.get(id)!;
    assert.equal(run.status, 'succeeded', `run ${id} ended ${run.status}`);
    assert.deepEqual(
      run.result.out.map((o: { i: number }) => o.i),
      [0, 1, 2, 3, 4, 5],
    );
  }
  const doneAfterMs = Date.now() - startedAt;
  assert.ok(
    server.alive() && worker.alive(),
    'the same processes finished the work (they reconnected; nothing restarted them)',
  );
  const after = readLedger(ledger).slice(ledgerAtRestart);
  assert.ok(
    after.some((l) => l.pid === server.pid) && after.some((l) => l.pid === worker.pid),
    'both processes resumed work after the restart',
  );

  const starts = stepStarts(readLedger(ledger));
  for (const key of keys) {
    let reran = 0;
    for (let i = 0; i < STEPS; i++) {
      const n = (starts.get(`${key} ${i}`) ?? []).length;
      if (committedBeforeStop.has(`${idOf.get(key)} s${i}`))
        assert.equal(n, 1, `step ${key} s${i} had committed before the stop but ran ${n} times`);
      assert.ok(n >= 1 && n <= 2, `step ${key} s${i} ran ${n} times`);
      if (n === 2) reran++;
    }
    assert.ok(
      reran <= 1,
      `run ${key}: ${reran} steps ran twice; only the one in flight at the stop may`,
    );
  }
  t.diagnostic(
    `${unfinished!.n} runs unfinished at the stop; /readyz 503 after ${notReadyAfterMs} ms; after pg_ctlcluster start was called: ready in ${readyAfterMs} ms, all runs done in ${doneAfterMs} ms`,
  );
});
