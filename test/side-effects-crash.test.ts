// Each effect class after a real crash (a Keel process SIGKILLed at a named crash point, then
// restarted on the same data): read/idempotent tools run again (with the same executionId), side
// effects are reconciled through their query hook (found / not found / error) or parked as unknown,
// and every resolve action works, with its 409s.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { keelScene, type KeelScene } from './support/keel-scene.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/effect-agents.ts', import.meta.url));
const KEY = 'effects-test-key';

interface Scene extends KeelScene {
  /** The side effects the fixture's tools performed, one line each. */
  ledger(): string[];
}

async function scene(t: TestContext): Promise<Scene> {
  const keel = await keelScene(t, {
    agents: AGENTS,
    apiKey: KEY,
    prefix: 'keel-effects-',
    env: (dir) => ({ KEEL_TEST_LEDGER: join(dir, 'ledger') }),
  });
  return Object.assign(keel, {
    ledger: () => {
      try {
        return readFileSync(join(keel.dir, 'ledger'), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
  });
}

/**
 * Starts Keel armed to die at `crashAt`, submits one fx-call run for `tool`, waits for the death,
 * restarts.
 */
async function crashOnce(s: Scene, tool: string, crashAt: string): Promise<string> {
  const keel = await s.start({ KEEL_TEST_CRASH_AT: crashAt });
  const exited = new Promise((resolve) => keel.child.once('exit', resolve));
  const res = await s.api('POST', '/v1/runs', { agent: 'fx-call', input: { tool } });
  assert.equal(res.status, 201);
  await exited;
  assert.equal(keel.child.signalCode, 'SIGKILL', 'the process died at the crash point');
  await s.start();
  return res.body.id;
}

const executions = (s: Scene, tool: string) => s.ledger().filter((l) => l.startsWith(`${tool} `));
const eventTypes = async (s: Scene, id: string) =>
  (await s.api('GET', `/v1/runs/${id}/events?format=json`)).body as any[];

test('read: a crash after the tool ran but before its commit runs it again', async (t) => {
  const s = await scene(t);
  const id = await crashOnce(s, 'read', 'execute.before-commit:1');
  const run = await s.until(id, (r) => r.status === 'succeeded');
  assert.deepEqual(run.result, { result: { value: 'read' } });
  assert.equal(executions(s, 'fx-read').length, 2, 'a read is simply run again');
});

test('idempotent: run again after a crash, with the same executionId as its idempotency key', async (t) => {
  const s = await scene(t);
  const id = await crashOnce(s, 'idem', 'execute.before-commit:1');
  const run = await s.until(id, (r) => r.status === 'succeeded');
  const ran = executions(s, 'fx-idem');
  assert.equal(ran.length, 2);
  assert.equal(ran[0], ran[1], 'both executions carried the same executionId');
  assert.equal(`fx-idem ${run.result.result.key}`, ran[0]);
  const steps = (await s.api('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.equal(
    steps[0].executionId,
    run.result.result.key,
    'the steps API shows the stable executionId',
  );
  assert.equal(steps[0].effectClass, 'idempotent');
  assert.equal(steps[0].fencingToken, 2, 'committed under the second lease, after the crash');
  assert.match(steps[0].worker, /^worker-/);
});

test('side effect, query found: it ran before the crash, so Keel takes the queried result and never runs it again', async (t) => {
  const s = await scene(t);
  const id = await crashOnce(s, 'queried', 'execute.before-commit:1');
  const run = await s.until(id, (r) => r.status === 'succeeded');
  assert.deepEqual(run.result, { result: { via: 'query' } });
  assert.equal(executions(s, 'fx-queried').length, 1);
  const events = await eventTypes(s, id);
  assert.ok(events.some((e) => e.type === 'effect.reconciled' && e.data.verdict === 'found'));
});

test('side effect, query not found: it had not run when Keel died, so it is safe to run, and runs once', async (t) => {
  const s = await scene(t);
  const id = await crashOnce(s, 'queried', 'dispatch.before-execute:1');
  const run = await s.until(id, (r) => r.status === 'succeeded');
  assert.deepEqual(run.result, { result: { via: 'run' } });
  assert.equal(executions(s, 'fx-queried').length, 1);
  const events = await eventTypes(s, id);
  assert.ok(events.some((e) => e.type === 'effect.reconciled' && e.data.verdict === 'not_found'));
  assert.equal(
    events.filter((e) => e.type === 'effect.started').length,
    2,
    'the intent was journaled before the crash, and again for the retry',
  );
});

test('side effect, query error: the outcome stays unknown and the run parks for a decision', async (t) => {
  const s = await scene(t);
  const id = await crashOnce(s, 'queryFails', 'execute.before-commit:1');
  const run = await s.until(id, (r) => r.status === 'waiting');
  assert.equal(run.waitingReason, 'unknown_side_effect');
  const [step] = (await s.api('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.equal(step.status, 'unknown');
  assert.equal(step.effectClass, 'side-effect');
  const unknown = (await eventTypes(s, id)).find((e) => e.type === 'effect.unknown');
  assert.match(unknown.data.reason, /downstream unavailable/);
  assert.equal(executions(s, 'fx-query-fails').length, 1, 'never re-run blindly');
});

test('resolve: retry, succeeded and failed each continue the run; anything but an unknown execution is refused', async (t) => {
  const s = await scene(t);
  await s.start();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push(
      (await s.api('POST', '/v1/runs', { agent: 'fx-call', input: { tool: 'hangs' } })).body.id,
    );
  const deadline = Date.now() + 20_000;
  while (executions(s, 'fx-hangs').length < 3) {
    if (Date.now() > deadline) throw new Error('the side effects did not start');
    await new Promise((r) => setTimeout(r, 25));
  }
  await s.keel!.kill('SIGKILL');
  await s.start();
  for (const id of ids)
    await s.until(id, (r) => r.status === 'waiting' && r.waitingReason === 'unknown_side_effect');
  const [retried, succeeded, failed] = ids.map((id) => `${id}.1`);

  assert.equal(
    (await s.api('POST', `/v1/runs/${ids[0]}/executions/${retried}/resolve`, { action: 'retry' }))
      .status,
    202,
  );
  assert.equal(
    (
      await s.api('POST', `/v1/runs/${ids[1]}/executions/${succeeded}/resolve`, {
        action: 'succeeded',
        result: { via: 'operator' },
      })
    ).status,
    202,
  );
  assert.equal(
    (
      await s.api('POST', `/v1/runs/${ids[2]}/executions/${failed}/resolve`, {
        action: 'failed',
        error: { message: 'the bank said no' },
      })
    ).status,
    202,
  );

  assert.deepEqual((await s.until(ids[0]!, (r) => r.status === 'succeeded')).result, {
    result: { via: 'run' },
  });
  assert.deepEqual((await s.until(ids[1]!, (r) => r.status === 'succeeded')).result, {
    result: { via: 'operator' },
  });
  assert.deepEqual((await s.until(ids[2]!, (r) => r.status === 'succeeded')).result, {
    caught: 'tool_failed',
    message: 'the bank said no',
  });
  assert.equal(
    s.ledger().filter((l) => l === `fx-hangs ${retried}`).length,
    2,
    'retry ran it again, as the operator asked',
  );
  assert.equal(
    s.ledger().filter((l) => l === `fx-hangs ${succeeded}`).length,
    1,
    'succeeded did not run it again',
  );

  // Only unknown executions can be resolved: 409 once settled (or the run ended), 404 for an
  // execution that is not there.
  const again = await s.api('POST', `/v1/runs/${ids[1]}/executions/${succeeded}/resolve`, {
    action: 'retry',
  });
  assert.equal(again.status, 409);
  assert.ok(
    ['execution_not_unknown', 'run_terminal'].includes(again.body.error.code),
    again.body.error.code,
  );
  const missing = await s.api('POST', `/v1/runs/${ids[0]}/executions/${ids[0]}.99/resolve`, {
    action: 'retry',
  });
  assert.ok([404, 409].includes(missing.status));
  const bad = await s.api('POST', `/v1/runs/${ids[0]}/executions/${retried}/resolve`, {
    action: 'compensate-please',
  });
  assert.equal(bad.status, 400);
  // The audit trail has each decision.
  for (const id of ids)
    assert.ok((await eventTypes(s, id)).some((e) => e.type === 'effect.resolved'));
});
