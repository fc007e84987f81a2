// The threat suite for launching commands, run the way an agent meets it: a real `keel dev` with
// agents calling the built-in `exec` over HTTP, on every tier this host has (a missing tier is a
// skip with its fix, never a pass). It checks that a command's secret variables never appear on
// any host command line, that huge arguments are refused before they are journaled, that NUL bytes
// are refused alike on every tier, that the data directory is private (a process-tier command cannot
// read keel.db), that commands entered into a kept namespace sandbox run with no_new_privs and
// an empty bounding set, and that the namespace tier's seccomp filter refuses what it lists.
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ExecCommand } from '../src/sandbox/driver.ts';
import { GvisorDriver } from '../src/sandbox/gvisor-driver.ts';
import { resolveLimits } from '../src/sandbox/limits.ts';
import { NamespaceDriver } from '../src/sandbox/namespace-driver.ts';
import { ProcessDriver } from '../src/sandbox/process-driver.ts';
import { sweepStaleSandboxes } from '../src/sandbox/stale-sweep.ts';
import { startKeelProcess, type KeelProcess } from './support/keel-process.ts';
import { sandboxRoot, skipUnless } from './support/sandbox.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/exec-threat-agents.ts', import.meta.url));
const KEY = 'exec-threats-test-key-0123456789';
const TIERS = ['process', 'namespace', 'gvisor'] as const;
const POLICIES = ['one-shot', 'resident'] as const;
const RUN_DEADLINE_MS = 120_000;
/** keyctl, io_uring_setup and getpid, for the seccomp probe. */
const SYSCALLS = (
  {
    x64: { keyctl: 250, ioUringSetup: 425, getpid: 39 },
    arm64: { keyctl: 219, ioUringSetup: 425, getpid: 172 },
  } as Partial<Record<string, { keyctl: number; ioUringSetup: number; getpid: number }>>
)[process.arch];
/** How often the host's command lines are read while a command runs. */
const SCAN_EVERY_MS = 5;

let base = '';
let dataDir = '';
let keel: KeelProcess;

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(keel.url + path, {
    method,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function submit(agent: string, input: object): Promise<string> {
  const submitted = await api('POST', '/v1/runs', { agent, input });
  assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
  return submitted.body.id;
}

async function finished(id: string, whileWaiting: () => void = () => {}): Promise<any> {
  const deadline = Date.now() + RUN_DEADLINE_MS;
  for (;;) {
    const run = (await api('GET', `/v1/runs/${id}`)).body;
    if (['succeeded', 'failed', 'cancelled'].includes(run.status)) {
      assert.equal(run.status, 'succeeded', `${JSON.stringify(run)}\n${keel.output()}`);
      return run.result;
    }
    if (Date.now() > deadline) throw new Error(`run ${id} stuck: ${JSON.stringify(run)}`);
    whileWaiting();
    await new Promise((r) => setTimeout(r, SCAN_EVERY_MS));
  }
}

const run = async (agent: string, input: object) => finished(await submit(agent, input));

/** Every host process's command line that contains `needle`. */
function cmdlinesWith(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      if (cmdline.includes(needle)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** True while some sandbox's workspace holds the `started` mark and not yet `done`. */
function commandRunning(): boolean {
  const root = join(dataDir, 'sandboxes');
  if (!existsSync(root)) return false;
  return readdirSync(root).some(
    (name) => existsSync(join(root, name, 'started')) && !existsSync(join(root, name, 'done')),
  );
}

const anyTier = TIERS.some((tier) => skipUnless(tier) === undefined);

describe('exec threats through the built-in tools over HTTP', {
  skip: anyTier ? undefined : skipUnless('process'),
}, () => {
  before(async () => {
    base = mkdtempSync(join(tmpdir(), 'keel-exec-threats-'));
    chmodSync(base, 0o711);
    dataDir = join(base, 'data');
    // An existing data directory as older versions left it: world-readable directory and store.
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'keel.db'), '', { mode: 0o644 });
    chmodSync(join(dataDir, 'keel.db'), 0o644);
    keel = await startKeelProcess({ agents: AGENTS, dataDir, apiKey: KEY });
  });

  after(async () => {
    await keel?.kill('SIGTERM');
    // A workspace mount can outlive the stop here (seen after the merge with fresh tmpfs
    // workspaces; not yet explained): the start-up sweep of the next Keel would remove it; this
    // test removes the directory instead, so it runs that sweep itself.
    if (dataDir !== '') await sweepStaleSandboxes(join(dataDir, 'sandboxes'));
    if (base !== '') rmSync(base, { recursive: true, force: true });
  });

  test('the data directory is private: 0711, store files 0600, and the fix is logged', async () => {
    await run(`exec-${TIERS.find((t) => skipUnless(t) === undefined)}-one-shot`, {
      argv: ['/bin/true'],
    });
    const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);
    assert.equal(mode(dataDir), '711');
    for (const name of ['keel.db', 'keel.db-wal', 'keel.db-shm', 'keel.lock']) {
      assert.ok(existsSync(join(dataDir, name)), `${name} exists`);
      assert.equal(mode(join(dataDir, name)), '600', name);
    }
    assert.match(keel.output(), /mode of \S+data changed from 755 to 711/);
    assert.match(keel.output(), /mode of \S+keel\.db changed from 644 to 600/);
  });

  test('a process-tier command cannot read the store or list the data directory', {
    skip: skipUnless('process'),
  }, async () => {
    const result = await run('exec-process-one-shot', {
      argv: [
        '/bin/sh',
        '-c',
        `head -c 16 ${dataDir}/keel.db; head -c 16 ${dataDir}/keel.db-wal; ls ${dataDir}; echo end`,
      ],
    });
    assert.equal(result.ok, true, JSON.stringify(result));
    // Two layers: the store's modes (0711 directory, 0600 files) and, on the process tier, a private
    // mount namespace that covers the data directory (only the sandbox root's mount point shows).
    const seen = `read the data directory: ${JSON.stringify(result)}`;
    assert.doesNotMatch(result.stdout, /SQLite format|keel\.db|keel\.lock/, seen);
    assert.match(result.stdout, /end\n$/, seen);
    assert.match(result.stderr, /keel\.db.*(Permission denied|No such file)/, seen);
  });

  for (const tier of TIERS) {
    for (const policy of POLICIES) {
      test(`${tier} ${policy}: a secret variable never appears on a host command line`, {
        skip: skipUnless(tier),
      }, async () => {
        const canary = `keel-canary-${tier}-${policy}-${process.pid}-${Date.now()}`;
        const id = await submit(`exec-${tier}-${policy}`, {
          argv: [
            '/bin/sh',
            '-c',
            'touch started; sleep 1; touch done; echo "$KEEL_CANARY" | wc -c',
          ],
          env: { KEEL_CANARY: canary },
        });
        let scansWhileRunning = 0;
        const seen: string[] = [];
        const result = await finished(id, () => {
          const running = commandRunning();
          seen.push(...cmdlinesWith(canary));
          if (running) scansWhileRunning++;
        });
        assert.equal(result.ok, true, JSON.stringify(result));
        assert.equal(
          result.stdout.trim(),
          String(canary.length + 1),
          'the program got the variable',
        );
        assert.ok(scansWhileRunning > 0, 'the command lines were read while the command ran');
        assert.deepEqual(seen, [], 'the secret was on a host command line');
      });
    }

    test(`${tier}: a 64 MiB argv is refused before it is journaled`, {
      skip: skipUnless(tier),
    }, async () => {
      const storeBytes = () =>
        ['keel.db', 'keel.db-wal'].reduce(
          (sum, name) =>
            sum + (existsSync(join(dataDir, name)) ? statSync(join(dataDir, name)).size : 0),
          0,
        );
      const before = storeBytes();
      const id = await submit(`huge-${tier}`, {});
      const result = await finished(id);
      assert.equal(result.ok, false, JSON.stringify(result).slice(0, 500));
      assert.equal(result.code, 'tool_arguments_too_large', result.message);
      const steps = (await api('GET', `/v1/runs/${id}/steps`)).body.steps;
      assert.deepEqual(steps, [], 'no step was journaled');
      const grown = storeBytes() - before;
      assert.ok(grown < 8 * 1024 * 1024, `the store grew by ${grown} bytes`);
    });

    test(`${tier}: a NUL in argv or env is refused as invalid input`, {
      skip: skipUnless(tier),
    }, async () => {
      const inArgv = await run(`exec-${tier}-one-shot`, {
        argv: ['/bin/echo', 'before<NUL>after'],
      });
      assert.equal(inArgv.ok, false, JSON.stringify(inArgv));
      assert.equal(inArgv.code, 'tool_input_invalid');
      assert.match(inArgv.message, /NUL/);
      const inEnv = await run(`exec-${tier}-one-shot`, {
        argv: ['/bin/true'],
        env: { KEEL_CANARY: 'a<NUL>b' },
      });
      assert.equal(inEnv.ok, false, JSON.stringify(inEnv));
      assert.equal(inEnv.code, 'tool_input_invalid');
    });
  }

  for (const policy of POLICIES) {
    test(`namespace ${policy}: the command runs with no_new_privs and an empty bounding set`, {
      skip: skipUnless('namespace'),
    }, async () => {
      // Twice: the second command of a resident sandbox is the one entered into the kept namespaces.
      for (let call = 0; call < 2; call++) {
        const result = await run(`exec-namespace-${policy}`, {
          argv: ['/bin/cat', '/proc/self/status'],
        });
        assert.equal(result.ok, true, JSON.stringify(result));
        assert.match(result.stdout, /^NoNewPrivs:\s+1$/m);
        assert.match(result.stdout, /^CapBnd:\s+0000000000000000$/m);
        assert.match(result.stdout, /^CapEff:\s+0000000000000000$/m);
        // The tier's seccomp filter is on (mode 2), loaded by bwrap or by the entry helper.
        assert.match(result.stdout, /^Seccomp:\s+2$/m);
      }
    });

    test(`namespace ${policy}: the seccomp filter refuses the kernel keyring and io_uring with EPERM`, {
      skip: skipUnless('namespace') ?? (SYSCALLS === undefined && `no table for ${process.arch}`),
    }, async () => {
      for (let call = 0; call < 2; call++) {
        const result = await run(`exec-namespace-${policy}`, {
          argv: [
            '/usr/bin/perl',
            '-e',
            // Each call's errno (1 is EPERM; without the filter keyctl says EINVAL or a keyring id).
            `for my $n (${SYSCALLS!.keyctl}, ${SYSCALLS!.ioUringSetup}, ${SYSCALLS!.getpid}) { my $r = syscall($n, 0, 0, 0, 0, 0); print $r < 0 ? $!+0 : 'ok', "\\n" }`,
          ],
        });
        assert.equal(result.ok, true, JSON.stringify(result));
        assert.deepEqual(
          result.stdout.trim().split('\n'),
          ['1', '1', 'ok'],
          JSON.stringify(result),
        );
      }
    });
  }
});

// The drivers refuse what the tools' schemas already refuse, alike on every tier, for callers that
// reach a driver without a tool.
for (const tier of TIERS) {
  test(`${tier} driver: a NUL in argv or env is a sandbox_command_invalid error`, {
    skip: skipUnless(tier),
  }, async (t) => {
    const { root, cleanup } = sandboxRoot();
    const driver =
      tier === 'process'
        ? new ProcessDriver(root)
        : tier === 'namespace'
          ? new NamespaceDriver(root)
          : new GvisorDriver(root);
    const env = await driver.create({
      id: `nul-${tier}-${process.pid}`,
      limits: resolveLimits({}),
      network: { allow: [] },
      keepProcesses: false,
    });
    t.after(async () => {
      await env.destroy();
      cleanup();
    });
    const commands: ExecCommand[] = [
      { argv: ['/bin/echo', 'a\0b'] },
      { argv: ['/bin/true'], env: { X: 'a\0b' } },
      { argv: ['/bin/true'], env: { 'X=Y': 'z' } },
    ];
    for (const command of commands) {
      await assert.rejects(env.exec(command), (error: any) => {
        assert.equal(error.code, 'sandbox_command_invalid');
        return true;
      });
    }
  });
}

// A command's variables act on the command only: never on the launchers that run as root on the
// host before it (bash reads BASH_ENV, the dynamic loader LD_PRELOAD).
for (const [tier, keepProcesses] of [
  ['process', false],
  ['namespace', true],
] as const) {
  test(`${tier} driver: BASH_ENV given to a command never runs as root on the host`, {
    skip: skipUnless(tier),
  }, async (t) => {
    const { root, cleanup } = sandboxRoot();
    const hostDir = mkdtempSync(join(tmpdir(), 'keel-bash-env-'));
    chmodSync(hostDir, 0o777);
    const marker = join(hostDir, 'ran-as');
    const script = join(hostDir, 'evil.sh');
    writeFileSync(script, `id -u >> ${marker}\n`, { mode: 0o755 });
    const driver = tier === 'process' ? new ProcessDriver(root) : new NamespaceDriver(root);
    const env = await driver.create({
      id: `bash-env-${tier}-${process.pid}`,
      limits: resolveLimits({}),
      network: { allow: [] },
      keepProcesses,
    });
    t.after(async () => {
      await env.destroy();
      cleanup();
      rmSync(hostDir, { recursive: true, force: true });
    });
    const result = await env.exec({
      argv: ['/bin/sh', '-c', 'echo "$BASH_ENV"'],
      env: { BASH_ENV: script },
    });
    assert.equal(result.stdout.trim(), script, 'the program still gets the variable');
    const ranAs = existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n') : [];
    assert.ok(!ranAs.includes('0'), `BASH_ENV ran as root: ${ranAs.join(',')}`);
  });
}
