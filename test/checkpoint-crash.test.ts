// Bounded replay across a real crash (issue 22), on SQLite (`keel dev`) and Postgres (`keel
// server`), agent code in isolates (and, on SQLite, in the main thread too). A loop of 30 steps
// checkpoints every 5; the process is SIGKILLed mid-run after a commit and restarted on the same
// data. The resumed run re-enters its code once, from its latest checkpoint (never from position
// 1), replays only what follows it, runs each step body exactly once in all, continues ctx.random
// where it was, and ends with the state the uninterrupted loop computes. On the same restart, a
// run whose code now takes a checkpoint where its journal holds a step fails `non_determinism`, and
// a checkpoint with an earlier effect still pending fails `checkpoint_unsettled`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SeededRandom } from '../src/engine/deterministic.ts';
import { keelScene } from './support/keel-scene.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/checkpoint-agents.ts', import.meta.url));
const KEY = 'checkpoint-crash-key';
/** Short, so the dead process's lease expires within seconds of the restart. */
const LEASE_TTL_MS = 2_000;
const N = 30;
const EVERY = 5;
/** The commit the first process dies after: past a few checkpoints, well before the end. */
const CRASH_AT_COMMIT = 22;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

const VARIANTS = [
  { backend: 'sqlite', isolation: 'isolate' },
  { backend: 'postgres', isolation: 'isolate' },
  { backend: 'sqlite', isolation: 'thread' },
] as const;

for (const { backend, isolation } of VARIANTS) {
  test(`checkpoint across kill -9 (${backend}, agent code in ${isolation === 'thread' ? 'the main thread' : 'isolates'}): resumes from the latest checkpoint, each step once, moved checkpoint is non_determinism`, {
    timeout: 120_000,
  }, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const s = await keelScene(t, {
      agents: AGENTS,
      apiKey: KEY,
      prefix: 'keel-checkpoint-',
      store: backend,
      env: (dir) => ({
        KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS),
        KEEL_AGENT_ISOLATION: isolation,
        KEEL_TEST_LEDGER: join(dir, 'ledger.txt'),
      }),
      untilMs: 60_000,
      startupTimeoutMs: 60_000,
    });
    const ledger = () => readFileSync(join(s.dir, 'ledger.txt'), 'utf8').trim().split('\n');
    const first = await s.start({ KEEL_TEST_CRASH_AT: `commit.before-notify:${CRASH_AT_COMMIT}` });
    const exited = new Promise((resolve) => first.child.once('exit', resolve));

    // A run that checkpoints, then parks: it meets changed code after the restart.
    const moved = await s.api('POST', '/v1/runs', { agent: 'checkpoint-moved', input: null });
    assert.equal(moved.status, 201);
    await s.until(moved.body.id, (r) => r.status === 'waiting');

    const loop = await s.api('POST', '/v1/runs', {
      agent: 'checkpoint-loop',
      input: { key: 'L', n: N, every: EVERY },
    });
    assert.equal(loop.status, 201);
    const id = loop.body.id as string;
    await exited;
    assert.equal(first.child.signalCode, 'SIGKILL', 'the process died after a commit');
    const before = ledger().filter((l) => l.startsWith('step L'));
    assert.ok(before.length > EVERY && before.length < N, `died mid-run (${before.length} steps)`);

    await s.start({ KEEL_TEST_CHECKPOINT_MOVED: '1' });
    const done = await s.until(id, (r) => TERMINAL.has(r.status));
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const rng = new SeededRandom(id);
    const draws = Array.from({ length: N / EVERY }, () => Math.floor(rng.next() * 1e9));
    assert.deepEqual(
      done.result,
      { i: N, sum: N * (N - 1), draws },
      'the state the uninterrupted loop computes, ctx.random continued across the resume',
    );

    const lines = ledger();
    const steps = lines.filter((l) => l.startsWith('step L')).map((l) => Number(l.split(' ')[2]));
    assert.deepEqual(
      [...steps].sort((a, b) => a - b),
      Array.from({ length: N }, (_, i) => i),
      'every step body ran exactly once across the crash',
    );
    const enters = lines.filter((l) => l.startsWith('enter L')).map((l) => Number(l.split(' ')[2]));
    assert.equal(enters.length, 2, `entered once per process: ${JSON.stringify(enters)}`);
    assert.equal(enters[0], 0, 'the first process started from position 1');
    assert.ok(enters[1]! > 0, 'the restart re-entered from a checkpoint, not from position 1');

    const steps2 = (await s.api('GET', `/v1/runs/${id}/steps?io=false`)).body.steps as any[];
    const checkpoints = steps2.filter((e) => e.kind === 'checkpoint').map((e) => e.seq as number);
    assert.equal(checkpoints.length, N / EVERY);
    const resumedAt = enters[1]!;
    assert.ok(checkpoints.includes(resumedAt), 'it re-entered at a journaled checkpoint');
    assert.equal(
      Math.max(...checkpoints.filter((c) => c <= steps2.length && c < resumedAt + 1)),
      resumedAt,
    );
    const events = (await s.api('GET', `/v1/runs/${id}/events?format=json`)).body as any[];
    const recovered = events.find((e) => e.type === 'run.recovered');
    assert.ok(recovered !== undefined, 'the run was recovered over its expired lease');
    assert.ok(
      recovered.data.replayedPositions <= EVERY + 1,
      `the claim loaded only the positions since the checkpoint (${recovered.data.replayedPositions})`,
    );
    assert.equal(events.filter((e) => e.type === 'run.checkpointed').length, N / EVERY);

    // Changed code: a checkpoint where the journal holds the step `second`.
    await s.api('POST', `/v1/runs/${moved.body.id}/input`, { key: 'go', value: 1 });
    const diverged = await s.until(moved.body.id, (r) => TERMINAL.has(r.status));
    assert.equal(diverged.status, 'failed');
    assert.equal(diverged.error.code, 'non_determinism');
    assert.equal(diverged.error.details.position, 3);
    assert.deepEqual(diverged.error.details.code, { kind: 'checkpoint', name: 'checkpoint' });

    const early = await s.api('POST', '/v1/runs', { agent: 'checkpoint-early', input: null });
    const refused = await s.until(early.body.id, (r) => TERMINAL.has(r.status));
    assert.equal(refused.status, 'failed');
    assert.equal(refused.error.code, 'checkpoint_unsettled');
  });
}
