import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { SharedFile } from '../domain/shared-space.ts';
import { SharedMount, type SharedSpaceReader } from './shared-mount.ts';

/** A space held in memory; counts the reads of content. */
function space(rootRunId = 'root') {
  const files = new Map<string, { content: string; version: number }>();
  const reads: string[] = [];
  const reader: SharedSpaceReader = {
    list: async () => ({
      rootRunId,
      files: [...files].sort().map(([path, f]) => ({
        path,
        version: f.version,
        size: f.content.length,
        sha256: '',
        writtenByRun: 'r',
        writtenAt: 0,
      })),
    }),
    read: async (_root, path): Promise<SharedFile | null> => {
      reads.push(path);
      const f = files.get(path);
      return f === undefined
        ? null
        : { path, ...f, size: 0, sha256: '', writtenByRun: 'r', writtenAt: 0 };
    },
  };
  const write = (path: string, content: string) =>
    files.set(path, { content, version: (files.get(path)?.version ?? 0) + 1 });
  return { reader, files, reads, write };
}

test('a refresh copies in what changed by version, removes what is gone, prunes empty directories', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-shared-mount-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const mount = new SharedMount(join(base, 'env.shared'));
  const s = space();
  s.write('a/b/c.txt', 'one');
  s.write('top.txt', 'top');
  await mount.refresh(s.reader, 't', 'run');
  assert.equal(readFileSync(join(mount.dir, 'a/b/c.txt'), 'utf8'), 'one');
  assert.deepEqual(s.reads.toSorted(), ['a/b/c.txt', 'top.txt']);

  s.reads.length = 0;
  s.write('top.txt', 'top 2');
  await mount.refresh(s.reader, 't', 'run');
  assert.deepEqual(s.reads, ['top.txt'], 'only the changed file is read again');
  assert.equal(readFileSync(join(mount.dir, 'top.txt'), 'utf8'), 'top 2');

  s.files.delete('a/b/c.txt');
  // A file where a directory was: possible once the old file and its directories are gone.
  s.write('a', 'now a file');
  await mount.refresh(s.reader, 't', 'run');
  assert.deepEqual(readdirSync(mount.dir).toSorted(), ['a', 'top.txt']);
  assert.equal(readFileSync(join(mount.dir, 'a'), 'utf8'), 'now a file');

  await mount.destroy();
  assert.equal(existsSync(join(base, 'env.shared')), false);
});

test('a path the filesystem cannot hold beside another is left out and tried again', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-shared-mount-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const mount = new SharedMount(join(base, 'env.shared'));
  const s = space();
  s.write('x', 'file');
  s.write('x/y', 'under a file');
  await mount.refresh(s.reader, 't', 'run');
  assert.equal(readFileSync(join(mount.dir, 'x'), 'utf8'), 'file');
  s.files.delete('x');
  await mount.refresh(s.reader, 't', 'run');
  assert.equal(readFileSync(join(mount.dir, 'x/y'), 'utf8'), 'under a file');
  assert.deepEqual(readdirSync(join(base, 'env.shared', 'staging')), [], 'no staged leftovers');
});
