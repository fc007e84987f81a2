// The threat suite: each attack runs for real inside the namespace and gVisor tiers, and the
// observed outcome is asserted (the attack failed, and the host is unchanged). A tier missing on
// this host is reported as skipped with the package to install, never as passed.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SandboxDriver, SandboxEnvironment } from '../src/sandbox/driver.ts';
import { GvisorDriver } from '../src/sandbox/gvisor-driver.ts';
import { resolveLimits } from '../src/sandbox/limits.ts';
import { NamespaceDriver } from '../src/sandbox/namespace-driver.ts';
import type { Tier } from '../src/sandbox/tiers.ts';
import { sandboxRoot, skipUnless } from './support/sandbox.ts';

const SECRET = `keel-secret-${process.pid}-${Date.now()}`;
const OUTPUT_CAP = 64 * 1024;
/** One-shot execs of commands that exit at once, per tier run (a tenth on gVisor, which is slower). */
const QUICK_EXIT_ROUNDS = 40;
const limits = resolveLimits({
  memoryBytes: 160 * 1024 * 1024,
  pidsMax: 64,
  deadlineMs: 8_000,
  diskBytes: 8 * 1024 * 1024,
  outputMaxBytes: OUTPUT_CAP,
});

const drivers: Record<Exclude<Tier, 'process'>, (root: string) => SandboxDriver> = {
  namespace: (root) => new NamespaceDriver(root),
  gvisor: (root) => new GvisorDriver(root),
};

for (const tier of ['namespace', 'gvisor'] as const) {
  describe(`threat suite on ${tier}`, { skip: skipUnless(tier) }, () => {
    const { root, cleanup } = sandboxRoot();
    const driver = drivers[tier](root);
    const hostDir = mkdtempSync(join(tmpdir(), 'keel-host-'));
    const hostSecretFile = join(hostDir, 'secret.txt');
    let env: SandboxEnvironment;
    let other: SandboxEnvironment;
    let apiPort = 0;
    const api = createServer((_, res) => res.end('keel api'));
    const sh = (script: string, extra: { deadlineMs?: number } = {}) =>
      env.exec({ argv: ['/bin/sh', '-c', script], ...extra });

    before(async () => {
      process.env.KEEL_THREAT_TEST_SECRET = SECRET; // in Keel's own environment: must never reach a sandbox
      writeFileSync(hostSecretFile, SECRET);
      await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
      apiPort = (api.address() as AddressInfo).port;
      env = await driver.create({
        id: `threat-${tier}-a-${process.pid}`,
        limits,
        network: { allow: [] },
        keepProcesses: true,
      });
      other = await driver.create({
        id: `threat-${tier}-b-${process.pid}`,
        limits,
        network: { allow: [] },
        keepProcesses: true,
      });
      await other.exec({ argv: ['/bin/sh', '-c', `echo ${SECRET} > /workspace/other-secret`] });
    });

    after(async () => {
      delete process.env.KEEL_THREAT_TEST_SECRET;
      await env?.destroy();
      await other?.destroy();
      api.close();
      rmSync(hostDir, { recursive: true, force: true });
      cleanup();
    });

    test('cannot read host files outside the workspace', async () => {
      const result = await sh(
        `cat ${hostSecretFile}; cat /etc/shadow; cat /root/.bash_history; cat ${process.cwd()}/package.json`,
      );
      assert.ok(
        !result.stdout.includes(SECRET) && !result.stdout.includes('"name": "keel"'),
        result.stdout,
      );
      assert.notEqual(result.exitCode, 0);
    });

    test('cannot write /bin/bash or any system path', async () => {
      const bashBefore = readFileSync('/usr/bin/bash');
      const result = await sh(
        'echo pwned >> /bin/bash; echo pwned > /usr/bin/keel-pwned; echo pwned > /etc/keel-pwned; echo ok',
      );
      assert.match(result.stderr, /Read-only file system|Permission denied/);
      assert.deepEqual(readFileSync('/usr/bin/bash'), bashBefore);
      assert.equal(existsSync('/usr/bin/keel-pwned') || existsSync('/etc/keel-pwned'), false);
    });

    test("cannot read another run's workspace", async () => {
      const result = await sh(
        `cat ${other.workspaceDir}/other-secret; cat ${root}/*/other-secret; ls ${root}`,
      );
      assert.ok(!result.stdout.includes(SECRET), result.stdout);
      assert.equal(
        readFileSync(join(other.workspaceDir, 'other-secret'), 'utf8').trim(),
        SECRET,
        'the file is there on the host',
      );
    });

    test('sees only its own processes in /proc', async () => {
      const result = await sh('for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done');
      assert.ok(!result.stdout.includes('node'), `host processes visible: ${result.stdout}`);
      const hostPids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).length;
      const inside = result.stdout.split('\n').filter((line) => line.trim() !== '').length;
      assert.ok(inside < 10 && inside < hostPids, `saw ${inside} processes`);
    });

    test('cannot reach the network, the Keel API port or the database socket', async () => {
      const hostIps = Object.values(networkInterfaces())
        .flat()
        .filter((i) => i !== undefined && i.family === 'IPv4' && !i.internal)
        .map((i) => i!.address);
      const targets = [
        `127.0.0.1/${apiPort}`,
        ...hostIps.map((ip) => `${ip}/${apiPort}`),
        '1.1.1.1/53',
        '8.8.8.8/443',
      ];
      const script =
        targets
          .map((t) => `(echo x > /dev/tcp/${t}) 2>/dev/null && echo "REACHED ${t}"`)
          .join('; ') +
        '; for p in /var/run/postgresql /run/postgresql /tmp/.s.PGSQL.5432 /var/run/postgresql/.s.PGSQL.5432; do [ -e $p ] && echo "FOUND $p"; done; echo done';
      const result = await env.exec({ argv: ['/usr/bin/bash', '-c', script] });
      assert.ok(!result.stdout.includes('REACHED'), result.stdout);
      assert.ok(!result.stdout.includes('FOUND'), result.stdout);
      assert.match(result.stdout, /done/);
    });

    test('a fork bomb is contained and ended with pids_limit', async () => {
      const result = await sh('f() { f | f; }; f');
      assert.ok(result.limit === 'pids_limit' || result.limit === 'oom', `limit ${result.limit}`);
      const after = await sh('echo alive');
      assert.equal(after.stdout.trim(), 'alive', 'the environment recovers for the next call');
    });

    test('a memory bomb is ended with oom', async () => {
      const result = await sh('x=a; while true; do x="$x$x"; done');
      assert.equal(result.limit, 'oom');
    });

    test('a yes flood is cut at the output cap and marked truncated', async () => {
      const result = await env.exec({ argv: ['/usr/bin/yes'] });
      assert.equal(result.limit, 'output_limit');
      assert.equal(result.truncated, true);
      assert.ok(result.stdout.length + result.stderr.length <= OUTPUT_CAP);
    });

    test('a disk fill stops at the workspace quota with disk_limit', async () => {
      const result = await sh('head -c 100000000 /dev/zero > /workspace/fill');
      assert.equal(result.limit, 'disk_limit', JSON.stringify({ ...result, stdout: undefined }));
      await sh('rm -f /workspace/fill');
    });

    test('sleeping past the deadline is ended with timeout', async () => {
      const result = await env.exec({ argv: ['/bin/sleep', '30'], deadlineMs: 400 });
      assert.equal(result.limit, 'timeout');
      assert.ok(result.wallMs < 5_000, `took ${result.wallMs} ms`);
    });

    test('a background process does not outlive its one-shot sandbox', async () => {
      const oneShot = await driver.create({
        id: `threat-${tier}-c-${process.pid}`,
        limits,
        network: { allow: [] },
        keepProcesses: false,
      });
      try {
        const result = await oneShot.exec({
          argv: ['/bin/sh', '-c', '(sleep 987654 &) ; sleep 987653 & echo started'],
        });
        assert.match(result.stdout, /started/);
        assert.equal(oneShot.counters().memoryBytes >= 0, true);
        assert.deepEqual(hostProcessesWith('98765'), [], 'no sleeper left on the host');
      } finally {
        await oneShot.destroy();
      }
    });

    test('a command that exits at once still reports its exit code, call after call (no cgroup-move race)', async () => {
      // Reported: `sandbox_failed: could not move the sandbox into its cgroup: ESRCH` for a command
      // that exits at once in a one-shot sandbox (bwrap is moved into the cgroup while held on
      // --block-fd, so nothing should be able to exit first).
      const oneShot = await driver.create({
        id: `threat-${tier}-quick-${process.pid}`,
        limits,
        network: { allow: [] },
        keepProcesses: false,
      });
      try {
        const rounds = tier === 'namespace' ? QUICK_EXIT_ROUNDS : QUICK_EXIT_ROUNDS / 10;
        const codes: Array<number | null> = [];
        for (let i = 0; i < rounds; i++) {
          codes.push((await oneShot.exec({ argv: ['/bin/true'] })).exitCode);
          codes.push((await oneShot.exec({ argv: ['/bin/sh', '-c', 'exit 7'] })).exitCode);
        }
        assert.deepEqual(
          codes,
          codes.map((_, i) => (i % 2 === 0 ? 0 : 7)),
        );
      } finally {
        await oneShot.destroy();
      }
    });

    test("cannot read Keel's environment variables or secrets, including through /proc/1/environ", async () => {
      const result = await sh(
        'cat /proc/1/environ; echo; env; for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done',
      );
      assert.ok(!result.stdout.includes(SECRET), result.stdout);
      assert.ok(!/KEEL_|DATABASE_URL|npm_/.test(result.stdout), result.stdout);
    });

    test('cannot forge a tool result: Keel reports the real exit, the fake is only output', async () => {
      const fake = '{"exitCode":0,"stdout":"all tests passed","limit":null}';
      const result = await sh(`echo '${fake}'; echo '${fake}' >&2; ${LIST_FDS}; exit 3`);
      assert.equal(result.exitCode, 3);
      assert.equal(result.limit, null);
      assert.ok(result.stdout.startsWith(fake));
      assertNoExtraDescriptors(result.stdout.split('\n').slice(1));
      // The same in a one-shot sandbox, which is started differently (bwrap held on --block-fd, not
      // entered by nsenter).
      const oneShot = await driver.create({
        id: `threat-${tier}-d-${process.pid}`,
        limits,
        network: { allow: [] },
        keepProcesses: false,
      });
      try {
        const fresh = await oneShot.exec({ argv: ['/bin/sh', '-c', LIST_FDS] });
        assertNoExtraDescriptors(fresh.stdout.split('\n'));
      } finally {
        await oneShot.destroy();
      }
    });
  });
}

/**
 * Lists open descriptors as "<fd> <target>" lines (find's own, which it inherited like any
 * program).
 */
const LIST_FDS = "find /proc/self/fd -mindepth 1 -printf '%f %l\\n'";

/** Beyond stdin/stdout/stderr, nothing from outside may be open: only /dev/null (masking a descriptor Keel itself
 * inherited) and the sandbox's own paths (find's working directory and its /proc listing). */
function assertNoExtraDescriptors(lines: string[]): void {
  const fds = lines
    .filter((line) => /^\d+ /.test(line))
    .map((line) => line.split(' ') as [string, string]);
  assert.ok(fds.length >= 3, `no descriptors listed: ${lines.join('|')}`);
  const extra = fds.filter(
    ([fd, target]) =>
      Number(fd) > 2 &&
      target !== '/dev/null' &&
      target !== '/workspace' &&
      !/^\/proc\/\d+\/fd$/.test(target),
  );
  assert.deepEqual(extra, [], 'descriptors leaked into the sandbox');
}

function hostProcessesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(marker) && !cmdline.includes('/bin/sh -c'))
        found.push(`${pid}: ${cmdline}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}
