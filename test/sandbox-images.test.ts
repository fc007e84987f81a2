// Environment images for real: a Python image is built from Debian's packages with mmdebstrap (once
// for this file, into a cache under a temporary root that every test here reuses), then the
// built-in `exec` tool runs `python3 -c` in it on the namespace and gVisor tiers. Also: two caches
// (as two processes would) building the same spec at once build it once; the second build is a
// cache hit; the root is read-only; the writable layer (/tmp, /var/tmp) is private to each sandbox;
// a failed build leaves nothing in the cache; pip installs from a package index on the host's loopback
// reached only through the egress allowlist (issue 18). Build and cache-hit times are printed as diagnostics
// (bench/RESULTS.md §Images). Skips, saying why, when mmdebstrap or the Debian mirror is missing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { runImagesCommand } from '../src/cli/images-command.ts';
import { ImageCache, type BuildOutcome } from '../src/sandbox/images/image-cache.ts';
import { defineImage } from '../src/sandbox/images/image-spec.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import type { Tier } from '../src/sandbox/tiers.ts';
import type { ToolContext, ToolDefinition, ToolNode } from '../src/sdk/types.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { testPython } from './fixtures/images-agents.ts';
import { EgressProxy, type EgressRecord } from '../src/sandbox/egress/egress-proxy.ts';
import { imageBuildSkipReason, sandboxRoot, skipUnless } from './support/sandbox.ts';
import { pureWheel, serveWheelIndex } from './support/wheel-index.ts';

/**
 * A Python image takes 1.5 to 5 minutes on this 2-core host, depending on its load: the build test
 * sets its own timeout (the runner's default per test is 2 minutes); later tests reuse the image.
 */
const BUILD_TIMEOUT_MS = 30 * 60 * 1000;

const IMAGES_AGENTS = fileURLToPath(new URL('./fixtures/images-agents.ts', import.meta.url));
const python = testPython;

const { root, artifacts, cleanup } = sandboxRoot();
const imagesDir = join(root, '..', 'images');
const cache = new ImageCache({ dir: imagesDir });
const manager = new SandboxManager({ root, artifacts, images: cache });
const NODE: ToolNode = { dataDir: undefined, sandboxManager: () => manager };
let skip: string | undefined;
let first: BuildOutcome | undefined;
let concurrent: BuildOutcome | undefined;

before(async () => {
  skip = await imageBuildSkipReason(cache.mirror, python.suite);
});

after(async () => {
  await manager.close();
  await cache.close();
  cleanup();
});

let seq = 0;
function call(tool: ToolDefinition<any, any>, args: unknown, runId: string): Promise<any> {
  const ctx: ToolContext = {
    executionId: `${runId}.${++seq}`,
    runId,
    tenantId: 'ten_images',
    attempt: 1,
    signal: new AbortController().signal,
    node: NODE,
  };
  return Promise.resolve(tool.run(tool.input.parse(args), ctx));
}

const toolsFor = (tier: Tier) =>
  sandboxTools({
    profile: defineSandboxProfile({
      name: `images-${tier}`,
      tier,
      policy: 'resident',
      image: python,
    }),
    prefix: `${tier}_`,
  });

test('two builds of the same image at once build it once; the next build is a cache hit', {
  timeout: BUILD_TIMEOUT_MS,
}, async (t) => {
  if (skip !== undefined) return t.skip(skip);
  // Two caches on one directory stand for two processes: both start the same build at once.
  const other = new ImageCache({ dir: imagesDir });
  try {
    [first, concurrent] = await Promise.all([cache.build(python), other.build(python)]);
  } catch (error) {
    skip = 'the Python image did not build (see the first test)';
    throw error;
  } finally {
    await other.close();
  }
  const outcomes = [first!, concurrent!];
  assert.deepEqual(
    outcomes.map((o) => o.cached).sort(),
    [false, true],
    'exactly one of the two built',
  );
  assert.equal(first!.image.hash, concurrent!.image.hash);
  const built = outcomes.find((o) => !o.cached)!;
  const hit = await cache.build(python);
  assert.equal(hit.cached, true);
  assert.equal(hit.image.hash, built.image.hash);
  const entries = readdirSync(imagesDir).filter((entry) => !entry.startsWith('.lock-'));
  assert.deepEqual(entries, [built.image.hash], 'one image, no build leftovers');
  assert.deepEqual(
    cache.list().map((image) => image.names),
    [['test-python']],
  );
  t.diagnostic(
    `python image (python3, python3-pip, python3-venv): built in ${built.seconds.toFixed(1)} s, ` +
      `${(built.image.sizeBytes / 2 ** 20).toFixed(0)} MiB; cache hit in ${(hit.seconds * 1000).toFixed(2)} ms; ` +
      `the concurrent build waited ${(outcomes.find((o) => o.cached)!.seconds).toFixed(1)} s and reused it`,
  );
});

for (const tier of ['namespace', 'gvisor'] as const) {
  test(`${tier}: python3 runs from the image through the built-in exec; the root is read-only`, async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const tierSkip = skipUnless(tier);
    if (tierSkip !== undefined) return t.skip(tierSkip);
    const tools = toolsFor(tier);
    const runId = `img-${tier}-${process.pid}`;
    try {
      const ran = await call(tools.exec, { argv: ['python3', '-c', 'print(6 * 7)'] }, runId);
      assert.equal(ran.stdout, '42\n', ran.stderr);
      assert.equal(ran.exitCode, 0);
      const marks = await call(
        tools.exec,
        { argv: ['cat', '/etc/keel-image', '/etc/keel-setup'] },
        runId,
      );
      assert.equal(
        marks.stdout,
        'test-python\nsetup-ran\n',
        'the image root, with its files and setup',
      );
      const local = await call(
        tools.exec,
        { argv: ['python3', '-c', 'import socket; print(socket.gethostbyname("localhost"))'] },
        runId,
      );
      assert.equal(
        local.stdout,
        '127.0.0.1\n',
        `localhost from the image's /etc/hosts: ${local.stderr}`,
      );
      const venv = await call(
        tools.exec,
        {
          argv: [
            '/bin/sh',
            '-c',
            'python3 -m venv /tmp/venv && /tmp/venv/bin/python -c "import sys; print(sys.prefix)"',
          ],
        },
        runId,
      );
      assert.equal(venv.stdout, '/tmp/venv\n', venv.stderr);
      for (const path of ['/usr/lib/keel-x', '/etc/keel-x', '/keel-x', '/var/lib/keel-x']) {
        const write = await call(
          tools.exec,
          { argv: ['/bin/sh', '-c', `echo x > ${path}`] },
          runId,
        );
        assert.notEqual(write.exitCode, 0, `${path} must not be writable`);
        assert.match(write.stderr, /Read-only file system|Permission denied/);
      }
    } finally {
      await manager.endRun(runId);
    }
  });

  test(`${tier}: each sandbox's writable layer is its own`, async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const tierSkip = skipUnless(tier);
    if (tierSkip !== undefined) return t.skip(tierSkip);
    const tools = toolsFor(tier);
    const [a, b] = [`img-${tier}-a-${process.pid}`, `img-${tier}-b-${process.pid}`];
    const sh = (runId: string, script: string) =>
      call(tools.exec, { argv: ['/bin/sh', '-c', script] }, runId);
    try {
      await Promise.all([
        sh(a, 'echo from-a > /tmp/mine && echo from-a > /var/tmp/mine'),
        sh(b, 'echo from-b > /tmp/mine && echo from-b > /var/tmp/mine'),
      ]);
      const [seenByA, seenByB] = await Promise.all([
        sh(a, 'cat /tmp/mine /var/tmp/mine'),
        sh(b, 'cat /tmp/mine /var/tmp/mine'),
      ]);
      assert.equal(seenByA.stdout, 'from-a\nfrom-a\n', seenByA.stderr);
      assert.equal(seenByB.stdout, 'from-b\nfrom-b\n', seenByB.stderr);
      assert.equal(
        existsSync(join(first!.image.rootfs, 'tmp', 'mine')),
        false,
        'nothing reached the image',
      );
      assert.equal(existsSync(join(first!.image.rootfs, 'var', 'tmp', 'mine')), false);
    } finally {
      await Promise.all([manager.endRun(a), manager.endRun(b)]);
    }
  });
}

test('a failed build leaves no image and no build directory in the cache', async (t) => {
  if (skip !== undefined) return t.skip(skip);
  // A suite the mirror does not have fails at apt-get update: the quickest failure mmdebstrap has.
  const broken = defineImage({ name: 'test-broken', suite: 'keel-no-such-suite' });
  // What a builder killed mid-build leaves: its work directory, with a mount still in it (mmdebstrap
  // mounts /proc, /sys, /dev/pts and /dev/shm in the root it builds). The next build of that spec
  // unmounts and removes it.
  const stale = join(imagesDir, `.build-${cache.hashOf(broken)}-stale`, 'rootfs', 'dev', 'shm');
  mkdirSync(stale, { recursive: true });
  execFileSync('/usr/bin/mount', ['-t', 'tmpfs', 'keel-test', stale]);
  writeFileSync(join(stale, 'left'), 'x');
  await assert.rejects(cache.build(broken), (error: { code?: string; message: string }) => {
    assert.equal(error.code, 'image_build_failed');
    assert.match(error.message, /keel-no-such-suite/);
    return true;
  });
  const hash = cache.hashOf(broken);
  assert.deepEqual(
    readdirSync(imagesDir).filter((entry) => entry.includes(hash) && !entry.startsWith('.lock-')),
    [],
  );
  assert.equal(
    readFileSync('/proc/self/mountinfo', 'utf8').includes(imagesDir),
    false,
    'no mount left',
  );
  // A sandbox call on it fails with the same typed error, not a half-built root.
  const tools = sandboxTools({
    profile: defineSandboxProfile({ name: 'images-broken', tier: 'namespace', image: broken }),
    prefix: 'broken_',
  });
  await assert.rejects(call(tools.exec, { argv: ['true'] }, `img-broken-${process.pid}`), {
    code: 'image_build_failed',
  });
});

test('with no build wait, a sandbox call on an image not built is image_not_built', async (t) => {
  if (skip !== undefined) return t.skip(skip);
  const unbuilt = defineImage({ name: 'test-unbuilt', packages: ['python3', 'curl'] });
  await assert.rejects(
    cache.ensure(unbuilt, 0),
    (error: { code?: string; retryable?: boolean }) => {
      assert.equal(error.code, 'image_not_built');
      assert.equal(error.retryable, true);
      return true;
    },
  );
  assert.equal(await cache.ensure(python, 0), first!.image.rootfs, 'a built image needs no wait');
});

test('a sandbox that waits past the build wait gets image_not_built; a stopped build leaves nothing', async (t) => {
  if (skip !== undefined) return t.skip(skip);
  const slow = defineImage({ name: 'test-stopped', packages: ['python3', 'python3-yaml'] });
  const hash = cache.hashOf(slow);
  const side = new ImageCache({ dir: imagesDir });
  await assert.rejects(
    side.ensure(slow, 50),
    (error: { code?: string; retryable?: boolean; message: string }) => {
      assert.equal(error.code, 'image_not_built');
      assert.equal(error.retryable, true);
      assert.match(error.message, /did not finish within 50 ms and goes on/);
      return true;
    },
  );
  // Wait until the build is really under way (its work directory exists), then stop it.
  const deadline = Date.now() + 60_000;
  while (
    !readdirSync(imagesDir).some((entry) => entry.startsWith(`.build-${hash}-`)) &&
    Date.now() < deadline
  )
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(
    readdirSync(imagesDir).some((entry) => entry.startsWith(`.build-${hash}-`)),
    'the build started',
  );
  await side.close();
  // mmdebstrap and what it started (apt, dpkg) are gone: no process names the work directory.
  const building = () =>
    readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`.build-${hash}`);
        } catch {
          return false;
        }
      });
  const gone = Date.now() + 10_000;
  while (building().length > 0 && Date.now() < gone)
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(building(), [], 'no build process outlives close()');
  assert.deepEqual(
    readdirSync(imagesDir).filter((entry) => entry.includes(hash) && !entry.startsWith('.lock-')),
    [],
  );
  assert.equal(side.get(hash), undefined);
});

/** Runs `keel images …` with captured output (not a terminal: plain lines). */
async function keelImages(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await runImagesCommand(args, { stdout, stderr, env: {} });
  return { code, stdout: out, stderr: err };
}

test('keel images: build of a built image is a cache hit; list; rm', async (t) => {
  if (skip !== undefined) return t.skip(skip);
  const hash = first!.image.hash;
  const built = await keelImages([
    'build',
    '--agents',
    IMAGES_AGENTS,
    '--dir',
    imagesDir,
    'test-python',
  ]);
  assert.equal(built.code, 0, built.stderr);
  assert.match(
    built.stdout,
    new RegExp(`^test-python ${hash.slice(0, 12)} already built \\(cache hit in [\\d.]+ ms\\)\n$`),
  );
  const listed = await keelImages(['list', '--dir', imagesDir]);
  assert.match(listed.stdout, new RegExp(`test-python\\s+${hash.slice(0, 12)}\\s+\\d+ MiB`));
  const json = JSON.parse((await keelImages(['list', '--dir', imagesDir, '--json'])).stdout);
  assert.deepEqual(
    json.map((row: { hash: string; built: boolean }) => [row.hash, row.built]),
    [[hash, true]],
  );
  await assert.rejects(
    keelImages(['build', '--agents', IMAGES_AGENTS, '--dir', imagesDir, 'nope']),
    /no image named nope/,
  );
  const removed = await keelImages(['rm', '--dir', imagesDir, 'test-python']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(removed.stdout, `removed test-python ${hash.slice(0, 12)}\n`);
  assert.equal(cache.get(hash), undefined);
  assert.equal(existsSync(join(imagesDir, hash)), false);
  const again = await keelImages(['rm', '--dir', imagesDir, hash.slice(0, 12)]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /no built image/);
  const declared = JSON.parse(
    (await keelImages(['list', '--dir', imagesDir, '--agents', IMAGES_AGENTS, '--json'])).stdout,
  );
  assert.ok(
    declared.some((row: { hash: string; built: boolean }) => row.hash === hash && !row.built),
  );
});

for (const tier of ['namespace', 'gvisor'] as const) {
  // A venv and a pip install take about a minute on a loaded 2-core host: past the runner's 2 minutes
  // per test under more load, so the build's own timeout applies.
  test(`${tier}: pip installs a package from an index on the host's loopback, reached only through the egress allowlist`, {
    timeout: BUILD_TIMEOUT_MS,
  }, async (t) => {
    if (skip !== undefined) return t.skip(skip);
    const tierSkip = skipUnless(tier);
    if (tierSkip !== undefined) return t.skip(tierSkip);
    const index = await serveWheelIndex(
      'keeldemo',
      '1.0',
      await pureWheel('keeldemo', '1.0', 'ANSWER = 42\n'),
    );
    const elsewhere = await serveWheelIndex(
      'keeldemo',
      '1.0',
      await pureWheel('keeldemo', '1.0', ''),
    );
    const records: EgressRecord[] = [];
    const egressRoot = sandboxRoot();
    const networked = new SandboxManager({
      root: egressRoot.root,
      artifacts: egressRoot.artifacts,
      images: cache,
      egress: new EgressProxy({
        onRecord: (record) => records.push(record),
        revealSecret: async () => {
          throw new Error('no secrets in this test');
        },
      }),
    });
    t.after(async () => {
      await networked.close();
      egressRoot.cleanup();
      await index.close();
      await elsewhere.close();
    });
    const profile = defineSandboxProfile({
      name: `pip-${tier}`,
      tier,
      image: python,
      network: { allow: [{ host: '127.0.0.1', port: index.port }] },
      // A venv with pip is ~25 MB in ~2,000 files, and takes seconds to make on a loaded host.
      limits: { deadlineMs: 300_000, diskBytes: 512 * 1024 * 1024, memoryBytes: 512 * 1024 * 1024 },
    });
    const runId = `pip-${tier}-${process.pid}`;
    const sh = (script: string, executionId: string) =>
      networked.call(runId, profile, (env) => env.exec({ argv: ['/bin/sh', '-c', script] }), {
        tenantId: 'ten_images',
        executionId,
        snapshot: false,
      });
    const pip = (port: number) =>
      `/workspace/.venv/bin/pip install --no-cache-dir --disable-pip-version-check --retries 0 --timeout 10 --index-url http://127.0.0.1:${port}/simple/ keeldemo`;
    try {
      const installed = await sh(
        `python3 -m venv /workspace/.venv && ${pip(index.port)} && /workspace/.venv/bin/python -c 'import keeldemo; print(keeldemo.ANSWER)'`,
        'exe_pip',
      );
      assert.equal(installed.value.exitCode, 0, installed.value.stderr);
      assert.match(installed.value.stdout, /Successfully installed keeldemo-1\.0/);
      assert.match(installed.value.stdout, /\n42\n$/);
      assert.ok(index.requests.includes('/simple/keeldemo/'), index.requests.join(', '));
      assert.ok(index.requests.includes('/files/keeldemo-1.0-py3-none-any.whl'));
      // Another index on the same host is not on the allowlist: refused, never reached.
      // (a download with the image's own pip: each one-shot call starts from a fresh sandbox).
      const refused = await sh(
        `python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check --retries 0 --timeout 10 -d /tmp/dl --index-url http://127.0.0.1:${elsewhere.port}/simple/ keeldemo; echo "exit $?"`,
        'exe_pip_refused',
      );
      assert.doesNotMatch(refused.value.stdout, /exit 0/);
      assert.deepEqual(elsewhere.requests, []);
      // Each connection is on record with its verdict.
      assert.ok(records.some((r) => r.executionId === 'exe_pip' && r.verdict === 'allowed'));
      assert.ok(
        records.some((r) => r.executionId === 'exe_pip_refused' && r.verdict === 'denied'),
        `${JSON.stringify(records)}\n${refused.value.stdout}\n${refused.value.stderr}`,
      );
    } finally {
      await networked.endRun(runId);
    }
  });
}
