// The canary test of secrets and egress, run the way an agent meets them: a real `keel dev` with a
// key-encryption key; two secrets with unique values created over the API; an agent's sandboxed
// `exec` (namespace tier) calls an allowed server on loopback through Keel's egress proxy — one
// secret added as a header by the proxy, the other declared as a variable and sent by the program
// itself (read from stdin by curl, never on a command line) — and a denied server; a third secret is
// declared as a file, which the program finds at /run/secrets/canary (its hash and mode are all the
// run reports, so the value itself is never in a result) and which no workspace snapshot holds. Then every
// table and file of the data directory, every log line, every API response of the run and
// every host command line seen while it ran are searched: each canary is found only in the request
// the allowed server received (the file's canary nowhere at all: it lived only inside the sandbox). The audit log and /metrics carry the allowed and the denied
// connection; a rotation over the API is in effect for the next run, with no restart; a start with
// stored secrets but no key is refused.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sweepStaleSandboxes } from '../src/sandbox/stale-sweep.ts';
import { freePort, startKeelProcess, type KeelProcess } from './support/keel-process.ts';
import { skipUnless } from './support/sandbox.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/egress-agents.ts', import.meta.url));
const KEY = 'egress-canary-test-key-0123456789';
const ADMIN = 'egress-canary-admin-key-0123456789';
const RUN_DEADLINE_MS = 120_000;

let base = '';
let dataDir = '';
let keel: KeelProcess;
const received: string[] = [];
let allowed: Server;
let denied: Server;
let allowedPort = 0;
let deniedPort = 0;
const responses: string[] = [];
const cmdlineHits: string[] = [];
/** The scan saw the sandboxed curl itself (its URL), so it did look while the secrets were in use. */
let sawSandboxedCommand = false;
/** The allowed server answers this late, so the sandboxed command is alive for the scans. */
const ANSWER_DELAY_MS = 500;
const secretsKey = randomBytes(32).toString('base64');
const canaryHeader = `canary-hdr-${randomBytes(12).toString('hex')}`;
const canaryEnv = `canary-env-${randomBytes(12).toString('hex')}`;
const canaryFile = `canary-file-${randomBytes(12).toString('hex')}`;

async function api(method: string, path: string, body?: unknown, key = KEY) {
  const res = await fetch(keel.url + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  responses.push(text);
  return { status: res.status, text, body: text.startsWith('{') ? JSON.parse(text) : text };
}

function scanCmdlines(): void {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      for (const canary of [canaryHeader, canaryEnv, canaryFile])
        if (cmdline.includes(canary)) cmdlineHits.push(`${pid}: ${cmdline}`);
      if (cmdline.includes('/canary-path')) sawSandboxedCommand = true;
    } catch {
      // exited while we looked
    }
  }
}

async function runToEnd(argv: string[]): Promise<any> {
  const submitted = await api('POST', '/v1/runs', { agent: 'egress-exec', input: { argv } });
  assert.equal(submitted.status, 201, submitted.text);
  const id = submitted.body.id as string;
  const deadline = Date.now() + RUN_DEADLINE_MS;
  for (;;) {
    scanCmdlines();
    const run = await api('GET', `/v1/runs/${id}`);
    if (['succeeded', 'failed', 'cancelled'].includes(run.body.status)) {
      assert.equal(run.body.status, 'succeeded', `${run.text}\n${keel.output()}`);
      await api('GET', `/v1/runs/${id}/steps`);
      await api('GET', `/v1/runs/${id}/events`);
      return { id, result: run.body.result };
    }
    if (Date.now() > deadline) throw new Error(`run ${id} stuck: ${run.text}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Each request the allowed server received, as raw head text (request line + headers). */
function rawHead(req: import('node:http').IncomingMessage): string {
  const lines = [`${req.method} ${req.url}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  return lines.join('\n');
}

/** Every file under `dir`, as bytes, for a plain search. */
function filesUnder(dir: string): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, name);
    try {
      if (statSync(path).isFile()) out.push({ path, bytes: readFileSync(path) });
    } catch {
      // a socket, or gone meanwhile
    }
  }
  return out;
}

const skip = skipUnless('namespace');

describe('secrets and egress: the canary appears only where it is injected', { skip }, () => {
  before(async () => {
    allowed = createServer((req, res) => {
      received.push(rawHead(req));
      setTimeout(() => res.end('allowed-ok\n'), ANSWER_DELAY_MS);
    });
    denied = createServer((req, res) => {
      received.push(`DENIED SERVER ${rawHead(req)}`);
      res.end('should-not-happen\n');
    });
    await new Promise<void>((r) => allowed.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => denied.listen(0, '127.0.0.1', r));
    allowedPort = (allowed.address() as AddressInfo).port;
    deniedPort = (denied.address() as AddressInfo).port;
    base = mkdtempSync(join(tmpdir(), 'keel-egress-canary-'));
    chmodSync(base, 0o711);
    dataDir = join(base, 'data');
    keel = await startKeelProcess({
      agents: AGENTS,
      dataDir,
      apiKey: KEY,
      env: {
        KEEL_SECRETS_KEY: secretsKey,
        KEEL_ADMIN_KEY: ADMIN,
        KEEL_LOG_LEVEL: 'debug',
        EGRESS_TEST_ALLOWED_PORT: String(allowedPort),
      },
    });
  });

  after(async () => {
    await keel?.kill('SIGTERM');
    allowed?.close();
    denied?.close();
    if (dataDir !== '') await sweepStaleSandboxes(join(dataDir, 'sandboxes'));
    if (base !== '') rmSync(base, { recursive: true, force: true });
  });

  test('secrets over the API: created, listed without values, write-only', async () => {
    for (const [name, value] of [
      ['CANARY_HEADER', canaryHeader],
      ['CANARY_ENV', canaryEnv],
      ['CANARY_FILE', canaryFile],
    ]) {
      const created = await api('POST', '/v1/secrets', { name, value });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.secret.version, 1);
    }
    const again = await api('POST', '/v1/secrets', { name: 'CANARY_ENV', value: 'x' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'secret_exists');
    const listed = await api('GET', '/v1/secrets');
    assert.deepEqual(
      listed.body.secrets.map((s: { name: string; version: number }) => [s.name, s.version]),
      [
        ['CANARY_ENV', 1],
        ['CANARY_FILE', 1],
        ['CANARY_HEADER', 1],
      ],
    );
  });

  test('allowed with both secrets delivered, denied refused; audited and counted', async () => {
    // The program sends the declared variable itself: printf is the shell's own (no process), and
    // curl reads the header from stdin, so the value is never in anyone's argv.
    const allowedRun = await runToEnd([
      '/bin/sh',
      '-c',
      `printf 'x-env-token: %s\\n' "$CANARY_ENV" | curl -sS --max-time 10 -H @- http://127.0.0.1:${allowedPort}/canary-path`,
    ]);
    assert.deepEqual(
      [allowedRun.result.ok, allowedRun.result.exitCode, allowedRun.result.stdout],
      [true, 0, 'allowed-ok\n'],
      JSON.stringify(allowedRun.result),
    );
    const deniedRun = await runToEnd([
      '/usr/bin/curl',
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      `http://127.0.0.1:${deniedPort}/nope`,
    ]);
    assert.equal(deniedRun.result.stdout, '403');
    assert.equal(received.length, 1, received.join('\n---\n'));
    assert.match(received[0]!, new RegExp(`authorization: Bearer ${canaryHeader}`, 'i'));
    assert.match(received[0]!, new RegExp(`x-env-token: ${canaryEnv}`, 'i'));
    // Audit: one record per connection, with run, execution, destination, verdict and bytes.
    const audit = await api('GET', '/v1/audit?action=egress.connection', undefined);
    const entries = audit.body.entries as any[];
    const of = (runId: string) => entries.find((e) => e.runId === runId);
    const ok = of(allowedRun.id);
    const refused = of(deniedRun.id);
    assert.ok(ok && refused, audit.text);
    assert.equal(ok.outcome, 'allowed');
    assert.equal(ok.resource, `egress:127.0.0.1:${allowedPort}`);
    assert.match(ok.data.executionId, /\S/);
    assert.ok(ok.data.bytesSent > 0 && ok.data.bytesReceived > 0);
    assert.deepEqual(ok.data.injected, ['secret:CANARY_HEADER']);
    assert.equal(refused.outcome, 'denied');
    assert.equal(refused.resource, `egress:127.0.0.1:${deniedPort}`);
    assert.equal(refused.data.reason, 'not in the allowlist');
    // Each use of a secret is audited with its run, execution and way in (never the value).
    const uses = (await api('GET', '/v1/audit?action=secret.use')).body.entries as any[];
    const used = uses
      .filter((e) => e.runId === allowedRun.id)
      .map((e) => `${e.resource} ${e.data.via}`)
      .sort();
    assert.deepEqual(used, [
      'secret:CANARY_ENV env',
      'secret:CANARY_FILE file',
      'secret:CANARY_HEADER header',
    ]);
    assert.ok(uses.every((e) => typeof e.data.executionId === 'string'));
    const metrics = await fetch(`${keel.url}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const text = await metrics.text();
    assert.match(text, /keel_egress_connections_total\{tenant="[^"]+",verdict="allowed"\} 1/);
    assert.match(text, /keel_egress_connections_total\{tenant="[^"]+",verdict="denied"\} 1/);
    assert.match(text, /keel_egress_bytes_total\{tenant="[^"]+",direction="received"\} [1-9]/);
  });

  test('the file secret is in the sandbox only: read there (by hash), 0400, not in the workspace snapshot', async () => {
    const perl =
      'for (@ARGV) { my @s = stat($_) or die "$_: $!\\n"; printf "%o %d\\n", $s[2] & 07777, $s[4] }';
    const looked = await runToEnd([
      '/bin/sh',
      '-c',
      // The program reads the file (`exec cat`); only its hash leaves the sandbox in the result.
      `cat /run/secrets/canary | sha256sum; id -u; perl -e '${perl}' /run/secrets/canary; echo kept > kept.txt`,
    ]);
    assert.equal(looked.result.exitCode, 0, JSON.stringify(looked.result));
    const [hash, uid, stat] = String(looked.result.stdout).split('\n');
    assert.equal(hash, `${createHash('sha256').update(canaryFile).digest('hex')}  -`);
    assert.equal(stat, `400 ${uid}`);
    // The call wrote the workspace, so a snapshot was committed with it: the last test searches
    // every table (the artifacts, manifests and blobs included) and file for the value.
    assert.match(String(looked.result.manifest), /^[0-9a-f]{64}$/);
  });

  test('rotation over the API is in effect for the next run, without a restart', async () => {
    const rotatedValue = `${canaryHeader}-r2`;
    const rotated = await api('POST', '/v1/secrets/CANARY_HEADER/rotate', { value: rotatedValue });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body.secret.version, 2);
    await runToEnd([
      '/usr/bin/curl',
      '-sS',
      '--max-time',
      '10',
      `http://127.0.0.1:${allowedPort}/rotated`,
    ]);
    assert.match(received.at(-1)!, new RegExp(`authorization: Bearer ${rotatedValue}`, 'i'));
  });

  test('each canary is nowhere else: store tables and files, logs, API responses, command lines', async () => {
    await api('GET', '/v1/audit');
    await api('GET', '/v1/secrets');
    const canaries = [canaryHeader, canaryEnv, canaryFile];
    // Every table of the store, row by row.
    const db = new DatabaseSync(join(dataDir, 'keel.db'), { readOnly: true });
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((row) => String(row.name));
      assert.ok(tables.includes('secrets') && tables.includes('audit'));
      for (const table of tables) {
        const rows = JSON.stringify(db.prepare(`SELECT * FROM "${table}"`).all(), (_k, v) =>
          v instanceof Uint8Array
            ? Buffer.from(v).toString('latin1')
            : typeof v === 'bigint'
              ? String(v)
              : v,
        );
        for (const canary of canaries)
          assert.ok(!rows.includes(canary), `${canary} in table ${table}`);
      }
      assert.equal(Number(db.prepare('SELECT count(*) AS n FROM secrets').get()!.n), 3);
    } finally {
      db.close();
    }
    // Every file of the data directory (the store, its WAL, workspaces and artifacts), as bytes.
    for (const file of filesUnder(dataDir))
      for (const canary of canaries)
        assert.ok(!file.bytes.includes(canary), `${canary} in ${file.path}`);
    for (const canary of canaries) {
      assert.ok(!keel.output().includes(canary), `${canary} in Keel's output (debug logs)`);
      // The POSTs that created the secrets carried them in; no response carries one out.
      assert.ok(!responses.some((body) => body.includes(canary)), `${canary} in an API response`);
    }
    assert.ok(sawSandboxedCommand, 'the scans saw the sandboxed command while it ran');
    assert.deepEqual(cmdlineHits, [], 'no host command line held a canary');
    // The one place each canary went: the request the allowed server received.
    assert.ok(received.some((r) => r.includes(canaryHeader)));
    assert.ok(received.some((r) => r.includes(canaryEnv)));
    // The file's canary never left the sandbox.
    assert.ok(!received.some((r) => r.includes(canaryFile)));
  });

  test('a start with stored secrets but no key is refused, saying how to fix it', async () => {
    await keel.kill('SIGTERM');
    const { spawnSync } = await import('node:child_process');
    const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KEEL_API_KEY: KEY,
      EGRESS_TEST_ALLOWED_PORT: String(allowedPort),
    };
    delete env.KEEL_SECRETS_KEY;
    const started = spawnSync(
      process.execPath,
      [main, 'dev', '--agents', AGENTS, '--port', String(await freePort()), '--data', dataDir],
      { env, encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(started.status, 2, started.stderr + started.stdout);
    assert.match(started.stderr, /KEEL_SECRETS_KEY is not set/);
    assert.ok(!started.stderr.includes(canaryHeader));
  });
});
