import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sha256Hex } from '../store/artifact-store.ts';
import { FileArtifactStore } from './file-artifact-store.ts';
import { restoreWorkspace, snapshotWorkspace } from './manifest.ts';
import { SnapshotWorker } from './snapshot-worker.ts';

const limits = { fileBytes: 1024 * 1024, workspaceBytes: 4 * 1024 * 1024 };

test('snapshot → restore round-trips files, modes and links; unchanged files are not stored again', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-manifest-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const store = new FileArtifactStore(join(base, 'artifacts'));
  const source = join(base, 'source');
  mkdirSync(join(source, 'src/deep'), { recursive: true });
  writeFileSync(join(source, 'README'), 'hello');
  writeFileSync(join(source, 'src/deep/run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  writeFileSync(join(base, 'host-secret'), 'secret');
  symlinkSync(join(base, 'host-secret'), join(source, 'escape'));

  const first = await snapshotWorkspace(source, store, limits);
  assert.equal(first.newBlobs, 2);
  assert.deepEqual(
    first.manifest.entries.map((e) => [e.path, e.kind]),
    [
      ['README', 'file'],
      ['escape', 'symlink'],
      ['src/deep/run.sh', 'file'],
    ],
  );
  assert.equal(
    await store.has(sha256Hex('secret')),
    false,
    'the link is recorded, never read through',
  );

  writeFileSync(join(source, 'README'), 'hello again');
  const second = await snapshotWorkspace(source, store, limits);
  assert.equal(second.newBlobs, 1, 'only the changed file is new');
  assert.notEqual(second.manifestSha256, first.manifestSha256);

  const target = join(base, 'target');
  mkdirSync(target);
  await restoreWorkspace(target, store, second.manifestSha256, process.getuid!());
  assert.equal(readFileSync(join(target, 'README'), 'utf8'), 'hello again');
  assert.equal(statSync(join(target, 'src/deep/run.sh')).mode & 0o777, 0o755);
  assert.equal(readlinkSync(join(target, 'escape')), join(base, 'host-secret'));
});

test('a file over the per-file limit or a workspace over its limit is refused with workspace_limit', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-manifest-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const store = new FileArtifactStore(join(base, 'artifacts'));
  const source = join(base, 'source');
  mkdirSync(source);
  writeFileSync(join(source, 'big'), Buffer.alloc(2048));
  await assert.rejects(
    snapshotWorkspace(source, store, { fileBytes: 1024, workspaceBytes: 1 << 20 }),
    { code: 'workspace_limit' },
  );
  await assert.rejects(
    snapshotWorkspace(source, store, { fileBytes: 1 << 20, workspaceBytes: 1024 }),
    { code: 'workspace_limit' },
  );
});

test('a blob whose bytes no longer match its name is reported corrupt', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-manifest-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const store = new FileArtifactStore(base);
  const sha = await store.put(Buffer.from('content'));
  writeFileSync(join(base, sha.slice(0, 2), sha.slice(2)), 'tampered');
  await assert.rejects(store.get(sha), /corrupt/);
});

test('the walk counts entries against maxFiles, never enters a linked directory, and re-reads only changed files', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-manifest-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const store = new FileArtifactStore(join(base, 'artifacts'));
  const source = join(base, 'source');
  mkdirSync(join(source, 'd'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'secret'), 'secret');
  symlinkSync(join(base, 'outside'), join(source, 'd', 'out'));
  for (let i = 0; i < 5; i++) writeFileSync(join(source, 'd', `f${i}`), `content ${i}`);
  const worker = new SnapshotWorker();
  t.after(() => worker.close());
  const generous = { fileBytes: 1 << 20, workspaceBytes: 1 << 20, maxFiles: 7 };
  const first = await snapshotWorkspace(source, store, generous, worker);
  assert.deepEqual(
    first.manifest.entries.map((e) => e.path),
    ['d/f0', 'd/f1', 'd/f2', 'd/f3', 'd/f4', 'd/out'],
  );
  assert.equal(first.reused, 0);
  writeFileSync(join(source, 'd', 'f2'), 'changed');
  const second = await snapshotWorkspace(source, store, generous, worker);
  assert.equal(second.reused, 4, 'only the changed file is read again');
  assert.equal(second.newBlobs, 1);
  await assert.rejects(
    snapshotWorkspace(source, store, { ...generous, maxFiles: 6 }, worker),
    (error: { code?: string; message: string }) =>
      error.code === 'workspace_limit' && /more than 6 entries/.test(error.message),
  );
});
