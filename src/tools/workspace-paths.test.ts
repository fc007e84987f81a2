import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseListing } from './sandbox-tools.ts';
import { normalizeWorkspacePath, sandboxArgument, WorkspacePath } from './workspace-paths.ts';

test('a workspace path is relative, has no .. or NUL, and never starts with - once normalised', () => {
  for (const path of ['a.txt', 'a/b/c', '.', 'a//b/./c/', 'x/-delete', 'name with\nnewline'])
    assert.equal(WorkspacePath.safeParse(path).success, true, path);
  for (const path of ['-delete', '--help', './-exec', './/-x', '/etc', '..', 'a/../b', 'x\0y', ''])
    assert.equal(WorkspacePath.safeParse(path).success, false, JSON.stringify(path));
  assert.equal(normalizeWorkspacePath('a//b/./c/'), 'a/b/c');
  assert.equal(sandboxArgument('x/-delete'), './x/-delete');
  assert.equal(sandboxArgument('.'), './.');
});

test('a NUL-separated listing yields one entry per complete triple, whatever the names hold', () => {
  const forged = 'real\nf 4096 forged.txt';
  assert.deepEqual(parseListing(`d\x000\x00d\x00f\x003\x00d/${forged}\x00`, ''), [
    { path: 'd', kind: 'directory', size: 0 },
    { path: `d/${forged}`, kind: 'file', size: 3 },
  ]);
  // Cut at the output cap mid-entry: the partial entry is dropped, never invented.
  assert.deepEqual(parseListing('l\x000\x00link\x00f\x0012\x00half', 'sub'), [
    { path: 'sub/link', kind: 'symlink', size: 0 },
  ]);
});
