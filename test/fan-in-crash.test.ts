// A settle-once fan-in across a real crash (issue 21), on SQLite (`keel dev`) and Postgres (`keel
// server`), agent code in isolates (and, on SQLite, in the main thread too): ctx.any over three
// children where the first to finish fails verification and the second wins; the process is
// SIGKILLed at `decision.committed` (the decision and the losers' cancellation are durable, nothing
// has acted on them) and restarted on the same data. While no process runs, the database already
// holds the loser `cancelling`; after the restart the run ends with the same winner, the loser
// cancelled by its parent, and the decision journaled and announced exactly once.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type KeelScene, keelScene } from './support/keel-scene.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/fan-in-agents.ts', import.meta.url));
const KEY = 'fan-in-crash-key';
/** Short, so the dead process's lease on the parent expires within seconds of the restart. */
const LEASE_TTL_MS = 2_000;
const WAIT_MS = 60_000;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** A run's status read from the database itself (while no Keel process runs). */
async function storedStatus(s: KeelScene, id: string): Promise<string> {
  if (s.db !== undefined)
    return (await s.db.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [id]))[0]!
      .status;
  const file = new DatabaseSync(join(s.dataDir, 'keel.db'), { readOnly: true });
  try {
    return (file.prepare('SELECT status FROM runs WHERE id = ?').get(id) as { status: string })
      .status;
  } finally {
    file.close();
  }
}

async function childIds(s: KeelScene, parentId: string): Promise<Map<string, string>> {
  const runs = (await s.api('GET', '/v1/runs?agent=fan-worker&limit=100')).body.runs as any[];
  return new Map(
    runs.filter((r) => r.parentRunId === parentId).map((r) => [r.input.label, r.id as string]),
  );
}

const VARIANTS = [
  { backend: 'sqlite', isolation: 'isolate' },
  { backend: 'postgres', isolation: 'isolate' },
  { backend: 'sqlite', isolation: 'thread' },
] as const;

for (const { backend, isolation } of VARIANTS) {
  test(`fan-in crash (${backend}, agent code in ${isolation === 'thread' ? 'the main thread' : 'isolates'}): kill -9 between the decision and the losers' cancellation; same winner, loser cancelled, one decision`, {
    timeout: 180_000,
  }, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const s = await keelScene(t, {
      agents: AGENTS,
      apiKey: KEY,
      prefix: 'keel-fanin-',
      store: backend,
      env: () => ({ KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS), KEEL_AGENT_ISOLATION: isolation }),
      untilMs: WAIT_MS,
    });
    const first = await s.start({ KEEL_TEST_CRASH_AT: 'decision.committed:1' });
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    const submitted = await s.api('POST', '/v1/runs', {
      agent: 'fan-first-verified',
      input: {
        children: [
          { label: 'A', mode: 'now', ok: false },
          { label: 'B', mode: 'input' },
          { label: 'C', mode: 'input' },
        ],
      },
    });
    assert.equal(submitted.status, 201);
    const id = submitted.body.id as string;
    // A finishes first with a value verify refuses: the parent sees it, no decision yet.
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const steps = (await s.api('GET', `/v1/runs/${id}/steps?io=false`)).body.steps as any[];
      if (steps.some((e) => e.seq === 1 && e.status === 'succeeded')) break;
      if (Date.now() > deadline) {
        const runs = (await s.api('GET', '/v1/runs?limit=100')).body.runs;
        const events = (await s.api('GET', `/v1/runs/${id}/events?format=json`)).body;
        throw new Error(
          `the parent never saw A: ${JSON.stringify({ steps, runs, events })} ${s.keel?.output()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    const kids = await childIds(s, id);
    await s.until(kids.get('B')!, (r) => r.status === 'waiting');
    await s.until(kids.get('C')!, (r) => r.status === 'waiting');
    // B passes: the decision is committed, and the process dies at once.
    await s.api('POST', `/v1/runs/${kids.get('B')}/input`, { key: 'go', value: { ok: true } });
    await exited;
    assert.equal(first.child.signalCode, 'SIGKILL', 'the process died at decision.committed');
    assert.equal(
      await storedStatus(s, kids.get('C')!),
      'cancelling',
      'the loser was cancelled in the decision commit, before anything acted on it',
    );
    assert.equal(await storedStatus(s, id), 'running', 'the parent died mid-run');

    await s.start();
    const done = await s.until(id, (r) => TERMINAL.has(r.status));
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.result, { winner: { label: 'B', ok: true } });
    const c = await s.until(kids.get('C')!, (r) => TERMINAL.has(r.status));
    assert.equal(c.status, 'cancelled', 'the loser is cancelled after the restart');
    const cEvents = (await s.api('GET', `/v1/runs/${kids.get('C')}/events?format=json`))
      .body as any[];
    assert.equal(cEvents.find((e) => e.type === 'run.cancelling')?.data.by, `parent ${id}`);

    const events = (await s.api('GET', `/v1/runs/${id}/events?format=json`)).body as any[];
    const decided = events.filter((e) => e.type === 'fanin.decided');
    assert.equal(decided.length, 1, 'the decision is announced once');
    assert.deepEqual(
      [decided[0].data.branch, decided[0].data.refused, decided[0].data.cancelledRuns],
      [1, [0], [kids.get('C')]],
    );
    assert.ok(
      events.some((e) => e.type === 'run.recovered'),
      'the parent was recovered after the crash (its decision replayed, not made again)',
    );
    const steps = (await s.api('GET', `/v1/runs/${id}/steps?io=false`)).body.steps as any[];
    assert.deepEqual(
      steps.filter((e) => e.kind === 'decision').map((e) => [e.seq, e.name, e.status]),
      [[4, 'any', 'succeeded']],
    );
  });
}
