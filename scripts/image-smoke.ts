// `npm run image:smoke`: builds Keel's container image (the Dockerfile) with podman and checks it runs: `keel dev`
// with the example agents answers /healthz and /readyz, takes a run over HTTP with the API key it printed and runs
// it to success, serves the dashboard, runs as `node` and stops cleanly on SIGTERM; `keel migrate` migrates a
// throwaway PostgreSQL database; the image ships compiled dist/ (no TypeScript of Keel's, no dev dependencies).
// Where no registry is reachable the base image is built locally (scripts/image-smoke-base.ts). Not part of
// `npm test`: it needs podman and the network and takes minutes. Exits 0 with "skipped" when podman is absent,
// non-zero on any failure; removes its containers (the images stay, as a cache for the next run).
//
// Options: --no-cache (rebuild every layer, and the local base image). Environment: KEEL_SMOKE_NODE_IMAGE (a
// Node 24 base image to pull instead of the local one), KEEL_SMOKE_RUNTIME (podman's OCI runtime; default runc
// when installed), KEEL_SMOKE_DATABASE_URL (an admin URL for `keel migrate`'s database, default
// postgres://postgres@127.0.0.1:5432/test), KEEL_SMOKE_DEBIAN_MIRROR.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { baseImageTag, buildBaseImage, findBaseInputs } from './image-smoke-base.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const IMAGE = 'localhost/keel:smoke';
const NO_CACHE = process.argv.includes('--no-cache');
const started = Date.now();
/** Containers this run created, removed on exit whatever happens. */
const containers = new Set<string>();

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function elapsed(since = started): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function ok(what: string, detail = ''): void {
  say(`  ok  ${what}${detail === '' ? '' : ` (${detail})`}`);
}

class SmokeFailure extends Error {}

function fail(what: string, detail = ''): never {
  throw new SmokeFailure(`${what}${detail === '' ? '' : `\n${detail.trim()}`}`);
}

/** podman's OCI runtime: crun (podman's default) cannot start containers on hosts with hybrid cgroups; runc can. */
function ociRuntime(): string | undefined {
  if (process.env.KEEL_SMOKE_RUNTIME !== undefined) return process.env.KEEL_SMOKE_RUNTIME;
  return ['/usr/bin/runc', '/usr/sbin/runc'].some((path) => existsSync(path)) ? 'runc' : undefined;
}
const RUNTIME = ociRuntime();

/**
 * --ulimit for builds and containers: a container may not raise a limit above what the runtime itself has (runc
 * fails with "error setting rlimits"), so the host's hard limits, capped at podman's own build default for nproc.
 */
function ulimits(): string[] {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const hard = (name: string, cap: number): number => {
    const value = new RegExp(`^${name}\\s+\\S+\\s+(\\S+)`, 'm').exec(limits)?.[1];
    return value === undefined || value === 'unlimited' ? cap : Math.min(Number(value), cap);
  };
  const nofile = hard('Max open files', 65536);
  const nproc = hard('Max processes', 32768);
  return ['--ulimit', `nofile=${nofile}:${nofile}`, '--ulimit', `nproc=${nproc}:${nproc}`];
}
const ULIMITS = ulimits();

/** Runs podman (with the chosen runtime); `onLine` sees output lines as they come. */
function podman(args: string[], onLine?: (line: string) => void): Promise<Result> {
  const argv = [...(RUNTIME === undefined ? [] : ['--runtime', RUNTIME]), ...args];
  return new Promise((resolve, reject) => {
    const child = spawn('podman', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    for (const key of ['stdout', 'stderr'] as const) {
      let partial = '';
      child[key].on('data', (chunk: Buffer) => {
        out[key] += chunk.toString();
        if (onLine === undefined) return;
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) onLine(line);
      });
    }
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, ...out }));
  });
}

async function podmanOk(args: string[], what: string): Promise<string> {
  const result = await podman(args);
  if (result.code !== 0) fail(what, `podman ${args.join(' ')}: ${result.stderr}${result.stdout}`);
  return result.stdout.trim();
}

function removeContainers(): void {
  for (const name of containers) {
    try {
      execFileSync('podman', ['rm', '--force', '--time', '0', name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
    containers.delete(name);
  }
}

async function podmanInstalled(): Promise<string | undefined> {
  try {
    return (await podman(['--version'])).stdout.trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The base image: KEEL_SMOKE_NODE_IMAGE as given, else the local one, built when its content key is new. */
async function baseImage(): Promise<string> {
  const given = process.env.KEEL_SMOKE_NODE_IMAGE;
  if (given !== undefined && given !== '') {
    ok('base image', `${given}, pulled by the build`);
    return given;
  }
  const inputs = findBaseInputs(ROOT, process.env);
  const tag = baseImageTag(inputs);
  const previous = await imageId(tag);
  if (previous !== undefined && !NO_CACHE) {
    ok('base image', `${tag} cached (Node ${inputs.nodeVersion}, npm ${inputs.npmVersion})`);
    return tag;
  }
  const since = Date.now();
  say(
    `  ..  building ${tag}: Debian bookworm (mmdebstrap, ${inputs.mirror}), Node ${inputs.nodeVersion}, npm ${inputs.npmVersion}${inputs.extraCa === undefined ? '' : `, the CAs of NODE_EXTRA_CA_CERTS (${inputs.extraCa})`}`,
  );
  await buildBaseImage(inputs, tag, (line) => say(`      ${line}`));
  await podmanOk(['tag', tag, 'localhost/keel-node-base:24'], 'tag the base image');
  if (previous !== undefined) await podman(['rmi', previous]); // replaced under --no-cache
  ok('base image', `${tag} built in ${elapsed(since)}`);
  return tag;
}

async function imageId(image: string): Promise<string | undefined> {
  const result = await podman(['image', 'inspect', image, '--format', '{{.Id}}']);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

async function buildImage(base: string): Promise<void> {
  const previous = await imageId(IMAGE);
  const since = Date.now();
  const tail: string[] = [];
  const args = [
    'build',
    '--layers',
    ...(NO_CACHE ? ['--no-cache'] : []),
    ...ULIMITS,
    '--build-arg',
    `NODE_IMAGE=${base}`,
    '--tag',
    IMAGE,
    '--file',
    `${ROOT}/Dockerfile`,
    ROOT,
  ];
  say(`  ..  podman ${RUNTIME === undefined ? '' : `--runtime ${RUNTIME} `}${args.join(' ')}`);
  const result = await podman(args, (line) => {
    tail.push(line);
    if (tail.length > 60) tail.shift();
    if (/^\[\d+\/\d+\] STEP|^STEP /.test(line)) say(`      ${elapsed(since).padStart(8)}  ${line}`);
  });
  if (result.code !== 0) fail('podman build failed', tail.join('\n'));
  ok('image built', `${IMAGE} in ${elapsed(since)}`);
  // The previous smoke image, untagged now, goes (its layers the new one shares stay).
  const current = await imageId(IMAGE);
  if (previous !== undefined && previous !== current) await podman(['rmi', previous]);
}

async function inspectImage(): Promise<void> {
  const [size, user, entrypoint] = (
    await podmanOk(
      [
        'image',
        'inspect',
        IMAGE,
        '--format',
        '{{.Size}}|{{.Config.User}}|{{json .Config.Entrypoint}}',
      ],
      'inspect the image',
    )
  ).split('|');
  ok('image size', `${(Number(size) / 1e6).toFixed(0)} MB`);
  if (user !== 'node') fail('the image runs as user node', `Config.User is ${user}`);
  if (entrypoint !== '["node","/app/bin/keel.js"]') fail('entrypoint keel', String(entrypoint));
  ok('image config: USER node, ENTRYPOINT node /app/bin/keel.js');
  // Facts from inside the image, one per line as name=value.
  const probe = [
    'echo "uid=$(id -u) user=$(id -un)"',
    'echo "node=$(node --version)"',
    'echo "src=$(test -e /app/src && echo present || echo absent)"',
    "echo \"dist_ts=$(find /app/dist -name '*.ts' ! -name '*.d.ts' | wc -l)\"",
    'echo "dashboard=$(test -f /app/dist/web/index.html && echo present || echo absent)"',
    "echo \"dev_deps=$(for d in typescript vite @biomejs/biome; do test -e /app/node_modules/$d && echo $d; done | tr '\\n' ' ')\"",
    'echo "bwrap=$(command -v bwrap || echo absent)"',
  ].join('; ');
  const out = await podmanOk(
    ['run', '--rm', ...ULIMITS, '--entrypoint', 'sh', IMAGE, '-c', probe],
    'probe the image',
  );
  const facts = Object.fromEntries(
    out
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1).trim()]),
  );
  const expect = (name: string, good: boolean, what: string) => {
    if (!good) fail(what, `${name}=${facts[name]}\n${out}`);
    ok(what, `${name}=${facts[name]}`);
  };
  expect('uid', facts.uid === '1000 user=node', 'default user is node (uid 1000)');
  expect('node', facts.node?.startsWith('v24.') === true, 'Node 24');
  expect('src', facts.src === 'absent', 'no TypeScript sources shipped (/app/src)');
  expect('dist_ts', facts.dist_ts === '0', 'dist/ holds no .ts but declarations');
  expect('dashboard', facts.dashboard === 'present', 'the dashboard is built (dist/web)');
  expect('dev_deps', facts.dev_deps === '', 'no dev dependencies (npm prune --omit=dev)');
  expect('bwrap', facts.bwrap === '/usr/bin/bwrap', 'bubblewrap installed');
  await importEntryPoints();
}

/**
 * Imports every entry point package.json exports, inside the image, as an application would: each must load from
 * dist/ (Node strips no types under node_modules, so an import that reached TypeScript would fail here). An entry
 * point whose optional peer dependency is not installed is reported, not failed: the image ships none of them.
 */
const ENTRY_POINT_PROBE = `
import { readFileSync } from 'node:fs';
const pkg = JSON.parse(readFileSync('/app/package.json', 'utf8'));
const optional = Object.keys(pkg.peerDependenciesMeta ?? {});
for (const subpath of Object.keys(pkg.exports).filter((s) => s !== './package.json')) {
  const name = subpath === '.' ? pkg.name : pkg.name + subpath.slice(1);
  try {
    await import(name);
    console.log(JSON.stringify({ name, loaded: import.meta.resolve(name) }));
  } catch (error) {
    const peer = optional.find((p) => error.code === 'ERR_MODULE_NOT_FOUND' && error.message.includes("'" + p + "'"));
    console.log(JSON.stringify({ name, peer, error: peer === undefined ? String(error) : undefined }));
  }
}`;

async function importEntryPoints(): Promise<void> {
  const out = await podmanOk(
    ['run', '--rm', ...ULIMITS, '--workdir', '/app', '--entrypoint', 'node', IMAGE].concat([
      '--input-type=module',
      '--eval',
      ENTRY_POINT_PROBE,
    ]),
    'import the entry points',
  );
  for (const line of out.split('\n')) {
    const entry = JSON.parse(line) as {
      name: string;
      loaded?: string;
      peer?: string;
      error?: string;
    };
    if (entry.error !== undefined) fail(`import ${entry.name} in the image`, entry.error);
    if (entry.peer !== undefined)
      say(`  --  ${entry.name} not loaded: its optional peer ${entry.peer} is not in the image`);
    else if (!entry.loaded?.startsWith('file:///app/dist/'))
      fail(`${entry.name} loads from dist/`, line);
    else ok(`import ${entry.name}`, entry.loaded.slice('file://'.length));
  }
}

async function waitFor(url: string, name: string, timeoutMs: number): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const state = await podman(['inspect', name, '--format', '{{.State.Running}}']);
    if (state.stdout.trim() !== 'true') {
      const logs = await podman(['logs', name]);
      fail(`${url}: the container stopped`, logs.stdout + logs.stderr);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
      if (response.status === 200) return response;
      last = `HTTP ${response.status}: ${await response.text()}`;
    } catch (error) {
      last = String((error as Error).cause ?? error);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const logs = await podman(['logs', name]);
  return fail(`${url} within ${timeoutMs / 1000} s (last: ${last})`, logs.stdout + logs.stderr);
}

async function smokeDev(): Promise<void> {
  const name = `keel-smoke-dev-${process.pid}`;
  containers.add(name);
  const since = Date.now();
  await podmanOk(
    ['run', '--detach', '--name', name, ...ULIMITS, '--publish', '127.0.0.1::7070', IMAGE],
    'start keel dev',
  );
  const address = (await podmanOk(['port', name, '7070/tcp'], 'the published port')).split('\n')[0];
  const base = `http://${address}`;
  await waitFor(`${base}/healthz`, name, 120_000);
  ok('keel dev: /healthz 200', `${base}, ${elapsed(since)} after start`);
  await waitFor(`${base}/readyz`, name, 30_000);
  ok('keel dev: /readyz 200');
  const logs = await podman(['logs', name]);
  const key = /API key \(tenant "[^"]+"\): (\S+)/.exec(logs.stdout)?.[1];
  if (key === undefined) fail('keel dev prints an API key', logs.stdout + logs.stderr);
  ok('keel dev printed an API key');
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const submitted = await fetch(`${base}/v1/runs?wait=30000`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ agent: 'calculator', input: { prompt: 'What is 2 + 3?' } }),
  });
  const run = (await submitted.json()) as { id?: string; status?: string };
  if (submitted.status !== 201 && submitted.status !== 202)
    fail('POST /v1/runs', `HTTP ${submitted.status} ${JSON.stringify(run)}`);
  const result = await fetch(`${base}/v1/runs/${run.id}/result?waitMs=30000`, { headers });
  const ended = (await result.json()) as { status?: string; result?: unknown };
  // The example's scripted model calls the add tool (2 + 3), then answers with the sum.
  if (
    result.status !== 200 ||
    ended.status !== 'succeeded' ||
    !JSON.stringify(ended.result).includes('The sum is 5.')
  )
    fail('the run succeeds with the sum', `HTTP ${result.status} ${JSON.stringify(ended)}`);
  ok(
    'run over HTTP succeeded',
    `agent calculator, ${run.id}, result ${JSON.stringify(ended.result)}`,
  );
  const dashboard = await fetch(`${base}/`);
  const html = await dashboard.text();
  if (dashboard.status !== 200 || !html.includes('<html'))
    fail('GET / serves the dashboard', `HTTP ${dashboard.status}`);
  ok('dashboard served at /');
  const status = await podmanOk(['exec', name, 'cat', '/proc/1/status'], 'read the process status');
  const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
  if (uid !== '1000') fail('keel runs as node (uid 1000)', `PID 1 Uid: ${uid}`);
  ok('the keel process runs as uid 1000');
  await podmanOk(['stop', '--time', '30', name], 'stop keel dev');
  const exit = await podmanOk(
    ['inspect', name, '--format', '{{.State.ExitCode}}'],
    'the exit code',
  );
  if (exit !== '0')
    fail(
      'keel dev exits 0 on SIGTERM',
      `exit code ${exit}\n${(await podman(['logs', name])).stderr}`,
    );
  ok('keel dev stopped on SIGTERM with exit code 0');
  removeContainers();
}

/** `keel migrate` on a database of its own (created and dropped here), twice: migrations are idempotent. */
async function smokeMigrate(): Promise<void> {
  const adminUrl = process.env.KEEL_SMOKE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
  } catch (error) {
    if (process.env.KEEL_SMOKE_DATABASE_URL !== undefined)
      fail(`connect to ${adminUrl}`, String(error));
    say(
      `  --  keel migrate skipped: no PostgreSQL at ${adminUrl} (${(error as Error).message}); set KEEL_SMOKE_DATABASE_URL`,
    );
    return;
  }
  const database = `keel_image_smoke_${process.pid}_${Date.now()}`;
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  await admin.query(`CREATE DATABASE ${database}`);
  try {
    for (const attempt of ['first', 'second']) {
      const name = `keel-smoke-migrate-${process.pid}`;
      containers.add(name);
      const result = await podman([
        'run',
        '--rm',
        '--name',
        name,
        ...ULIMITS,
        '--network',
        'host',
        '--env',
        `KEEL_DATABASE_URL=${url.href}`,
        IMAGE,
        'migrate',
      ]);
      containers.delete(name);
      if (result.code !== 0)
        fail(
          `keel migrate (${attempt} run) exits 0`,
          `exit ${result.code}\n${result.stdout}${result.stderr}`,
        );
    }
    const client = new pg.Client({ connectionString: url.href });
    await client.connect();
    const tables = await client
      .query<{ n: string }>(
        `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`,
      )
      .finally(() => client.end());
    const count = Number(tables.rows[0]?.n);
    if (!(count > 0)) fail('keel migrate created tables', `${count} tables in ${database}`);
    ok(
      'keel migrate (--network host) on PostgreSQL, run twice',
      `${count} tables in a throwaway database`,
    );
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

async function main(): Promise<number> {
  const version = await podmanInstalled();
  if (version === undefined) {
    say('image smoke test skipped: podman is not installed (apt-get install -y podman runc)');
    return 0;
  }
  say(
    `image smoke test: ${version}, runtime ${RUNTIME ?? 'podman default'}, ${ULIMITS.filter((_, i) => i % 2 === 1).join(' ')}`,
  );
  const base = await baseImage();
  await buildImage(base);
  await inspectImage();
  await smokeDev();
  await smokeMigrate();
  say(`image smoke test passed in ${elapsed()}`);
  return 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    removeContainers();
    process.exit(130);
  });

try {
  process.exitCode = await main();
} catch (error) {
  say(
    `image smoke test FAILED after ${elapsed()}: ${error instanceof SmokeFailure ? error.message : (error as Error).stack}`,
  );
  process.exitCode = 1;
} finally {
  removeContainers();
}
