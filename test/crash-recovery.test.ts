// kill -9 of `keel dev` with 120 runs mid-flight, then a restart on the same data: every run
// finishes, no committed step runs again (the ledger outside Keel counts executions), and no side
// effect runs twice: an interrupted side-effect tool is resolved through its query hook or parked
// as `unknown_side_effect`, never re-run blindly.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startKeelProcess, type KeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/crash-agents.ts', import.meta.url));
const STEP_RUNS = 100;
const CHARGE_RUNS = 10;
const KEY = 'crash-test-key';

async function api(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('kill -9 mid-flight: every run finishes, no committed step or side effect runs twice', {
  timeout: 120_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-crash-'));
  const ledger = join(dir, 'ledger.txt');
  const port = await freePort();
  let keel: KeelProcess | undefined = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    port,
    apiKey: KEY,
    env: { KEEL_TEST_LEDGER: ledger },
  });
  t.after(async () => {
    await keel?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const stepRuns: Array<[string, string]> = [];
  const chargeRuns: Array<[string, string, boolean]> = [];
  for (let i = 0; i < STEP_RUNS; i++) {
    const r = await api(keel.url, 'POST', '/v1/runs', {
      agent: 'crash-steps',
      input: { key: `k${i}`, ms: 120 },
    });
    assert.equal(r.status, 201);
    stepRuns.push([`k${i}`, r.body.id]);
  }
  for (let i = 0; i < CHARGE_RUNS * 2; i++) {
    const query = i % 2 === 1;
    const r = await api(keel.url, 'POST', '/v1/runs', {
      agent: 'crash-charge',
      input: { key: `c${i}`, query },
    });
    assert.equal(r.status, 201);
    chargeRuns.push([`c${i}`, r.body.id, query]);
  }

  // Kill when work is genuinely mid-flight: some steps committed, runs unfinished, side effects
  // running.
  await until(
    'steps committed and side effects running',
    async () => {
      const text = (() => {
        try {
          return readFileSync(ledger, 'utf8');
        } catch {
          return '';
        }
      })();
      const steps = text.split('\n').filter((l) => l.startsWith('step ')).length;
      const charges = text.split('\n').filter((l) => l.startsWith('charge')).length;
      return steps >= 150 && charges >= CHARGE_RUNS * 2 ? true : undefined;
    },
    30_000,
  );
  await keel.kill('SIGKILL');
  keel = undefined;

  // What had committed at the moment of the kill, read from the store file itself.
  const db = new DatabaseSync(join(dir, 'data', 'keel.db'));
  const committedSteps = new Set(
    (
      db
        .prepare("SELECT run_id, name FROM journal WHERE kind = 'step' AND status = 'succeeded'")
        .all() as Array<{ run_id: string; name: string }>
    ).map((r) => `${r.run_id} ${r.name}`),
  );
  const unfinished = (
    db
      .prepare(
        "SELECT count(*) AS n FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')",
      )
      .get() as { n: number }
  ).n;
  const ledgerAtKill = readFileSync(ledger, 'utf8');
  db.close();
  assert.ok(committedSteps.size > 0, 'some steps had committed before the kill');
  assert.ok(unfinished > 0, `runs were mid-flight at the kill (unfinished: ${unfinished})`);

  keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    port,
    apiKey: KEY,
    env: { KEEL_TEST_LEDGER: ledger },
  });
  const url = keel.url;
  const finals = new Map<string, any>();
  await until(
    'every run settled',
    async () => {
      for (const [key, id] of [
        ...stepRuns.map(([k, id]) => [k, id] as const),
        ...chargeRuns.map(([k, id]) => [k, id] as const),
      ]) {
        if (finals.has(key)) continue;
        const run = (await api(url, 'GET', `/v1/runs/${id}`)).body;
        const settled =
          ['succeeded', 'failed', 'cancelled'].includes(run.status) ||
          (run.status === 'waiting' && run.waitingReason === 'unknown_side_effect');
        if (settled) finals.set(key, run);
      }
      return finals.size === stepRuns.length + chargeRuns.length ? true : undefined;
    },
    60_000,
  );

  const lines = readFileSync(ledger, 'utf8').split('\n').filter(Boolean);
  const count = new Map<string, number>();
  for (const line of lines) count.set(line, (count.get(line) ?? 0) + 1);

  // Steps: all runs succeeded; a step committed before the kill never ran again; at most the
  // in-flight step re-ran.
  for (const [key, id] of stepRuns) {
    const run = finals.get(key);
    assert.equal(
      run.status,
      'succeeded',
      `run ${key} ended ${run.status}: ${JSON.stringify(run.error)}`,
    );
    assert.deepEqual(run.result, { out: [0, 1, 2, 3, 4] });
    let reran = 0;
    for (let i = 0; i < 5; i++) {
      const n = count.get(`step ${key} ${i}`) ?? 0;
      if (committedSteps.has(`${id} s${i}`))
        assert.equal(n, 1, `step ${key} s${i} had committed before the kill but ran ${n} times`);
      assert.ok(n >= 1 && n <= 2, `step ${key} s${i} ran ${n} times`);
      if (n === 2) reran++;
    }
    assert.ok(
      reran <= 1,
      `run ${key}: ${reran} steps re-ran; only the one in flight at the kill may`,
    );
  }

  // Side effects: never twice. Without a query hook, an interrupted one parks as unknown; with one,
  // it resolves.
  let parkedUnknown = 0;
  let resolvedByQuery = 0;
  for (const [key, id, query] of chargeRuns) {
    const executions = lines.filter((l) => l.startsWith(`${query ? 'chargeq' : 'charge'} ${key} `));
    assert.ok(executions.length <= 1, `side effect ${key} ran ${executions.length} times`);
    const run = finals.get(key);
    const wasInterrupted = ledgerAtKill.includes(`charge${query ? 'q' : ''} ${key} `);
    if (!query && wasInterrupted && run.status === 'waiting') {
      assert.equal(run.waitingReason, 'unknown_side_effect');
      const steps = (await api(url, 'GET', `/v1/runs/${id}/steps`)).body.steps;
      assert.equal(steps[0].status, 'unknown', 'the execution is reported as unknown');
      parkedUnknown++;
    } else {
      assert.equal(
        run.status,
        'succeeded',
        `charge run ${key}: ${run.status} ${JSON.stringify(run.error)}`,
      );
      if (run.result.receipt.via === 'query') resolvedByQuery++;
    }
  }
  assert.ok(
    parkedUnknown > 0,
    'at least one interrupted side effect without a query hook was parked as unknown',
  );

  // An operator settles the unknown executions: one as succeeded (not run again), the others
  // retried explicitly.
  const parked = chargeRuns.filter(([key]) => finals.get(key).status === 'waiting');
  for (const [i, [key, id]] of parked.entries()) {
    const executionId = `${id}.1`;
    const action =
      i === 0
        ? { action: 'succeeded', result: { charged: true, via: 'operator' } }
        : { action: 'retry' };
    const res = await api(url, 'POST', `/v1/runs/${id}/executions/${executionId}/resolve`, action);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const run = await until(
      `run ${key} to finish after resolution`,
      async () => {
        const r = (await api(url, 'GET', `/v1/runs/${id}`)).body;
        return r.status === 'succeeded' ? r : undefined;
      },
      20_000,
    );
    const ran = readFileSync(ledger, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith(`charge ${key} `)).length;
    if (i === 0) {
      assert.deepEqual(run.result.receipt, { charged: true, via: 'operator' });
      assert.equal(ran, 1, 'settled by the operator: not run again');
    } else {
      assert.equal(ran, 2, 'retried on the operator’s explicit decision');
    }
    const again = await api(url, 'POST', `/v1/runs/${id}/executions/${executionId}/resolve`, {
      action: 'retry',
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'run_terminal');
  }
  const [, anyStepRun] = stepRuns[0]!;
  assert.equal(
    (await api(url, 'POST', `/v1/runs/${anyStepRun}/executions/nope/resolve`, { action: 'retry' }))
      .status,
    409,
    'finished run',
  );
  assert.ok(
    resolvedByQuery > 0,
    'at least one interrupted side effect was resolved through its query hook',
  );
});
