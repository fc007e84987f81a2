import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createPrivateFile, secureDataDir } from './data-dir-modes.ts';

const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);

test('secureDataDir makes the directory 0711 and its files 0600, and reports each change', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-modes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'keel.db'), '', { mode: 0o644 });
  chmodSync(join(dir, 'keel.db'), 0o644);
  writeFileSync(join(dir, 'keel.lock'), '1', { mode: 0o600 });
  mkdirSync(join(dir, 'sandboxes'), { mode: 0o711 });
  const changes = secureDataDir(dir);
  assert.deepEqual(
    changes.map((c) => [c.path, c.from, c.to]),
    [
      [dir, '755', '711'],
      [join(dir, 'keel.db'), '644', '600'],
    ],
  );
  assert.equal(mode(dir), '711');
  assert.equal(mode(join(dir, 'keel.db')), '600');
  assert.equal(mode(join(dir, 'sandboxes')), '711', 'directories inside are left alone');
  assert.deepEqual(secureDataDir(dir), [], 'nothing to change the second time');
});

test('createPrivateFile creates a 0600 file and keeps an existing one', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-modes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'keel.db');
  createPrivateFile(path);
  assert.equal(mode(path), '600');
  writeFileSync(path, 'data');
  createPrivateFile(path);
  assert.equal(statSync(path).size, 4);
});
