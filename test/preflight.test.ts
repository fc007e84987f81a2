// Preflight of model credentials, from the real `keel` process: a model whose key variable is unset
// gets a warning at start naming the model and the variable; --strict refuses the start (exit 2,
// one line); `keel doctor` lists the same check, and --call-models makes one call per provider
// endpoint against a fake OpenAI-compatible server, whose 401 names the variable the key came from.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { startKeelProcess } from './support/keel-process.ts';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('./fixtures/dev-agents.ts', import.meta.url));
const GOOD_KEY = 'sk-good-0123456789';
const UNSET = 'KEEL_TEST_PREFLIGHT_UNSET_KEY';

function modelsFile(t: { after(fn: () => void): void }, models: unknown[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-preflight-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'keel.models.json');
  writeFileSync(file, JSON.stringify({ models }));
  return file;
}

/** Runs `keel` as a child process (asynchronously: a fake provider in this process must answer). */
function keel(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, KEEL_LOG_LEVEL: 'warn', KEEL_DATABASE_URL: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const unsetModel = {
  name: 'gpt',
  provider: 'openai',
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKeyEnv: UNSET,
};

test('keel dev warns at start about a model whose key variable is unset, naming both', async (t) => {
  const file = modelsFile(t, [unsetModel]);
  const dir = mkdtempSync(join(tmpdir(), 'keel-preflight-data-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const keelDev = await startKeelProcess({
    agents: AGENTS,
    dataDir: dir,
    apiKey: 'preflight-key',
    env: { KEEL_MODELS_FILE: file },
  });
  t.after(() => keelDev.kill('SIGTERM'));
  const warning = keelDev
    .output()
    .split('\n')
    .find((line) => line.includes(UNSET));
  assert.ok(warning, `no warning names ${UNSET}:\n${keelDev.output()}`);
  const parsed = JSON.parse(warning);
  assert.equal(parsed.level, 40, 'a warning');
  assert.equal(parsed.model, 'gpt');
  assert.equal(parsed.variable, UNSET);
  assert.match(parsed.msg, new RegExp(`model gpt needs ${UNSET}, which is unset`));
});

test('--strict refuses the start with exit 2 and the same message, on one line', async (t) => {
  const file = modelsFile(t, [unsetModel]);
  const dir = mkdtempSync(join(tmpdir(), 'keel-preflight-data-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const outcome = await keel(
    ['dev', '--agents', AGENTS, '--port', '0', '--data', dir, '--strict'],
    {
      KEEL_MODELS_FILE: file,
    },
  );
  assert.equal(outcome.status, 2, outcome.stderr + outcome.stdout);
  const lines = outcome.stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, outcome.stderr);
  assert.match(lines[0]!, new RegExp(`^keel dev: model gpt needs ${UNSET}, which is unset.* — `));
  assert.doesNotMatch(outcome.stderr, /\n\s+at /);
  // The same file with the variable set starts (checked by doctor below without a server).
});

test('keel server and keel worker --strict refuse the same way, before they touch the database', async (t) => {
  const file = modelsFile(t, [unsetModel]);
  for (const role of ['server', 'worker']) {
    const outcome = await keel(
      [role, '--agents', AGENTS, ...(role === 'server' ? ['--port', '0'] : []), '--strict'],
      // Nothing listens there: the credentials are checked before any connection is tried.
      { KEEL_MODELS_FILE: file, KEEL_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
    );
    assert.equal(outcome.status, 2, outcome.stderr);
    assert.match(
      outcome.stderr,
      new RegExp(`^keel ${role}: model gpt needs ${UNSET}, which is unset.* — .+\n$`),
    );
  }
});

test('keel doctor lists each model credentials check; a set variable passes', async (t) => {
  const file = modelsFile(t, [
    unsetModel,
    { name: 'set', provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'SET_KEY' },
    { name: 'local', provider: 'mock' },
  ]);
  const outcome = await keel(['doctor', '--models', file, '--json'], {
    SET_KEY: GOOD_KEY,
    [UNSET]: undefined,
  });
  assert.equal(outcome.status, 1, 'a failed model check fails the doctor');
  const { models } = JSON.parse(outcome.stdout);
  const byName = Object.fromEntries(models.map((m: any) => [m.model, m]));
  assert.equal(byName.gpt.ok, false);
  assert.match(byName.gpt.detail, new RegExp(`model gpt needs ${UNSET}, which is unset`));
  assert.equal(byName.set.ok, true);
  assert.deepEqual(byName.set.variables, ['SET_KEY']);
  assert.equal(byName.local.ok, true);
  assert.ok(!outcome.stdout.includes(GOOD_KEY), 'keys are never printed');
  const text = await keel(['doctor', '--models', file], { SET_KEY: GOOD_KEY });
  assert.match(text.stdout, /model credentials:\n/);
  assert.match(text.stdout, new RegExp(`FAIL gpt +model gpt needs ${UNSET}`));
  assert.match(text.stdout, /ok {3}set +SET_KEY set/);
});

test('keel doctor --call-models makes one call per provider endpoint and key and reports each outcome; a 401 names the variable', async (t) => {
  const fake = await startFakeOpenAi((_body, index) =>
    fake.requests[index]?.headers.authorization === `Bearer ${GOOD_KEY}`
      ? { kind: 'reply', text: 'pong' }
      : { kind: 'status', status: 401, message: 'Incorrect API key provided' },
  );
  t.after(() => fake.close());
  const url = `${fake.url}/v1`;
  const file = modelsFile(t, [
    { name: 'good', provider: 'openai', baseUrl: url, apiKeyEnv: 'GOOD_KEY' },
    { name: 'twin', provider: 'openai', baseUrl: url, apiKeyEnv: 'GOOD_KEY' },
    { name: 'wrong', provider: 'openai', baseUrl: url, apiKeyEnv: 'WRONG_KEY' },
  ]);
  const outcome = await keel(['doctor', '--models', file, '--call-models', '--json'], {
    GOOD_KEY,
    WRONG_KEY: 'sk-revoked',
  });
  assert.equal(outcome.status, 1, outcome.stderr);
  const { calls } = JSON.parse(outcome.stdout);
  assert.equal(calls.length, 2, 'good and twin share an endpoint and a key: one call');
  assert.equal(fake.requests.length, 2);
  assert.ok(fake.requests.every((r) => r.body.max_tokens === 1));
  const good = calls.find((c: any) => c.model === 'good');
  assert.equal(good.ok, true, JSON.stringify(good));
  assert.deepEqual(good.covers, ['good', 'twin']);
  const wrong = calls.find((c: any) => c.model === 'wrong');
  assert.equal(wrong.ok, false);
  assert.equal(wrong.code, 'model_auth_failed');
  assert.match(wrong.detail, /the key came from WRONG_KEY/);
  assert.ok(!outcome.stdout.includes('sk-revoked') && !outcome.stdout.includes(GOOD_KEY));
});
