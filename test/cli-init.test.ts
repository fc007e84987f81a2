// `keel init` from the real CLI: the scaffold it writes (an ES module on Node 24 with keel as a
// dependency), that it refuses to overwrite, that the scaffolded project runs its example agent
// under `keel dev` as written; and the start error of the same project made CommonJS (what `npm
// init` writes), which names the package.json and the `"type": "module"` fix.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startKeelProcess } from './support/keel-process.ts';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));
const KEY = 'init-test-key-0123456789abcdef';

function keel(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    cwd,
    env: { ...process.env, KEEL_LOG_LEVEL: 'warn', KEEL_API_KEY: KEY, KEEL_DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (result.error !== undefined) throw result.error;
  return result;
}

/** The scaffold, made runnable here: its dependencies are this checkout and its zod. */
function project(t: { after(fn: () => void): void }): string {
  const base = mkdtempSync(join(tmpdir(), 'keel-init-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const made = keel(['init', 'my-agents'], base);
  assert.equal(made.status, 0, made.stderr);
  const dir = join(base, 'my-agents');
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(REPO, join(dir, 'node_modules', 'keel'));
  symlinkSync(join(REPO, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'));
  return dir;
}

test('keel init scaffolds an ES module project and never overwrites', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-init-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const made = keel(['init', 'proj'], base);
  assert.equal(made.status, 0, made.stderr);
  assert.match(
    made.stdout,
    /created a Keel project in proj: package\.json, agents\.ts, models\.json/,
  );
  const dir = join(base, 'proj');
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  assert.equal(manifest.name, 'proj');
  assert.equal(manifest.type, 'module');
  assert.equal(manifest.engines.node, '>=24');
  assert.match(manifest.dependencies.keel, /^\^\d+\.\d+\.\d+$/);
  assert.match(readFileSync(join(dir, 'agents.ts'), 'utf8'), /defineAgent\(/);
  assert.equal(
    JSON.parse(readFileSync(join(dir, 'models.json'), 'utf8')).models[0].provider,
    'mock',
  );
  assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /must stay an ES module/);

  writeFileSync(join(dir, 'agents.ts'), '// mine\n');
  rmSync(join(dir, 'README.md'));
  const again = keel(['init', 'proj'], base);
  assert.equal(again.status, 2);
  assert.match(
    again.stderr,
    /proj already has package\.json, agents\.ts, models\.json, \.gitignore; nothing was written/,
  );
  assert.equal(readFileSync(join(dir, 'agents.ts'), 'utf8'), '// mine\n', 'not overwritten');
  assert.throws(
    () => readFileSync(join(dir, 'README.md')),
    'nothing written, not even the missing file',
  );
});

test('the scaffolded project runs its example agent under keel dev', async (t) => {
  const dir = project(t);
  const keelDev = await startKeelProcess({
    agents: join(dir, 'agents.ts'),
    dataDir: join(dir, '.keel'),
    apiKey: KEY,
    env: { KEEL_MODELS_FILE: join(dir, 'models.json') },
  });
  t.after(() => keelDev.kill('SIGKILL'));
  const api = async (method: string, path: string, body?: unknown) =>
    (await fetch(keelDev.url + path, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then((r) => r.json())) as any;
  const { id } = await api('POST', '/v1/runs', { agent: 'hello', input: { name: 'Ada' } });
  const deadline = Date.now() + 30_000;
  let run: any;
  do {
    run = await api('GET', `/v1/runs/${id}`);
    if (Date.now() > deadline) throw new Error(`stuck: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 25));
  } while (!['succeeded', 'failed'].includes(run.status));
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.deepEqual(run.result, {
    greeting: 'hello Ada',
    reply: 'hello Ada, your name has 3 letters',
  });
});

test('a CommonJS project (what npm init writes) fails to start with the "type": "module" fix', (t) => {
  const dir = project(t);
  const manifestPath = join(dir, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  writeFileSync(manifestPath, JSON.stringify({ ...manifest, type: 'commonjs' }));
  const started = keel(['dev', '--agents', 'agents.ts', '--port', '0', '--data', '.keel'], dir);
  assert.equal(started.status, 2, started.stderr);
  const line = started.stderr.split('\n').find((l) => l.startsWith('keel dev:'));
  assert.ok(line, started.stderr);
  assert.match(
    line,
    /agents file agents\.ts does not load: it uses import\/export, but .*my-agents\/package\.json says "type": "commonjs", so Node reads it as CommonJS/,
  );
  assert.match(line, /add "type": "module" to .*my-agents\/package\.json/);
  assert.doesNotMatch(started.stderr, /\n\s+at /, 'no stack trace');
});
