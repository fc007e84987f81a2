// The errors a user meets first when starting Keel, each from the real `keel` process: one line on
// stderr saying what is wrong and how to fix it, exit code 2, no stack trace. Node older than 24
// (through bin/keel.js), unknown flags, a taken port, a data directory that cannot be written, an
// agents file that is missing, broken or empty, a database that cannot be reached; and --data on
// server/worker, which names their local (sandbox) directory.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/keel.js', import.meta.url));
const DIST_MAIN = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const AGENTS = fileURLToPath(new URL('./fixtures/dev-agents.ts', import.meta.url));
const SDK = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const RUN_TIMEOUT_MS = 30_000;
const STARTED_TIMEOUT_MS = 20_000;
/**
 * The uid/gid a root test process runs the CLI as, so that a directory's permissions apply to it.
 */
const NOBODY = 65_534;

interface Outcome {
  status: number | null;
  stdout: string;
  stderr: string;
}

function keel(
  args: string[],
  options: { env?: Record<string, string | undefined>; uid?: number } = {},
): Outcome {
  const env: Record<string, string | undefined> = {
    ...process.env,
    KEEL_LOG_LEVEL: 'warn',
    KEEL_DATABASE_URL: undefined,
    KEEL_API_KEY: 'startup-test-key',
    ...options.env,
  };
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
  });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Exit 2 and exactly one line on stderr matching `pattern`, with a hint after the dash and no stack
 * frame.
 */
function assertOneLineError(outcome: Outcome, pattern: RegExp): void {
  const lines = outcome.stderr.split('\n').filter((line) => line.trim() !== '');
  assert.equal(outcome.status, 2, outcome.stderr);
  assert.equal(lines.length, 1, `one line expected on stderr, got:\n${outcome.stderr}`);
  assert.match(lines[0]!, pattern);
  assert.match(lines[0]!, /^keel( \w+)?: .+ — \S.+$/, 'the problem, then a hint');
  assert.doesNotMatch(outcome.stderr, /\n\s+at /, 'no stack trace');
}

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-startup-'));
  chmodSync(dir, 0o755); // readable by NOBODY when the test runs as root
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('unknown flags on dev, server and worker name the flag and the flags there are', () => {
  for (const role of ['dev', 'server', 'worker']) {
    const outcome = keel([role, '--agents', AGENTS, '--bogus']);
    assertOneLineError(
      outcome,
      new RegExp(`^keel ${role}: unknown flag --bogus; the flags here are --agents, .*--data`),
    );
  }
  assertOneLineError(
    keel(['dev', '--agents', AGENTS, '--port']),
    /^keel dev: --port needs a value/,
  );
  assertOneLineError(
    keel(['dev', '--agents', AGENTS, '--port', 'seventy']),
    /^keel dev: --port must be an integer from 0 to 65535, got 'seventy'/,
  );
  assertOneLineError(keel(['dev', 'agents.ts']), /^keel dev: unexpected argument 'agents\.ts'/);
  assertOneLineError(keel(['dev']), /^keel dev: --agents <file> is required — pass the module/);
  assertOneLineError(
    keel(['worker', '--agents', AGENTS, '--port', '7070']),
    /^keel worker: a worker serves no API, so it takes no --port or --host/,
  );
  assertOneLineError(keel(['migrate', '--bogus']), /^keel migrate: unknown flag --bogus/);
  assertOneLineError(keel(['doctor', '--bogus']), /^keel doctor: unknown flag --bogus/);
  const help = keel(['dev', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: keel dev --agents <file>/);
});

test('a port already in use is refused before the data directory is touched', async (t) => {
  const dir = tempDir(t);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const outcome = keel([
    'dev',
    '--agents',
    AGENTS,
    '--port',
    String(port),
    '--data',
    join(dir, 'data'),
  ]);
  assertOneLineError(
    outcome,
    new RegExp(
      `^keel dev: port ${port} on 127\\.0\\.0\\.1 is already in use — stop the process listening there, or pass another --port`,
    ),
  );
  assert.equal(existsSync(join(dir, 'data')), false, 'no data directory or lock was created');
  const metrics = keel(['dev', '--agents', AGENTS, '--port', '0', '--data', join(dir, 'data')], {
    env: { KEEL_METRICS_PORT: String(port) },
  });
  assertOneLineError(
    metrics,
    new RegExp(
      `^keel dev: port ${port} on 127\\.0\\.0\\.1 is already in use — .* or set another KEEL_METRICS_PORT`,
    ),
  );
});

test('a data directory that cannot be written is refused with the directory named', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'a-file');
  writeFileSync(file, 'not a directory');
  assertOneLineError(
    keel(['dev', '--agents', AGENTS, '--port', '0', '--data', join(file, 'data')]),
    /^keel dev: data directory .*a-file\/data is not a directory: a file is in the way \(ENOTDIR\) — pass --data with a directory/,
  );

  const junk = join(dir, 'junk');
  mkdirSync(junk);
  writeFileSync(join(junk, 'keel.db'), 'notes, not a database '.repeat(20));
  assertOneLineError(
    keel(['dev', '--agents', AGENTS, '--port', '0', '--data', junk]),
    /^keel dev: .*junk\/keel\.db is not a database \(SQLITE_NOTADB\) — pass --data with another directory/,
  );
  assert.equal(
    existsSync(join(junk, 'keel.lock')),
    false,
    'the lock is released when the start fails',
  );

  const readOnly = join(dir, 'read-only');
  mkdirSync(readOnly, { mode: 0o555 });
  chmodSync(readOnly, 0o555);
  // Root writes anywhere: the CLI then runs as nobody, for whom the permissions hold.
  const asRoot = process.getuid?.() === 0;
  const outcome = keel(
    ['dev', '--agents', AGENTS, '--port', '0', '--data', join(readOnly, 'data')],
    asRoot ? { uid: NOBODY } : {},
  );
  assertOneLineError(
    outcome,
    /^keel dev: data directory .*read-only\/data is not writable by this process \(EACCES\)/,
  );
});

test('an agents file that is missing, does not load or exports no agent is named with what to do', (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data');
  const start = (file: string) => keel(['dev', '--agents', file, '--port', '0', '--data', data]);
  assertOneLineError(
    start(join(dir, 'nope.ts')),
    /^keel dev: agents file .*nope\.ts does not exist — pass --agents with the path/,
  );
  assertOneLineError(start(dir), /^keel dev: agents file .* is not a file/);

  const broken = join(dir, 'broken.ts');
  writeFileSync(broken, 'export const agent = {;\n');
  assertOneLineError(
    start(broken),
    /^keel dev: agents file .*broken\.ts does not load: SyntaxError: .*\(at .*broken\.ts:1\) — fix the module/,
  );

  const throwing = join(dir, 'throwing.ts');
  writeFileSync(
    throwing,
    'export const x = 1;\nthrow new Error("no API key in the environment");\n',
  );
  assertOneLineError(
    start(throwing),
    /^keel dev: agents file .*throwing\.ts does not load: no API key in the environment \(at .*throwing\.ts:2:\d+\)/,
  );

  const unresolved = join(dir, 'unresolved.ts');
  writeFileSync(unresolved, 'import { x } from "keel-no-such-package";\nexport const a = x;\n');
  assertOneLineError(
    start(unresolved),
    /^keel dev: agents file .*unresolved\.ts does not load: Cannot find package 'keel-no-such-package'/,
  );

  const empty = join(dir, 'empty.ts');
  writeFileSync(empty, 'export const notAnAgent = { name: "x" };\n');
  assertOneLineError(
    start(empty),
    /^keel dev: agents file .*empty\.ts exports no agent — export the result of defineAgent\(\)/,
  );
  const twice = join(dir, 'twice.ts');
  writeFileSync(
    twice,
    `import { defineAgent } from ${JSON.stringify(SDK)};
export const a = defineAgent({ name: 'same', version: '1', async run() { return 1; } });
export const b = defineAgent({ name: 'same', version: '1', async run() { return 2; } });
`,
  );
  assertOneLineError(
    start(twice),
    /^keel dev: agents file .*twice\.ts: exports two different agents named same@1 — export each agent/,
  );
  assert.equal(
    existsSync(data),
    false,
    'the agents file is checked before the data directory is opened',
  );
});

test('an agents file that loads on the main thread but not in an agent isolate fails the start instead of hanging it', (t) => {
  const dir = tempDir(t);
  const mainOnly = join(dir, 'main-only.ts');
  writeFileSync(
    mainOnly,
    `import { isMainThread } from 'node:worker_threads';
import { defineAgent } from ${JSON.stringify(SDK)};
if (!isMainThread) throw new Error('needs the main thread');
export const a = defineAgent({ name: 'a', version: '1', async run() { return 1; } });
`,
  );
  assertOneLineError(
    keel(['dev', '--agents', mainOnly, '--port', '0', '--data', join(dir, 'data')]),
    /^keel dev: agents file .*main-only\.ts does not load in an agent isolate: needs the main thread — agent code runs in worker threads/,
  );
});

test('invalid configuration and a broken pools file are one line naming what to fix', (t) => {
  const dir = tempDir(t);
  assertOneLineError(
    keel(['dev', '--agents', AGENTS, '--port', '0', '--data', dir], {
      env: { KEEL_DURABILITY: 'sometimes' },
    }),
    /^keel dev: config_invalid: invalid configuration: KEEL_DURABILITY: .* — fix the setting named/,
  );
  const pools = join(dir, 'pools.json');
  writeFileSync(pools, '{ "pools": ');
  assertOneLineError(
    keel(['dev', '--agents', AGENTS, '--port', '0', '--data', dir], {
      env: { KEEL_POOLS_FILE: pools },
    }),
    /^keel dev: pools_config_invalid: .*pools\.json.* — fix the pools file \(KEEL_POOLS_FILE\)/,
  );
});

test('server and worker without KEEL_DATABASE_URL, and migrate against a database that is not there', () => {
  for (const role of ['server', 'worker']) {
    assertOneLineError(
      keel([role, '--agents', AGENTS, '--data', 'x']),
      new RegExp(`^keel ${role}: needs KEEL_DATABASE_URL .* — set KEEL_DATABASE_URL=postgres://`),
    );
  }
  assertOneLineError(
    keel(['migrate']),
    /^keel migrate: needs KEEL_DATABASE_URL — set KEEL_DATABASE_URL/,
  );
  // Port 1 on the loopback: nothing listens there.
  assertOneLineError(
    keel(['migrate'], {
      env: { KEEL_DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/keel' },
    }),
    /^keel migrate: cannot connect to PostgreSQL at 127\.0\.0\.1:1\/keel \(ECONNREFUSED\) — check KEEL_DATABASE_URL/,
  );
  assertOneLineError(
    keel(['worker', '--agents', AGENTS], {
      env: { KEEL_DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/keel' },
    }),
    /^keel worker: cannot connect to PostgreSQL at 127\.0\.0\.1:1\/keel \(ECONNREFUSED\)/,
  );
});

test('server and worker take --data as their local sandbox directory; a database that does not exist is refused', async (t) => {
  if (!(await postgresAvailable())) return t.skip('PostgreSQL is not available');
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const dir = tempDir(t);

  const missing = new URL(db.url);
  missing.pathname = `/${db.name}_missing`;
  assertOneLineError(
    keel(['server', '--agents', AGENTS, '--port', '0'], {
      env: { KEEL_DATABASE_URL: missing.href },
    }),
    /^keel server: PostgreSQL at .* refused Keel, the database does not exist/,
  );

  const file = join(dir, 'a-file');
  writeFileSync(file, '');
  assertOneLineError(
    keel(['worker', '--agents', AGENTS, '--data', join(file, 'x')], {
      env: { KEEL_DATABASE_URL: db.url },
    }),
    /^keel worker: data directory .* is not a directory/,
  );

  for (const role of ['server', 'worker'] as const) {
    const data = join(dir, `${role}-data`);
    const args = [
      MAIN,
      role,
      '--agents',
      AGENTS,
      '--data',
      data,
      ...(role === 'server' ? ['--port', '0'] : []),
    ];
    const child = spawn(process.execPath, args, {
      env: { ...process.env, KEEL_LOG_LEVEL: 'warn', KEEL_DATABASE_URL: db.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // The exit code, or the signal that ended it (a signal means it was not stopped gracefully).
    const exited = new Promise<number | string | null>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? signal)),
    );
    t.after(() => child.kill('SIGKILL'));
    const deadline = Date.now() + STARTED_TIMEOUT_MS;
    while (!new RegExp(`keel ${role}: .*\\(worker `).test(output)) {
      assert.equal(child.exitCode, null, `keel ${role} --data exited: ${output}`);
      assert.ok(Date.now() < deadline, `keel ${role} --data did not start: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(existsSync(data), `keel ${role} created its --data directory`);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  }
});

/** A `node` on PATH older than 24, if this machine has one (the system node often is). */
function oldNodeOnPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    if (dir === '' || !existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    const major = Number(/^v(\d+)\./.exec(version)?.[1]);
    if (Number.isInteger(major) && major < 24) return candidate;
  }
  return undefined;
}

test('bin/keel.js on a Node older than 24 says so in one line, even for --help', (t) => {
  const old = oldNodeOnPath();
  if (old === undefined)
    return t.skip('no Node older than 24 on PATH (the test below fakes the version instead)');
  for (const args of [['--help'], ['dev', '--agents', AGENTS], ['runs', 'list']]) {
    const result = spawnSync(old, [BIN, ...args], { encoding: 'utf8', timeout: RUN_TIMEOUT_MS });
    assertOneLineError(
      { status: result.status, stdout: result.stdout, stderr: result.stderr },
      /^keel: Node\.js 24 or newer is required, but this is Node \d+\.\d+\.\d+ \(.*\) — install Node 24/,
    );
    assert.doesNotMatch(result.stderr, /ERR_UNKNOWN_BUILTIN_MODULE|node:sqlite/);
  }
});

test('bin/keel.js checks process.versions.node before it imports the CLI', () => {
  // Node 24 told it is Node 22: the check alone decides, before dist/ is imported (or found
  // missing).
  const fake =
    'data:text/javascript,Object.defineProperty(process.versions, "node", { value: "22.3.0" })';
  const result = spawnSync(process.execPath, ['--import', fake, BIN, '--help'], {
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
  });
  assertOneLineError(
    { status: result.status, stdout: result.stdout, stderr: result.stderr },
    /^keel: Node\.js 24 or newer is required, but this is Node 22\.3\.0/,
  );
});

test('bin/keel.js on Node 24 runs the compiled CLI', {
  skip:
    existsSync(DIST_MAIN) || process.env.CI === 'true'
      ? false
      : 'dist/ is not built (npm run build)',
}, () => {
  const help = spawnSync(process.execPath, [BIN, '--help'], {
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
  });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: keel <command>/);
  const unknown = spawnSync(process.execPath, [BIN, 'dev', '--agents', AGENTS, '--bogus'], {
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
  });
  assertOneLineError(
    { status: unknown.status, stdout: unknown.stdout, stderr: unknown.stderr },
    /^keel dev: unknown flag --bogus/,
  );
});
