// Three real processes on one Postgres (1 `keel server` + 2 `keel worker`, same agents): 500 runs
// of a five-step agent are submitted through the server's API, and one worker is killed with
// SIGKILL while it holds running runs with step bodies in flight. All 500 runs must finish, and no
// committed effect may run again: a step that had committed when the worker died ran exactly once
// (the ledger outside Keel counts executions per process); the only steps that ran twice are the
// ones the dead worker was executing, each re-run once by another process after the dead worker's
// lease expired (KEEL_LEASE_TTL_MS is short so that takes seconds). A live process that stalls past
// that short lease (a loaded CI machine) loses its run the same way: a step it ran twice is allowed
// only when the database records that lease expiry (an attempt of that process ended
// lease_expired), so a re-run with no lease lost still fails the test.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  apiClient,
  committedSteps,
  distributedScene,
  readLedger,
  runStatuses,
  stepStarts,
  submitAll,
  TERMINAL_STATUSES,
  until,
  untilSessionsGone,
} from './support/distributed.ts';
import { startKeelRole, type KeelRoleProcess } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/distributed-agents.ts', import.meta.url));
const KEY = 'distributed-crash-key';
const RUNS = 500;
const STEPS = 5;
const STEP_MS = 100;
const LEASE_TTL_MS = 2_000;
/** Kill once this many step bodies have started (a fifth of all), so the kill lands mid-load. */
const KILL_AFTER_STEP_STARTS = (RUNS * STEPS) / 5;

test('SIGKILL of a worker under load: all 500 runs finish, no committed step runs again', {
  timeout: 120_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'dist-crash');
  const ledger = join(dir, 'ledger.txt');
  // Each process may hold at most 60 runs, so the load is spread over all three instead of the
  // first to hear of it.
  const env = {
    KEEL_TEST_LEDGER: ledger,
    KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS),
    KEEL_MAX_ACTIVE_RUNS: '60',
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
  const workers = await Promise.all(
    ['keel-worker-1', 'keel-worker-2'].map((name) =>
      startKeelRole({ role: 'worker', name, agents: AGENTS, databaseUrl: db.url, env }),
    ),
  );
  processes.push(...workers);
  const names = new Map<KeelRoleProcess, string>([
    [workers[0]!, 'keel-worker-1'],
    [workers[1]!, 'keel-worker-2'],
  ]);
  const api = apiClient(server.url, KEY);

  const started = Date.now();
  const keys = Array.from({ length: RUNS }, (_, i) => `k${i}`);
  const submitting = submitAll(
    api,
    'dist-steps',
    keys.map((key) => ({ key, steps: STEPS, ms: [STEP_MS] })),
  );

  // The victim: a worker that holds running runs in the database while the ledger shows a fifth of
  // the load done.
  const victim = await until(
    'a worker holding running runs mid-load',
    async () => {
      if (readLedger(ledger).filter((l) => l.what === 'step').length < KILL_AFTER_STEP_STARTS)
        return undefined;
      const held = await db.query<{ lease_owner: string; n: number }>(
        "SELECT lease_owner, count(*)::int AS n FROM runs WHERE status = 'running' AND lease_owner = ANY($1) GROUP BY lease_owner ORDER BY n DESC",
        [workers.map((w) => w.owner)],
      );
      const busiest = held.find((h) => h.n >= 5);
      return busiest === undefined
        ? undefined
        : workers.find((w) => w.owner === busiest.lease_owner);
    },
    60_000,
  );
  await victim.kill('SIGKILL');
  const killedAt = Date.now();
  // Read what had committed at the moment of the kill once the dead process's sessions are gone (a
  // COMMIT it sent just before dying could otherwise still land after the read).
  await untilSessionsGone(db, names.get(victim)!);
  const committedAtKill = await committedSteps(db);
  const heldAtKill = new Set(
    (
      await db.query<{ id: string }>(
        "SELECT id FROM runs WHERE lease_owner = $1 AND status = 'running'",
        [victim.owner],
      )
    ).map((r) => r.id),
  );
  const ledgerAtKill = readLedger(ledger);
  const ids = await submitting;
  const keyOf = new Map(ids.map((id, i) => [id, keys[i]!]));
  const idOf = new Map(keys.map((key, i) => [key, ids[i]!]));
  assert.ok(heldAtKill.size > 0, 'the killed worker held running runs');
  // Step bodies the dead worker had started and not committed: interrupted mid-step.
  const interrupted = new Set(
    ledgerAtKill
      .filter(
        (l) =>
          l.what === 'step' &&
          l.pid === victim.pid &&
          !committedAtKill.has(`${idOf.get(l.key)} s${l.step}`),
      )
      .map((l) => `${l.key} ${l.step}`),
  );
  assert.ok(interrupted.size > 0, 'the killed worker was in the middle of step bodies');

  const finals = await until(
    'all 500 runs to finish',
    async () => {
      const statuses = await runStatuses(db, ids);
      return [...statuses.values()].every((s) => TERMINAL_STATUSES.includes(s.status))
        ? statuses
        : undefined;
    },
    60_000,
    () => server.output(),
  );
  const finishedAt = Date.now();

  for (const id of ids) {
    const run = finals.get(id)!;
    assert.equal(run.status, 'succeeded', `run ${keyOf.get(id)} ended ${run.status}`);
    assert.deepEqual(
      run.result.out.map((o: { i: number }) => o.i),
      [0, 1, 2, 3, 4],
    );
    assert.equal(run.leaseOwner, null);
  }
  // The API agrees with the database (a sample: one run the dead worker held).
  const [aHeld] = [...heldAtKill];
  assert.equal((await api.request('GET', `/v1/runs/${aHeld}`)).body.status, 'succeeded');

  const starts = stepStarts(readLedger(ledger));
  // Leases that live processes lost (run id → lease owners whose attempt ended lease_expired).
  const lostLeases = new Map<string, Set<string>>();
  for (const row of await db.query<{ run_id: string; worker: string }>(
    "SELECT run_id, worker FROM run_attempts WHERE ending = 'lease_expired' AND worker <> $1",
    [victim.owner],
  ))
    lostLeases.set(row.run_id, (lostLeases.get(row.run_id) ?? new Set()).add(row.worker));
  const ownerOfPid = new Map(processes.map((p) => [p.pid, p.owner]));
  const rerunByRun = new Map<string, number>();
  let stalledReruns = 0;
  for (const key of keys) {
    for (let i = 0; i < STEPS; i++) {
      const executions = starts.get(`${key} ${i}`) ?? [];
      const where = `step ${key} s${i} (run ${idOf.get(key)})`;
      assert.ok(executions.length >= 1, `${where} never ran`);
      // A live process that stalled past its lease (recorded as lease_expired) lost the run to
      // another one, which ran the step in flight again: at least once for a step cut off before
      // its commit, whenever that commit came (also before the kill).
      const lostByFirst =
        executions.length === 2 &&
        (lostLeases.get(idOf.get(key)!)?.has(ownerOfPid.get(executions[0]!.pid)!) ?? false);
      if (committedAtKill.has(`${idOf.get(key)} s${i}`) && !lostByFirst)
        assert.equal(
          executions.length,
          1,
          `${where} had committed before the kill but ran ${executions.length} times`,
        );
      if (interrupted.has(`${key} ${i}`)) {
        assert.equal(
          executions.length,
          2,
          `${where} was interrupted by the kill: it must run once more, elsewhere`,
        );
        assert.ok(
          heldAtKill.has(idOf.get(key)!),
          `${where}: its run was held by the killed worker`,
        );
        assert.notEqual(executions[1]!.pid, victim.pid, `${where} re-ran in another process`);
      } else if (lostByFirst) {
        // Its first executor stalled past the lease (recorded above) and another process took over.
        stalledReruns++;
        assert.notEqual(executions[1]!.pid, executions[0]!.pid, `${where} re-ran elsewhere`);
      } else {
        assert.equal(
          executions.length,
          1,
          `${where} ran ${executions.length} times (pids ${executions.map((e) => e.pid).join(', ')}; killed ${victim.pid}); only a step interrupted by the kill may run twice`,
        );
      }
      if (executions.length > 1) rerunByRun.set(key, (rerunByRun.get(key) ?? 0) + 1);
    }
  }
  for (const [key, n] of rerunByRun) {
    const allowed =
      (heldAtKill.has(idOf.get(key)!) ? 1 : 0) + (lostLeases.get(idOf.get(key)!)?.size ?? 0);
    assert.ok(
      n <= Math.max(1, allowed),
      `run ${key}: ${n} steps ran twice; only one in flight at each lost lease may`,
    );
  }
  // Runs the dead worker held were finished by the survivors: every one of its runs got a later
  // lease.
  const reclaimed = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND lease_token >= 2',
    [[...heldAtKill]],
  );
  assert.equal(
    reclaimed[0]!.n,
    heldAtKill.size,
    'every run held by the killed worker was claimed again',
  );
  for (const p of processes)
    if (p !== victim) assert.ok(p.alive(), `${p.role} ${p.owner} is still running`);
  t.diagnostic(
    `kill after ${killedAt - started} ms (${heldAtKill.size} runs held, ${interrupted.size} steps in flight); all done ${finishedAt - killedAt} ms later; ${stalledReruns} steps re-run after a live process lost its lease`,
  );
});
