// The built-in exec under its declared effect class, on a real namespace sandbox in a real `keel dev`
// killed with SIGKILL mid-command: a `read` exec (declared by the call) and an `idempotent` one
// (declared by the profile) simply run again and the run finishes without a human; a side-effect
// exec parks `unknown` as before, `keel runs show` names the commands that resolve it, and the real
// CLI's `keel runs resolve --as retry` lets the run finish.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KeelProcess } from './support/keel-process.ts';
import { keelScene, type KeelScene } from './support/keel-scene.ts';
import { skipUnless } from './support/sandbox.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/exec-effect-agents.ts', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const KEY = 'exec-effects-test-key-0123456789';
/** Marks in the workspace that the command is running, then takes long enough to be killed in. */
const SCRIPT = 'touch started; sleep 2; echo done';
const DEADLINE_MS = 60_000;

interface Scene extends KeelScene {
  keel: KeelProcess;
  /** Resolves once a sandbox is running the command (its mark is in a workspace). */
  commandStarted(): Promise<void>;
}

async function scene(t: TestContext): Promise<Scene> {
  const s = await keelScene(t, {
    agents: AGENTS,
    apiKey: KEY,
    prefix: 'keel-exec-fx-',
    untilMs: DEADLINE_MS,
  });
  await s.start();
  return Object.assign(s as KeelScene & { keel: KeelProcess }, {
    async commandStarted() {
      const root = join(s.dataDir, 'sandboxes');
      const deadline = Date.now() + DEADLINE_MS;
      const marked = () =>
        existsSync(root) &&
        readdirSync(root).some((name) => existsSync(join(root, name, 'started')));
      while (!marked()) {
        if (Date.now() > deadline)
          throw new Error(`the command never started\n${s.keel?.output()}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  });
}

async function killedMidCommand(s: Scene, agent: string, input: object): Promise<string> {
  const submitted = await s.api('POST', '/v1/runs', { agent, input });
  assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
  await s.commandStarted();
  await s.restart();
  return submitted.body.id;
}

const cli = (s: Scene, ...argv: string[]) =>
  promisify(execFile)(process.execPath, [MAIN, 'runs', ...argv], {
    env: { ...process.env, KEEL_URL: s.keel.url, KEEL_API_KEY: KEY },
  });

test('an exec the call declares read is run again after kill -9 and the run finishes alone', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const s = await scene(t);
  const id = await killedMidCommand(s, 'shell', { script: SCRIPT, effect: 'read' });
  const run = await s.until(id, (r) => ['succeeded', 'failed', 'waiting'].includes(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result, { stdout: 'done\n', exitCode: 0 });
  const [step] = (await s.api('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.equal(step.effectClass, 'read');
});

test('an exec whose profile declares it idempotent is run again after kill -9', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const s = await scene(t);
  const id = await killedMidCommand(s, 'shell-idem', { script: SCRIPT });
  const run = await s.until(id, (r) => ['succeeded', 'failed', 'waiting'].includes(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result, { stdout: 'done\n', exitCode: 0 });
  const [step] = (await s.api('GET', `/v1/runs/${id}/steps`)).body.steps;
  assert.equal(step.effectClass, 'idempotent');
});

test('a side-effect exec parks unknown after kill -9; show names the fix and the CLI resolves it', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const s = await scene(t);
  const id = await killedMidCommand(s, 'shell', { script: SCRIPT });
  const parked = await s.until(id, (r) => r.status !== 'queued' && r.status !== 'running');
  assert.equal(parked.status, 'waiting', JSON.stringify(parked));
  assert.equal(parked.waitingReason, 'unknown_side_effect');
  const execution = `${id}.1`;

  const shown = await cli(s, 'show', id);
  assert.match(shown.stdout, new RegExp(`#1 exec\\s+execution ${execution.replace('.', '\\.')}`));
  assert.ok(shown.stdout.includes(`keel runs resolve ${id} ${execution} --as retry`), shown.stdout);
  await assert.rejects(cli(s, 'resolve', id, execution, '--as', 'maybe'), (error: any) => {
    assert.equal(error.code, 2);
    assert.match(error.stderr, /--as must be one of succeeded, failed, retry/);
    return true;
  });

  const resolved = await cli(s, 'resolve', id, execution, '--as', 'retry');
  assert.match(resolved.stdout, new RegExp(`execution ${execution} resolved as retry`));
  const run = await s.until(id, (r) => ['succeeded', 'failed'].includes(r.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result, { stdout: 'done\n', exitCode: 0 });
  await assert.rejects(cli(s, 'resolve', id, execution, '--as', 'retry'), (error: any) => {
    assert.equal(error.code, 1, 'an execution no longer unknown is refused');
    return true;
  });
});
