// kill -9 of applications embedding Keel (test/fixtures/embedded-app.ts, a real child process):
// (1) on SQLite, killed mid-flight and restarted on the same data file, the application finishes
// every run and no step committed before the kill runs again (the ledger outside Keel counts
// executions); (2) two applications on one Postgres database both claim runs; one is killed and
// the other, a worker like any `keel worker`, recovers and finishes all the runs, again without
// repeating a committed step.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createFreshDatabase } from './support/fresh-database.ts';
import { spawnNode } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const APP = fileURLToPath(new URL('./fixtures/embedded-app.ts', import.meta.url));

type App = ReturnType<typeof spawnNode>;

function ledgerLines(ledger: string): string[] {
  try {
    return readFileSync(ledger, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The JSON line the application printed for `event`, once it has. */
function printed(app: App, event: string): any {
  for (const line of app.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line);
    if (parsed.event === event) return parsed;
  }
  const { exitCode, signalCode } = app.child;
  if (exitCode !== null && exitCode !== 0)
    throw new Error(`the application exited with ${exitCode ?? signalCode}: ${app.output()}`);
  return undefined;
}

function startApp(t: TestContext, env: Record<string, string>): App {
  const app = spawnNode(APP, [], env);
  t.after(() => app.kill('SIGKILL'));
  return app;
}

/** Each committed step ran exactly once; every step of every run ran at least once. */
function assertNoCommittedStepRepeated(
  ledger: string[],
  committed: Set<string>,
  keys: string[],
): void {
  const counts = new Map<string, number>();
  for (const line of ledger) {
    const [, key, step] = line.split(' ');
    counts.set(`${key} ${step}`, (counts.get(`${key} ${step}`) ?? 0) + 1);
  }
  for (const step of committed)
    assert.equal(counts.get(step), 1, `committed step ${step} ran ${counts.get(step)} times`);
  for (const key of keys)
    for (let i = 0; i < 5; i += 1)
      assert.ok((counts.get(`${key} s${i}`) ?? 0) >= 1, `${key} s${i} ran`);
}

test('kill -9 of an application embedding Keel (SQLite): restarted, it finishes every run, no committed step repeated', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ledger = join(dir, 'ledger.txt');
  const env = {
    KEEL_TEST_LEDGER: ledger,
    EMBEDDED_DATA_DIR: join(dir, 'data'),
    EMBEDDED_RUNS: '40',
    EMBEDDED_PREFIX: 'k',
    EMBEDDED_STEP_MS: '60',
  };
  const first = startApp(t, env);
  const submitted = await until('the runs submitted', () => printed(first, 'submitted'), 30_000);
  await until(
    'steps committed mid-flight',
    () => (ledgerLines(ledger).length >= 60 ? true : undefined),
    30_000,
  );
  await first.kill('SIGKILL');

  // What had committed at the kill, read from the store file itself.
  const db = new DatabaseSync(join(dir, 'data', 'keel.db'));
  const keyOf = new Map<string, string>(
    submitted.ids.map((id: string, n: number) => [id, `k-${n}`] as const),
  );
  const committed = new Set(
    (
      db
        .prepare("SELECT run_id, name FROM journal WHERE kind = 'step' AND status = 'succeeded'")
        .all() as Array<{ run_id: string; name: string }>
    ).map((r) => `${keyOf.get(r.run_id)} ${r.name}`),
  );
  const unfinished = (
    db
      .prepare(
        "SELECT count(*) AS n FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')",
      )
      .get() as { n: number }
  ).n;
  db.close();
  assert.ok(committed.size > 0, 'some steps had committed before the kill');
  assert.ok(unfinished > 0, `runs were mid-flight at the kill (unfinished: ${unfinished})`);

  const second = startApp(t, env);
  const done = await until('every run finished', () => printed(second, 'done'), 90_000);
  const again = printed(second, 'submitted');
  assert.deepEqual(again.ids, submitted.ids, 'the same runs, found by their idempotency keys');
  assert.equal(done.runs.length, 40);
  for (const run of done.runs) {
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual(run.result, { out: [0, 1, 2, 3, 4] });
  }
  assertNoCommittedStepRepeated(ledgerLines(ledger), committed, [...keyOf.values()]);
});

test('two applications embedding Keel on Postgres share the work; one killed, the other finishes every run', {
  timeout: 150_000,
  skip: !(await postgresAvailable()) && 'PostgreSQL is not available',
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-pg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const ledger = join(dir, 'ledger.txt');
  const common = {
    KEEL_TEST_LEDGER: ledger,
    EMBEDDED_DATABASE_URL: db.url,
    EMBEDDED_RUNS: '30',
    EMBEDDED_STEP_MS: '80',
    EMBEDDED_LEASE_TTL_MS: '2000',
    EMBEDDED_WAIT: '0',
  };
  // A submits and serves; B starts once A's runs exist, submits its own and serves too.
  const a = startApp(t, { ...common, EMBEDDED_PREFIX: 'a' });
  const fromA = await until('A submitted', () => printed(a, 'submitted'), 30_000);
  const b = startApp(t, { ...common, EMBEDDED_PREFIX: 'b' });
  const fromB = await until('B submitted', () => printed(b, 'submitted'), 30_000);
  const pidA = String(a.child.pid);
  const pidB = String(b.child.pid);
  // Both claim runs: each has executed steps before A is killed.
  await until(
    'both applications executing steps',
    () => {
      const pids = new Set(ledgerLines(ledger).map((line) => line.split(' ')[3]));
      return pids.has(pidA) && pids.has(pidB) && ledgerLines(ledger).length >= 80
        ? true
        : undefined;
    },
    60_000,
  );
  await a.kill('SIGKILL');

  const ids: string[] = [...fromA.ids, ...fromB.ids];
  const keyOf = new Map<string, string>([
    ...fromA.ids.map((id: string, n: number) => [id, `a-${n}`] as const),
    ...fromB.ids.map((id: string, n: number) => [id, `b-${n}`] as const),
  ]);
  const committed = new Set(
    (
      await db.query<{ run_id: string; name: string }>(
        "SELECT run_id, name FROM journal WHERE kind = 'step' AND status = 'succeeded'",
      )
    ).map((r) => `${keyOf.get(r.run_id)} ${r.name}`),
  );
  const heldByA = (
    await db.query<{ id: string }>(
      "SELECT id FROM runs WHERE lease_owner = $1 AND status NOT IN ('succeeded', 'failed', 'cancelled')",
      [fromA.worker],
    )
  ).map((r) => r.id);
  assert.ok(heldByA.length > 0, 'A held runs in flight when it was killed');

  // B alone finishes everything, A's runs included (taken over once A's leases expired).
  const deadline = Date.now() + 100_000;
  for (;;) {
    const rows = await db.query<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM runs WHERE id = ANY($1) GROUP BY status',
      [ids],
    );
    const succeeded = Number(rows.find((r) => r.status === 'succeeded')?.n ?? 0);
    if (succeeded === ids.length) break;
    assert.ok(
      !rows.some((r) => r.status === 'failed' || r.status === 'cancelled'),
      JSON.stringify(rows),
    );
    if (Date.now() > deadline) throw new Error(`not all runs finished: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Every run A held at its death was taken over by B: a new attempt, by B, that completed it.
  const takenOver = await db.query<{ run_id: string }>(
    "SELECT DISTINCT run_id FROM run_attempts WHERE worker = $1 AND ending = 'completed' AND run_id = ANY($2)",
    [fromB.worker, heldByA],
  );
  assert.deepEqual(
    new Set(takenOver.map((r) => r.run_id)),
    new Set(heldByA),
    'B completed every run A held',
  );
  assertNoCommittedStepRepeated(ledgerLines(ledger), committed, [...keyOf.values()]);
  await b.kill('SIGTERM');
});
