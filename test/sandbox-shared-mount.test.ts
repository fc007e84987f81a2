// The run tree's shared space mounted read-only at /shared in sandboxes (issue 21), on the
// namespace and gVisor tiers, through the whole engine: a parent writes a shared file, its child's
// sandboxed `exec cat /shared/…` sees it; a new version written meanwhile is seen by the next exec
// in the same environment; a write to /shared from inside fails (read-only); the copy is never in
// the workspace manifest. The process tier refuses the option when the profile is defined.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startKeel } from '../src/embedded/index.ts';
import { defineAgent } from '../src/index.ts';
import { loadManifest } from '../src/sandbox/manifest.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import type { Tier } from '../src/sandbox/tiers.ts';
import type { Json } from '../src/sdk/types.ts';
import { openArtifactStore } from '../src/store/open-store.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { skipUnless } from './support/sandbox.ts';

const FILE = 'plans/step one.txt';

test('the process tier (and gVisor with an image) refuse the shared space mount with a clear message', () => {
  assert.throws(
    () => defineSandboxProfile({ name: 'p', tier: 'process', sharedSpace: true }),
    /shared space mount needs tier namespace or gvisor/,
  );
  assert.throws(
    () =>
      defineSandboxProfile({
        name: 'g',
        tier: 'gvisor',
        sharedSpace: true,
        image: { name: 'tools', packages: ['jq'] },
      }),
    /on tier gvisor needs the host image/,
  );
});

for (const tier of ['namespace', 'gvisor'] as const satisfies readonly Tier[]) {
  test(`${tier}: a child's sandbox sees the tree's shared files read-only at /shared, refreshed before each exec`, {
    skip: skipUnless(tier),
    timeout: 180_000,
  }, async (t) => {
    const tools = sandboxTools({
      profile: defineSandboxProfile({
        name: `shared-${tier}`,
        tier,
        policy: 'resident',
        sharedSpace: true,
      }),
    });
    type Exec = {
      exitCode: number;
      stdout: string;
      stderr: string;
      workspace: { manifest: string };
    };
    const exec = async (ctx: any, script: string): Promise<Exec> =>
      (await ctx.tool(tools.exec, { argv: ['/bin/sh', '-c', script] })) as Exec;
    const child = defineAgent({
      name: 'shared-reader',
      version: '1',
      async run(ctx): Promise<Json> {
        const first = await exec(ctx, `cat "/shared/${FILE}"`);
        // A write from inside fails; the workspace is written as usual.
        const denied = await exec(
          ctx,
          `echo forged > "/shared/${FILE}"; a=$?; touch /shared/new; b=$?; echo ok > /workspace/mine.txt; echo $a $b`,
        );
        // The only way to write: ctx.shared.write, here version 2.
        await ctx.shared.write(FILE, 'version 2', { expectedVersion: 1 });
        // (`cd` first: this host's gVisor answers EINVAL to statx of a path, as `ls DIR` uses.)
        const second = await exec(ctx, `cat "/shared/${FILE}"; echo; cd /shared && ls`);
        return { first, denied, second } as unknown as Json;
      },
    });
    const parent = defineAgent({
      name: 'shared-writer',
      version: '1',
      async run(ctx): Promise<Json> {
        await ctx.shared.write(FILE, 'version 1', { expectedVersion: null });
        const seen = await ctx.child('shared-reader', {});
        // The parent writes version 3; a new child's sandbox sees it from its first exec.
        await ctx.shared.write(FILE, 'version 3', { expectedVersion: 2 });
        const later = await ctx.child('shared-late-reader', {});
        return { seen, later };
      },
    });
    const lateReader = defineAgent({
      name: 'shared-late-reader',
      version: '1',
      async run(ctx): Promise<Json> {
        return (await exec(ctx, `cat "/shared/${FILE}"`)).stdout;
      },
    });
    const dir = mkdtempSync(join(tmpdir(), `keel-shared-mount-${tier}-`));
    const keel = await startKeel({
      agents: [parent, child, lateReader],
      tools: [tools.exec],
      dataDir: dir,
    });
    const artifacts = openArtifactStore({ dataDir: dir });
    t.after(async () => {
      await keel.close();
      await artifacts.close?.();
      rmSync(dir, { recursive: true, force: true });
    });

    const { id } = await keel.runs.create({ agent: 'shared-writer' });
    const run = await keel.runs.wait(id, { timeoutMs: 120_000 });
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const { seen, later } = run.result as any;
    assert.equal(seen.first.exitCode, 0, seen.first.stderr);
    assert.equal(seen.first.stdout, 'version 1', 'the parent’s write, seen by the child');
    assert.match(seen.denied.stdout, /^[1-9]\d* [1-9]\d*\n$/, 'both writes to /shared failed');
    // The mount is read-only; its files' modes deny the sandbox uid too (gVisor checks them first).
    assert.match(seen.denied.stderr, /Read-only file system|Permission denied/);
    assert.equal(
      seen.second.stdout,
      'version 2\nplans\n',
      `the next exec sees version 2 (${seen.second.stderr})`,
    );
    assert.equal(later, 'version 3', 'the parent’s later version, in a new child’s sandbox');

    const manifest = await loadManifest(artifacts, seen.denied.workspace.manifest);
    const paths = manifest.entries.map((entry) => entry.path);
    assert.ok(paths.includes('mine.txt'), JSON.stringify(paths));
    assert.ok(!paths.some((path) => path.includes('step one') || path.includes('plans')));
  });
}
