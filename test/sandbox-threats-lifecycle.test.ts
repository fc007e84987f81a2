// The threat suite's lifecycle part, over HTTP through the built-in exec tool in a real `keel dev`
// on every tier this host has: a Keel killed with SIGKILL leaves no sandbox process behind (they die
// with it, and what is left is swept when Keel starts again, before any sandbox call); a warm
// pool's next lease sees nothing of the previous one (workspace root mode, `user.*` xattrs, /tmp,
// SysV shared memory); the process tier cannot reach PostgreSQL's socket, Keel's data directory or
// the host's /tmp, /var/tmp, /dev/shm, and cannot create user namespaces. A tier missing here is a
// skip naming the package to install, never a pass.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startKeelProcess, type KeelProcess } from './support/keel-process.ts';
import { skipUnless } from './support/sandbox.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/threat-lifecycle-agents.ts', import.meta.url));
const KEY = 'threat-lifecycle-test-key-0123456789';
const DEADLINE_MS = 90_000;
const POSTGRES_SOCKET = '/var/run/postgresql/.s.PGSQL.5432';
/** A marker no other test writes (one per tier): its files must appear nowhere on the host. */
const MARK_BASE = `keel-lc-${process.pid}-${Date.now()}`;
/** Size of the SysV segment tenant A creates, looked for in tenant B's `ipcs -m`. */
const SHM_BYTES = 40_961;

interface Keel {
  keel: KeelProcess;
  dataDir: string;
  submit(input: object): Promise<string>;
  until(id: string, predicate: (run: any) => boolean): Promise<any>;
  finished(id: string): Promise<any>;
  restart(): Promise<void>;
}

async function poll<T>(
  what: string,
  check: () => T | undefined | false,
  more = () => '',
): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${more()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function startKeel(t: TestContext): Promise<Keel> {
  const base = mkdtempSync(join(tmpdir(), 'keel-lc-'));
  chmodSync(base, 0o711);
  const dataDir = join(base, 'data');
  const port = await freePort();
  const start = () => startKeelProcess({ agents: AGENTS, dataDir, port, apiKey: KEY });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(s.keel.url + path, {
      method,
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const s: Keel = {
    keel: await start(),
    dataDir,
    async submit(input) {
      const submitted = await api('POST', '/v1/runs', { agent: 'lc', input });
      assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
      return submitted.body.id;
    },
    async until(id, predicate) {
      const deadline = Date.now() + DEADLINE_MS;
      for (;;) {
        const run = (await api('GET', `/v1/runs/${id}`)).body;
        if (predicate(run)) return run;
        if (Date.now() > deadline)
          throw new Error(`run ${id} stuck: ${JSON.stringify(run)}\n${s.keel.output()}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async finished(id) {
      const run = await s.until(id, (r) => ['succeeded', 'failed', 'waiting'].includes(r.status));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      return run.result;
    },
    async restart() {
      await s.keel.kill('SIGKILL');
      s.keel = await start();
    },
  };
  t.after(async () => {
    await s.keel.kill('SIGTERM'); // a clean stop destroys its sandboxes and unmounts their workspaces
    rmSync(base, { recursive: true, force: true });
  });
  return s;
}

const pidsOf = (pattern: RegExp): number[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return pattern.test(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);

const alive = (pid: number): boolean => existsSync(`/proc/${pid}`);

/** Sandbox environment ids in the data dir, by owner pid (`k<pid>-…`). */
const ownersIn = (root: string): Set<string> =>
  new Set(
    (existsSync(root) ? readdirSync(root) : [])
      .map((name) => /^k(\d+)-/.exec(name)?.[1])
      .filter((pid): pid is string => pid !== undefined),
  );

const runscIds = (dataDir: string): string[] => {
  const state = join(dataDir, 'sandboxes', '.runsc-state');
  if (!existsSync(state)) return [];
  return execFileSync('/usr/bin/runsc', ['--root', state, 'list', '-quiet'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line !== '');
};

const cgroupDirs = (owner: string): string[] =>
  ['/sys/fs/cgroup/pids/keel-sandbox', '/sys/fs/cgroup/keel-sandbox']
    .filter((parent) => existsSync(parent))
    .flatMap((parent) => readdirSync(parent).filter((name) => name.startsWith(`k${owner}-`)));

for (const tier of ['process', 'namespace', 'gvisor'] as const) {
  describe(`lifecycle threats on ${tier}`, { skip: skipUnless(tier) }, () => {
    const MARK = `${MARK_BASE}-${tier}`;
    test('kill -9 of Keel leaves no sandbox process (one-shot and resident); the restart sweeps the rest before any call', async (t) => {
      const s = await startKeel(t);
      const root = join(s.dataDir, 'sandboxes');
      await s.submit({
        tier,
        policy: 'one-shot',
        scripts: ['touch started-once; sleep 987001'],
        effect: 'side-effect', // parks unknown after the restart instead of running again
      });
      await s.submit({
        tier,
        policy: 'resident',
        scripts: ['sleep 987002 >/dev/null 2>&1 & echo bg', 'touch started-kept; sleep 987003'],
        effect: 'side-effect',
      });
      await poll(
        'both commands to start',
        () =>
          existsSync(root) &&
          ['started-once', 'started-kept'].every((mark) =>
            readdirSync(root).some((name) => existsSync(join(root, name, mark))),
          ),
        () => s.keel.output(),
      );
      const [owner] = [...ownersIn(root)];
      assert.ok(owner !== undefined, 'environments are named after their owner');
      const sandboxed = new RegExp(`keel-sandbox/k${owner}-`);
      const before = pidsOf(sandboxed);
      assert.ok(before.length >= 3, `sandbox processes found: ${before.length}`);

      await s.keel.kill('SIGKILL');
      // Tied to Keel: they die with it, before anything restarts.
      await poll(
        'the sandbox processes to die with Keel',
        () => before.every((pid) => !alive(pid)),
        () =>
          JSON.stringify(
            before.filter(alive).map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8')),
          ),
      );
      assert.deepEqual(pidsOf(sandboxed), []);

      s.keel = await startKeelProcess({
        agents: AGENTS,
        dataDir: s.dataDir,
        port: Number(new URL(s.keel.url).port),
        apiKey: KEY,
      });
      // No sandbox call after the restart: the sweep runs at start.
      await poll(
        'the restart to sweep cgroups, workspaces and runsc records',
        () =>
          cgroupDirs(owner).length === 0 &&
          !ownersIn(root).has(owner) &&
          runscIds(s.dataDir).every((id) => !id.startsWith(`k${owner}-`)),
        () =>
          JSON.stringify({
            cgroups: cgroupDirs(owner),
            owners: [...ownersIn(root)],
            runsc: runscIds(s.dataDir),
          }),
      );
      assert.deepEqual(pidsOf(sandboxed), []);
    });

    test("the warm pool's next lease sees nothing of the previous one: root mode, xattrs, /tmp, SysV shm", async (t) => {
      const s = await startKeel(t);
      const attack = [
        'chmod 0777 .', // the working directory is the workspace root on every tier
        `perl -e '$p = "."; $k = "user.keel"; $s = "${MARK}"; print "setxattr=", syscall(188, $p, $k, $s, length $s, 0), "\\n"'`,
        `echo ${MARK} > /tmp/${MARK}`,
        `ipcmk -M ${SHM_BYTES}`,
        'echo attacked',
      ].join('; ');
      const observe = [
        `perl -e 'printf "mode=%o\\n", (stat ".")[2] & 07777'`,
        `perl -e '$p = "."; $k = "user.keel"; $v = "\\0" x 256; $n = syscall(191, $p, $k, $v, 256); print "xattr=", ($n > 0 ? substr($v, 0, $n) : "none"), "\\n"'`,
        'echo tmp=$(ls -A /tmp)',
        'ipcs -m',
      ].join('; ');
      // Tenant A: the first call starts cold and fills the pool; the second leases the warm one.
      const a = await s.finished(
        await s.submit({ tier, policy: 'one-shot', scripts: ['true', attack] }),
      );
      assert.match(a[1].stdout, /attacked/, JSON.stringify(a));
      assert.equal(a[1].cold, false, 'the attack ran in a leased warm sandbox');
      // Tenant B: the next lease of the same pool.
      const [b] = await s.finished(
        await s.submit({ tier, policy: 'one-shot', scripts: [observe], untilWarm: true }),
      );
      assert.equal(b.cold, false, `B leased a warm sandbox: ${JSON.stringify(b)}`);
      assert.match(b.stdout, /mode=700\n/, b.stdout);
      assert.match(b.stdout, /xattr=none\n/, b.stdout);
      assert.ok(!b.stdout.includes(MARK), b.stdout);
      assert.ok(
        !new RegExp(`\\b${SHM_BYTES}\\b`).test(b.stdout),
        `A's segment visible: ${b.stdout}`,
      );
      assert.equal(existsSync(`/tmp/${MARK}`), false, "A's /tmp file is not on the host");
    });

    test('the PostgreSQL socket, the data dir and host /tmp, /var/tmp, /dev/shm are out of reach; no user namespaces', async (t) => {
      const s = await startKeel(t);
      const script = [
        `[ -e ${POSTGRES_SOCKET} ] && echo FOUND-SOCKET`,
        `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => "${POSTGRES_SOCKET}") and print "REACHED-POSTGRES\\n"'`,
        `head -c 16 ${s.dataDir}/keel.db && echo READ-DATA-DIR`,
        // The process tier shows the workspace's own path under a covering tmpfs, nothing else.
        `ls -A ${s.dataDir} | grep -q keel.db && echo LISTED-DATA-DIR`,
        `for d in /tmp /var/tmp /dev/shm; do echo x > $d/${MARK} && echo "WROTE $d"; done`,
        'unshare -U true && echo CREATED-USERNS',
        'unshare -r true && echo CREATED-ROOT-USERNS',
        'echo done',
      ].join('; ');
      const [ran] = await s.finished(
        await s.submit({ tier, policy: 'one-shot', scripts: [script] }),
      );
      assert.match(ran.stdout, /done/);
      for (const breach of [
        'FOUND-SOCKET',
        'REACHED-POSTGRES',
        'READ-DATA-DIR',
        'LISTED-DATA-DIR',
        // gVisor's user namespaces are the sentry's own (a user-space kernel), not the host's.
        ...(tier === 'gvisor' ? [] : ['CREATED-USERNS', 'CREATED-ROOT-USERNS']),
      ])
        assert.ok(!ran.stdout.includes(breach), `${breach}: ${ran.stdout}\n${ran.stderr}`);
      for (const dir of ['/tmp', '/var/tmp', '/dev/shm'])
        assert.equal(existsSync(join(dir, MARK)), false, `${dir} on the host is untouched`);
    });
  });
}
