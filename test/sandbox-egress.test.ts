// The egress allowlist on the namespace and gVisor tiers, driven through the SandboxManager as the built-in
// tools drive it: a sandbox with only loopback reaches an allowed server on the host's loopback
// through the relay and Keel's proxy (plain HTTP and CONNECT), is refused a server it is not
// allowed, and each connection is reported with its run, execution, destination, verdict and
// bytes. The proxy adds the credential from the tenant's secret to plain-HTTP requests, and a
// rotation is in effect for the next request. A profile without an allowlist still has no network.
// A tenant's and a run's egress lists (read from the store per call) narrow the profile's: a
// destination the profile allows but the tenant's list does not is refused and audited, and a run
// narrowed to one server reaches only that one; neither can widen what the other allows.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { auditEgress } from '../src/sandbox/egress/egress-audit.ts';
import { egressNarrowingsFrom } from '../src/sandbox/egress/egress-narrowings.ts';
import { EgressProxy, type EgressRecord } from '../src/sandbox/egress/egress-proxy.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import { EnvKeyProvider } from '../src/secrets/key-provider.ts';
import { SecretVault } from '../src/secrets/secret-vault.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { newRun } from './store/conformance.ts';
import { sandboxRoot, skipUnless } from './support/sandbox.ts';

const TIERS = ['namespace', 'gvisor'] as const;

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

async function listen(seen: Seen[]): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    res.end(`hello from ${req.url}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const tier of TIERS)
  describe(`egress allowlist (${tier} tier)`, { skip: skipUnless(tier) }, () => {
    const allowedSeen: Seen[] = [];
    const deniedSeen: Seen[] = [];
    const records: EgressRecord[] = [];
    let allowed: { server: Server; port: number };
    let denied: { server: Server; port: number };
    let manager: SandboxManager;
    let store: SqliteStore;
    let vault: SecretVault;
    let tenantId: string;
    let cleanup: () => void;
    let dir: string;

    before(async () => {
      allowed = await listen(allowedSeen);
      denied = await listen(deniedSeen);
      dir = mkdtempSync(join(tmpdir(), 'keel-egress-'));
      store = new SqliteStore({ path: join(dir, 'keel.db') });
      await store.migrate();
      tenantId = (await store.createTenant('egress', 'hash-egress')).id;
      vault = new SecretVault(store, new EnvKeyProvider(randomBytes(32).toString('base64')));
      const sandbox = sandboxRoot();
      cleanup = sandbox.cleanup;
      manager = new SandboxManager({
        root: sandbox.root,
        artifacts: sandbox.artifacts,
        egress: new EgressProxy({
          onRecord: (record) => records.push(record),
          revealSecret: (tenant, ref) => vault.reveal(tenant, ref),
        }),
      });
    });

    after(async () => {
      await manager.close();
      await store.close();
      allowed.server.close();
      denied.server.close();
      cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    const curl = (args: string[]) => ['/usr/bin/curl', '-sS', '--max-time', '10', ...args];

    for (const policy of ['one-shot', 'resident'] as const) {
      test(`${policy}: allowed through the proxy with the credential injected, denied refused, both recorded`, async () => {
        const secret = `tok-${policy}-${randomBytes(6).toString('hex')}`;
        const name = `TOKEN_${policy.replace('-', '_').toUpperCase()}`;
        await vault.create(tenantId, name, secret);
        const profile = defineSandboxProfile({
          name: `egress-${tier}-${policy}`,
          tier,
          policy,
          network: {
            allow: [
              {
                host: '127.0.0.1',
                port: allowed.port,
                inject: {
                  header: 'authorization',
                  secret: `secret:${name}`,
                  format: 'Bearer {secret}',
                },
              },
            ],
          },
        });
        const runId = `run_egress_${tier}_${policy}`;
        records.length = 0;
        allowedSeen.length = 0;
        deniedSeen.length = 0;
        const exec = (argv: string[], executionId: string) =>
          manager.call(runId, profile, (env) => env.exec({ argv }), {
            tenantId,
            executionId,
            snapshot: false,
          });
        // Plain HTTP: the proxy adds the credential; the sandbox never had it.
        const plain = await exec(curl([`http://127.0.0.1:${allowed.port}/plain`]), 'exe_plain');
        assert.equal(plain.value.exitCode, 0, plain.value.stderr);
        assert.equal(plain.value.stdout, 'hello from /plain\n');
        assert.equal(allowedSeen.at(-1)?.headers.authorization, `Bearer ${secret}`);
        // CONNECT (what HTTPS uses): a tunnel to the allowed port.
        const tunnel = await exec(
          curl(['--proxytunnel', `http://127.0.0.1:${allowed.port}/tunnel`]),
          'exe_tunnel',
        );
        assert.equal(tunnel.value.exitCode, 0, tunnel.value.stderr);
        assert.equal(tunnel.value.stdout, 'hello from /tunnel\n');
        // A port not in the allowlist: refused by the proxy, never reached.
        const refused = await exec(
          curl(['-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${denied.port}/x`]),
          'exe_denied',
        );
        assert.equal(refused.value.stdout, '403');
        const refusedTunnel = await exec(
          curl(['--proxytunnel', `http://127.0.0.1:${denied.port}/y`]),
          'exe_denied_tunnel',
        );
        assert.notEqual(refusedTunnel.value.exitCode, 0);
        assert.equal(deniedSeen.length, 0);
        // Rotation: the next request carries the new value, with no restart of anything.
        const rotated = `${secret}-rotated`;
        await vault.rotate(tenantId, name, rotated);
        await exec(curl([`http://127.0.0.1:${allowed.port}/after-rotation`]), 'exe_rotated');
        assert.equal(allowedSeen.at(-1)?.headers.authorization, `Bearer ${rotated}`);
        await until(() => records.length >= 5, 'five egress records');
        const byExecution = Object.fromEntries(records.map((r) => [r.executionId, r]));
        assert.deepEqual(Object.keys(byExecution).sort(), [
          'exe_denied',
          'exe_denied_tunnel',
          'exe_plain',
          'exe_rotated',
          'exe_tunnel',
        ]);
        for (const record of records) {
          assert.equal(record.runId, runId);
          assert.equal(record.tenantId, tenantId);
          assert.ok(!JSON.stringify(record).includes(secret), 'no record holds the secret');
        }
        const plainRecord = byExecution.exe_plain!;
        assert.equal(plainRecord.verdict, 'allowed');
        assert.equal(plainRecord.kind, 'http');
        assert.equal(plainRecord.destination, `127.0.0.1:${allowed.port}`);
        assert.deepEqual(plainRecord.injected, [`secret:${name}`]);
        assert.ok(plainRecord.bytesReceived > 0);
        const tunnelRecord = byExecution.exe_tunnel!;
        assert.equal(tunnelRecord.verdict, 'allowed');
        assert.equal(tunnelRecord.kind, 'connect');
        assert.ok(tunnelRecord.bytesSent > 0 && tunnelRecord.bytesReceived > 0);
        assert.deepEqual(tunnelRecord.injected, [], 'no header can be added inside a tunnel');
        for (const id of ['exe_denied', 'exe_denied_tunnel']) {
          assert.equal(byExecution[id]!.verdict, 'denied');
          assert.equal(byExecution[id]!.destination, `127.0.0.1:${denied.port}`);
          assert.equal(byExecution[id]!.reason, 'not in the allowlist');
        }
        await manager.endRun(runId);
      });
    }

    test('a name may not resolve to a private address unless the rule names the address', async () => {
      const profile = defineSandboxProfile({
        name: `egress-${tier}-names`,
        tier,
        network: { allow: [{ host: 'localhost', port: allowed.port }] },
      });
      records.length = 0;
      const before = allowedSeen.length;
      const out = await manager.call(
        'run_egress_names',
        profile,
        (env) =>
          env.exec({
            argv: curl([
              '-o',
              '/dev/null',
              '-w',
              '%{http_code}',
              `http://localhost:${allowed.port}/`,
            ]),
          }),
        { tenantId, executionId: 'exe_name', snapshot: false },
      );
      assert.equal(out.value.stdout, '403');
      assert.equal(allowedSeen.length, before);
      await until(() => records.length >= 1, 'the record');
      assert.equal(records[0]!.verdict, 'denied');
      assert.match(records[0]!.reason ?? '', /non-public address/);
      await manager.endRun('run_egress_names');
    });

    test('without an allowlist there is no network, not even the relay', async () => {
      const profile = defineSandboxProfile({ name: 'egress-none', tier: 'namespace' });
      const out = await manager.call(
        'run_egress_none',
        profile,
        (env) =>
          env.exec({
            argv: [
              '/bin/sh',
              '-c',
              `curl -sS --max-time 5 --proxy http://127.0.0.1:3128 http://127.0.0.1:${allowed.port}/; echo "exit $?"; env | grep -ci proxy || true`,
            ],
          }),
        { tenantId, executionId: 'exe_none', snapshot: false },
      );
      assert.match(
        out.value.stdout,
        /exit 7/,
        'curl cannot connect: nothing listens, no route out',
      );
      assert.match(out.value.stdout, /^0$/m, 'no proxy variables');
      await manager.endRun('run_egress_none');
    });
  });

for (const tier of TIERS)
  describe(`egress lists of tenant and run (${tier} tier)`, { skip: skipUnless(tier) }, () => {
    const seenA: Seen[] = [];
    const seenB: Seen[] = [];
    let a: { server: Server; port: number };
    let b: { server: Server; port: number };
    let manager: SandboxManager;
    let store: SqliteStore;
    let cleanup: () => void;
    let dir: string;

    before(async () => {
      a = await listen(seenA);
      b = await listen(seenB);
      dir = mkdtempSync(join(tmpdir(), 'keel-egress-lists-'));
      store = new SqliteStore({ path: join(dir, 'keel.db') });
      await store.migrate();
      const sandbox = sandboxRoot();
      cleanup = sandbox.cleanup;
      manager = new SandboxManager({
        root: sandbox.root,
        artifacts: sandbox.artifacts,
        // As a node wires it: lists read from the store per call, each connection audited.
        egressNarrowings: egressNarrowingsFrom(store),
        egress: new EgressProxy({
          onRecord: (record) => void auditEgress(store, record),
          revealSecret: async () => {
            throw new Error('no secrets here');
          },
        }),
      });
    });

    after(async () => {
      await manager.close();
      await store.close();
      a.server.close();
      b.server.close();
      cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    /** One call of the run trying A then B; the HTTP status of each (403: refused by the proxy). */
    async function tryBoth(tenantId: string, runId: string, executionId: string) {
      const profile = defineSandboxProfile({
        name: `egress-lists-${tier}`,
        tier,
        network: {
          allow: [
            { host: '127.0.0.1', port: a.port },
            { host: '127.0.0.1', port: b.port },
          ],
        },
      });
      const code = (port: number) =>
        `curl -sS --max-time 10 -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:${port}/${runId}`;
      const out = await manager.call(
        runId,
        profile,
        (env) => env.exec({ argv: ['/bin/sh', '-c', `${code(a.port)}; ${code(b.port)}`] }),
        { tenantId, executionId, snapshot: false },
      );
      await manager.endRun(runId);
      const [toA, toB] = out.value.stdout.trim().split('\n');
      return { toA, toB };
    }

    async function egressAudit(tenantId: string, runId: string, count: number) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const entries = (
          await store.listAudit(tenantId, { action: 'egress.connection', limit: 100 })
        ).filter((entry) => entry.runId === runId);
        if (entries.length >= count) return entries;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} audit entries`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }

    test("a destination the profile allows but the tenant's list does not is refused and audited", async () => {
      const tenant = await store.createTenant(`lists-tenant-${tier}`, `hash-lt-${tier}`);
      // As PATCH /v1/admin/tenants/:id {egressAllow} does.
      await store.updateTenant(tenant.id, { egressAllow: [{ host: '127.0.0.1', port: a.port }] });
      const { run } = await store.createRun(newRun(tenant.id));
      const before = { a: seenA.length, b: seenB.length };
      assert.deepEqual(await tryBoth(tenant.id, run.id, 'exe_tenant'), { toA: '200', toB: '403' });
      assert.equal(seenA.length, before.a + 1);
      assert.equal(seenB.length, before.b, 'B never reached');
      const entries = await egressAudit(tenant.id, run.id, 2);
      const toB = entries.find((e) => e.resource === `egress:127.0.0.1:${b.port}`);
      const toA = entries.find((e) => e.resource === `egress:127.0.0.1:${a.port}`);
      assert.equal(toB?.outcome, 'denied');
      assert.equal((toB?.data as any)?.reason, "not in the tenant's allowlist");
      assert.equal((toB?.data as any)?.executionId, 'exe_tenant');
      assert.equal(toA?.outcome, 'allowed');
      // A run cannot widen the tenant's list: naming B itself, it still reaches nothing.
      const { run: widening } = await store.createRun({
        ...newRun(tenant.id),
        egressAllow: [{ host: '127.0.0.1', port: b.port }],
      });
      assert.deepEqual(await tryBoth(tenant.id, widening.id, 'exe_widen'), {
        toA: '403',
        toB: '403',
      });
      const reasons = (await egressAudit(tenant.id, widening.id, 2))
        .map((e) => `${e.resource} ${(e.data as any).reason}`)
        .sort();
      assert.deepEqual(
        reasons,
        [
          `egress:127.0.0.1:${a.port} not in the run's allowlist`,
          `egress:127.0.0.1:${b.port} not in the tenant's allowlist`,
        ].sort(),
      );
      assert.equal(seenB.length, before.b, 'B never reached');
    });

    test('a run narrowed to one server reaches only that one; another run of the tenant both', async () => {
      const tenant = await store.createTenant(`lists-run-${tier}`, `hash-lr-${tier}`);
      const { run } = await store.createRun({
        ...newRun(tenant.id),
        egressAllow: [{ host: '127.0.0.1', port: b.port }],
      });
      const before = { a: seenA.length, b: seenB.length };
      assert.deepEqual(await tryBoth(tenant.id, run.id, 'exe_run'), { toA: '403', toB: '200' });
      assert.equal(seenA.length, before.a, 'A never reached');
      assert.equal(seenB.length, before.b + 1);
      const entries = await egressAudit(tenant.id, run.id, 2);
      const toA = entries.find((e) => e.resource === `egress:127.0.0.1:${a.port}`);
      assert.equal(toA?.outcome, 'denied');
      assert.equal((toA?.data as any)?.reason, "not in the run's allowlist");
      const { run: open } = await store.createRun(newRun(tenant.id));
      assert.deepEqual(await tryBoth(tenant.id, open.id, 'exe_open'), { toA: '200', toB: '200' });
    });
  });
