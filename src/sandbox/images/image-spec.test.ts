// Image specs: validation, and the stability of the content address — the same spec (in any order,
// under any name) always hashes the same, anything that changes the root filesystem changes it,
// and the hash of a fixed spec is pinned so a change to the normalisation cannot slip in unnoticed
// (it would silently orphan every cached image; bump IMAGE_RECIPE_VERSION instead).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { defineSandboxProfile } from '../profile.ts';
import { hostDebianMirror } from './apt-mirror.ts';
import { defineImage, imageHash, ImageSpecSchema } from './image-spec.ts';

const MIRROR = 'http://deb.debian.org/debian';
const spec = (input: Parameters<typeof ImageSpecSchema.parse>[0]) => ImageSpecSchema.parse(input);

test('the hash ignores the name, package order and duplicates, and file order', () => {
  const a = spec({
    name: 'a',
    packages: ['python3', 'python3-pip', 'python3'],
    files: [
      { path: '/etc/b', content: 'b' },
      { path: '/etc/a', content: 'a' },
    ],
  });
  const b = spec({
    name: 'b',
    suite: 'bookworm',
    packages: ['python3-pip', 'python3'],
    files: [
      { path: '/etc/a', content: 'a', mode: 0o644 },
      { path: '/etc/b', content: 'b' },
    ],
  });
  assert.equal(imageHash(a, MIRROR), imageHash(b, MIRROR));
  assert.equal(
    imageHash(a, MIRROR),
    imageHash(a, `${MIRROR}/`),
    'a trailing slash is the same mirror',
  );
});

test('anything that changes the root filesystem changes the hash', () => {
  const base = spec({ name: 'x', packages: ['python3'], setup: ['true'] });
  const hash = imageHash(base, MIRROR);
  const variants = [
    spec({ name: 'x', packages: ['python3', 'curl'], setup: ['true'] }),
    spec({ name: 'x', packages: ['python3'], setup: ['true', 'true'] }),
    spec({ name: 'x', packages: ['python3'], setup: ['true'], suite: 'trixie' }),
    spec({ name: 'x', packages: ['python3'], setup: ['true'], variant: 'apt' }),
    spec({
      name: 'x',
      packages: ['python3'],
      setup: ['true'],
      files: [{ path: '/a', content: '' }],
    }),
    spec({
      name: 'x',
      packages: ['python3'],
      setup: ['true'],
      files: [{ path: '/a', content: '', mode: 0o755 }],
    }),
  ];
  for (const variant of variants) assert.notEqual(imageHash(variant, MIRROR), hash);
  assert.notEqual(imageHash(base, 'http://mirror.example/debian'), hash);
  const pinnedMirror = spec({
    name: 'x',
    packages: ['python3'],
    setup: ['true'],
    mirror: 'http://mirror.example/debian',
  });
  assert.equal(imageHash(pinnedMirror, MIRROR), imageHash(base, 'http://mirror.example/debian'));
});

test('the hash of a fixed spec is pinned', {
  skip: process.arch === 'x64' ? undefined : 'pinned for amd64',
}, () => {
  const python = spec({ name: 'python', packages: ['python3', 'python3-pip', 'python3-venv'] });
  assert.equal(
    imageHash(python, MIRROR),
    '85a653f851ea87c2b6871d5aab1e55ed77a7924d545ca811871aac361ca38b62',
  );
});

test('bad specs are refused when defined', () => {
  for (const bad of [
    { name: 'bad name' },
    { name: 'x', packages: ['Python3'] },
    { name: 'x', packages: ['python3; rm -rf /'] },
    { name: 'x', files: [{ path: 'relative', content: '' }] },
    { name: 'x', files: [{ path: '/etc/../x', content: '' }] },
    { name: 'x', files: [{ path: '/etc/with space', content: '' }] },
    { name: 'x', suite: 'Bookworm' },
  ])
    assert.throws(() => ImageSpecSchema.parse(bad), { name: 'ZodError' }, JSON.stringify(bad));
  defineImage({ name: 'spec-test-twice', packages: ['a'] });
  defineImage({ name: 'spec-test-twice', packages: ['a'] });
  assert.throws(
    () => defineImage({ name: 'spec-test-twice', packages: ['b'] }),
    /two different images/,
  );
});

test('a profile takes an image on the namespace and gvisor tiers, not on the process tier', () => {
  const image = defineImage({ name: 'spec-test-profile', packages: ['python3'] });
  assert.equal(defineSandboxProfile({ name: 'p' }).image, 'host');
  assert.deepEqual(defineSandboxProfile({ name: 'p', tier: 'gvisor', image }).image, image);
  assert.throws(
    () => defineSandboxProfile({ name: 'p', tier: 'process', image }),
    /needs tier namespace or gvisor/,
  );
});

test("the default mirror is the host's Debian apt source", () => {
  const etc = mkdtempSync(join(tmpdir(), 'keel-apt-'));
  mkdirSync(join(etc, 'sources.list.d'));
  writeFileSync(
    join(etc, 'sources.list.d', 'debian.sources'),
    [
      'Types: deb',
      'URIs: http://mirror.example/debian-security',
      'Suites: bookworm-security',
      '',
      'Types: deb',
      'URIs: http://mirror.example/debian/',
      'Suites: bookworm bookworm-updates',
      'Components: main',
    ].join('\n'),
  );
  writeFileSync(
    join(etc, 'sources.list.d', 'other.list'),
    'deb https://vendor.example/apt stable main\n',
  );
  assert.equal(hostDebianMirror(etc), 'http://mirror.example/debian');
  assert.equal(hostDebianMirror(join(etc, 'missing')), 'http://deb.debian.org/debian');
});
