// The examples as a user runs them: `keel dev` from the built package (bin/keel.js → dist/) over
// examples/agents.ts, which imports `keel` and `keel/sandbox` by name, with a non-default `--data`
// and a working directory of its own. The sandboxed `scripter` agent must succeed with its
// workspace and artifacts under that data directory (nothing under the default ./.keel), and its
// environment's memory-time must reach keel_sandbox_environment_gib_seconds_total for the run's
// tenant.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from './support/keel-process.ts';
import { skipUnless } from './support/sandbox.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/keel.js');
const AGENTS = join(ROOT, 'examples/agents.ts');
const API_KEY = 'examples-dev-key-0123456789';
const ADMIN_KEY = 'examples-admin-key-0123456789';
const DEADLINE_MS = 60_000;
const POLL_MS = 50;
const built =
  existsSync(join(ROOT, 'dist/cli/main.js')) && existsSync(join(ROOT, 'dist/sandbox/index.js'));
const skip =
  skipUnless('namespace') ??
  (built || process.env.CI === 'true' ? undefined : 'dist/ is not built (npm run build)');

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  detail: () => string,
): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * The counter's value for `tenant` in a Prometheus text exposition, or undefined when it has no
 * sample.
 */
function gibSecondsOf(exposition: string, tenant: string): number | undefined {
  const line = exposition
    .split('\n')
    .find((l) => l.startsWith(`keel_sandbox_environment_gib_seconds_total{tenant="${tenant}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

test('examples: keel dev (dist) runs the sandboxed example agent under --data and counts its GiB·s per tenant', {
  skip,
  timeout: 120_000,
}, async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-examples-'));
  chmodSync(base, 0o711); // sandbox uids must traverse to their workspace
  const dataDir = join(base, 'elsewhere', 'data');
  const [port, metricsPort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [BIN, 'dev', '--agents', AGENTS, '--data', dataDir, '--port', String(port)],
    {
      cwd: base,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        KEEL_API_KEY: API_KEY,
        KEEL_ADMIN_KEY: ADMIN_KEY,
        KEEL_METRICS_PORT: String(metricsPort),
        KEEL_LOG_LEVEL: 'warn',
      },
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(base, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  await until(
    'keel dev to listen',
    async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined),
    () => output,
  );

  const created = await api('POST', '/v1/runs', {
    agent: 'scripter',
    input: { script: 'echo "built in $(pwd)"' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id: string = created.body.id;
  const run = await until(
    'the run to end',
    async () => {
      const current = (await api('GET', `/v1/runs/${id}`)).body;
      return current.endedAt === null ? undefined : current;
    },
    () => output,
  );
  assert.equal(run.status, 'succeeded', `${JSON.stringify(run.error)}\n${output}`);
  assert.deepEqual(run.result, { stdout: 'built in /workspace\n', exitCode: 0, limit: null });

  // Everything under --data: the run's workspace manifest in its SQLite file, sandboxes beside it;
  // no ./.keel.
  assert.equal(existsSync(join(base, '.keel')), false, 'nothing under the default data directory');
  assert.ok(existsSync(join(dataDir, 'sandboxes')), 'sandboxes under --data');
  const db = new DatabaseSync(join(dataDir, 'keel.db'), { readOnly: true });
  try {
    assert.deepEqual(
      (db.prepare('SELECT name FROM artifact_refs').all() as Array<{ name: string }>).map(
        (r) => r.name,
      ),
      [`run/${id}/workspace`],
    );
  } finally {
    db.close();
  }

  // The environment's memory-time, counted for the run's tenant (and no other).
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const gibSeconds = gibSecondsOf(metrics, run.tenantId);
  assert.ok(
    gibSeconds !== undefined && gibSeconds > 0,
    `keel_sandbox_environment_gib_seconds_total{tenant="${run.tenantId}"} grew: ${gibSeconds}\n${metrics
      .split('\n')
      .filter((l) => l.includes('gib_seconds'))
      .join('\n')}`,
  );
  assert.equal(
    metrics.split('\n').filter((l) => l.startsWith('keel_sandbox_environment_gib_seconds_total{'))
      .length,
    1,
    'one tenant used a sandbox',
  );
  // Its start and its teardown reach the lifecycle metrics of the process.
  const started = metrics
    .split('\n')
    .find((l) => l.startsWith('keel_sandbox_starts_total{tier="namespace",start="cold"} '));
  assert.ok(
    started !== undefined && Number(started.split(' ')[1]) >= 1,
    `a cold start: ${started}`,
  );
  assert.ok(
    metrics.includes('keel_sandbox_environments{state="busy"} 0'),
    'no environment busy after the run',
  );
});
