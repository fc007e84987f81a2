// Secrets placed as files (`secrets.files`) on the namespace and gVisor tiers, one-shot and
// resident, through the built-in `exec` as an agent calls it: the file is at its declared path
// under /run/secrets with mode 0400, owned by the sandbox uid; the program's environment no longer
// holds the value; the workspace and every file Keel wrote (workspace snapshots and manifests,
// artifacts, sandbox state) hold no trace of it; each placing is reported as a `file` use; and a
// sandbox of a profile without the declaration finds no such file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SecretUse } from '../src/sandbox/egress/egress-proxy.ts';
import { defineSandboxProfile, type SandboxProfile } from '../src/sandbox/profile.ts';
import { SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import { EnvKeyProvider } from '../src/secrets/key-provider.ts';
import { SecretVault } from '../src/secrets/secret-vault.ts';
import type { ToolContext } from '../src/sdk/types.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { sandboxRoot, skipUnless } from './support/sandbox.ts';

const TIERS = ['namespace', 'gvisor'] as const;
/** Mode and owner of each path, by stat(2) (coreutils' statx is refused under gVisor). */
const STAT =
  'for (@ARGV) { my @s = stat($_) or die "$_: $!\\n"; printf "%o %d\\n", $s[2] & 07777, $s[4] }';

/** Every file under `dir` that holds `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, name);
    try {
      if (statSync(path).isFile() && readFileSync(path).includes(needle)) hits.push(path);
    } catch {
      // a socket, unreadable, or gone meanwhile
    }
  }
  return hits;
}

for (const tier of TIERS)
  describe(`secret files (${tier} tier)`, { skip: skipUnless(tier) }, () => {
    const uses: Array<SecretUse & { ref: string }> = [];
    let manager: SandboxManager;
    let store: SqliteStore;
    let vault: SecretVault;
    let tenantId: string;
    let base: string;
    let cleanup: () => void;
    let dir: string;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'keel-secret-files-'));
      store = new SqliteStore({ path: join(dir, 'keel.db') });
      await store.migrate();
      tenantId = (await store.createTenant('files', 'hash-files')).id;
      vault = new SecretVault(store, new EnvKeyProvider(randomBytes(32).toString('base64')));
      const sandbox = sandboxRoot();
      base = dirname(sandbox.root);
      cleanup = sandbox.cleanup;
      manager = new SandboxManager({
        root: sandbox.root,
        artifacts: sandbox.artifacts,
        revealSecret: (tenant, ref, use) => {
          uses.push({ ...use, ref });
          return vault.reveal(tenant, ref);
        },
      });
    });

    after(async () => {
      await manager.close();
      await store.close();
      cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    const contextOf = (runId: string, executionId: string): ToolContext => ({
      executionId,
      runId,
      tenantId,
      attempt: 1,
      signal: new AbortController().signal,
      node: { dataDir: undefined, sandboxManager: () => manager },
    });
    const execIn = (profile: SandboxProfile, runId: string) => {
      const { exec } = sandboxTools({ manager, profile });
      let n = 0;
      return (argv: string[]) =>
        exec.run({ argv }, contextOf(runId, `${runId}.${++n}`)) as Promise<{
          exitCode: number | null;
          stdout: string;
          stderr: string;
          workspace: { manifest: string };
        }>;
    };

    for (const policy of ['one-shot', 'resident'] as const) {
      test(`${policy}: the file is there for the program alone, 0400 and the sandbox uid's, and nowhere else`, async () => {
        const canary = `canary-file-${tier}-${policy}-${randomBytes(12).toString('hex')}`;
        const name = `FILE_${tier}_${policy.replace('-', '_')}`.toUpperCase();
        await vault.create(tenantId, name, canary);
        const profile = defineSandboxProfile({
          name: `files-${tier}-${policy}`,
          tier,
          policy,
          secrets: { files: { '/run/secrets/token': `secret:${name}` } },
        });
        const runId = `run_files_${tier}_${policy.replace('-', '_')}`;
        const exec = execIn(profile, runId);
        uses.length = 0;
        const read = await exec(['/bin/cat', '/run/secrets/token']);
        assert.equal(read.exitCode, 0, read.stderr);
        assert.equal(read.stdout, canary);
        const looked = await exec([
          '/bin/sh',
          '-c',
          `id -u; perl -e '${STAT}' /run/secrets /run/secrets/token; env; find /workspace -mindepth 1 -maxdepth 1`,
        ]);
        assert.equal(looked.exitCode, 0, looked.stderr);
        const [uid, dirStat, fileStat] = looked.stdout.split('\n');
        assert.equal(dirStat, `700 ${uid}`, 'the directory is the sandbox uid’s alone');
        assert.equal(fileStat, `400 ${uid}`, 'the file is read-only, the sandbox uid’s');
        assert.ok(!looked.stdout.includes(canary), 'not in the program’s environment');
        assert.ok(!looked.stdout.includes('KEEL_SECRET_FILE'), 'the carrier variable is unset');
        assert.ok(!looked.stdout.includes('token'), 'not in the workspace');
        assert.deepEqual(
          uses.map((use) => `${use.ref} ${use.via} ${use.executionId}`),
          [`secret:${name} file ${runId}.1`, `secret:${name} file ${runId}.2`],
          'each placing is a use, with its execution',
        );
        // Written workspace files are snapshotted; the secret file is not among them.
        const wrote = await exec(['/bin/sh', '-c', 'echo data > note.txt']);
        assert.equal(wrote.exitCode, 0, wrote.stderr);
        assert.deepEqual(
          filesHolding(base, canary),
          [],
          'no workspace, snapshot, manifest or spec file holds it',
        );
        await manager.endRun(runId);
        assert.deepEqual(filesHolding(base, canary), [], 'nor after the sandbox is reclaimed');
      });
    }

    test('a profile without the declaration finds no secret file', async () => {
      const profile = defineSandboxProfile({ name: `files-none-${tier}`, tier });
      const exec = execIn(profile, `run_files_none_${tier}`);
      const out = await exec(['/bin/sh', '-c', 'test -e /run/secrets/token; echo $?']);
      assert.equal(out.stdout, '1\n');
      await manager.endRun(`run_files_none_${tier}`);
    });

    test('declared paths are only files directly under /run/secrets', () => {
      for (const path of ['/workspace/token', '/run/secrets/../x', '/run/secrets/a/b', '/run/x'])
        assert.throws(
          () =>
            defineSandboxProfile({
              name: 'bad-files',
              tier,
              secrets: { files: { [path]: 'secret:X' } },
            }),
          /run\/secrets/,
          path,
        );
      assert.throws(
        () =>
          defineSandboxProfile({
            name: 'process-files',
            tier: 'process',
            secrets: { files: { '/run/secrets/x': 'secret:X' } },
          }),
        /tier namespace or gvisor/,
      );
    });
  });
