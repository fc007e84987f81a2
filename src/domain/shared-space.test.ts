// Shared-space input rules: paths are relative `/`-separated segments without `.`/`..`, empty
// segments, control characters or backslashes; content is a well-formed string within the limit;
// an expected version is null or a whole number from 0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKeelError } from './keel-error.ts';
import {
  checkExpectedVersion,
  checkSharedContent,
  checkSharedPath,
  checkSharedPrefix,
  SHARED_FILE_MAX_BYTES,
  SHARED_PATH_MAX_CHARS,
} from './shared-space.ts';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return isKeelError(error) ? error.code : 'untyped';
  }
};

test('shared paths: relative segments only', () => {
  for (const good of [
    'a',
    'notes/plan.md',
    'a/b/c.txt',
    'ünï/✓',
    '.hidden',
    'a..b',
    'x'.repeat(SHARED_PATH_MAX_CHARS),
  ])
    assert.equal(checkSharedPath(good), good);
  for (const bad of [
    '',
    '/abs',
    'a/',
    'a//b',
    '.',
    '..',
    'a/../b',
    './a',
    'a\\b',
    'a\u0000b',
    'a\nb',
    '\ud800',
    'x'.repeat(SHARED_PATH_MAX_CHARS + 1),
    42,
    null,
  ])
    assert.equal(
      codeOf(() => checkSharedPath(bad)),
      'shared_path_invalid',
      JSON.stringify(bad),
    );
  assert.equal(checkSharedPrefix(undefined), '');
  assert.equal(checkSharedPrefix('notes/'), 'notes/');
  assert.equal(
    codeOf(() => checkSharedPrefix('a\u0000')),
    'shared_path_invalid',
  );
});

test('shared content and expected versions', () => {
  assert.equal(checkSharedContent(''), '');
  assert.equal(
    checkSharedContent('é'.repeat(SHARED_FILE_MAX_BYTES / 2)).length,
    SHARED_FILE_MAX_BYTES / 2,
  );
  assert.equal(
    codeOf(() => checkSharedContent('é'.repeat(SHARED_FILE_MAX_BYTES / 2 + 1))),
    'shared_file_too_large',
  );
  assert.equal(
    codeOf(() => checkSharedContent(7)),
    'shared_content_invalid',
  );
  assert.equal(
    codeOf(() => checkSharedContent('\udc00')),
    'shared_content_invalid',
  );
  assert.equal(checkExpectedVersion(null), 0);
  assert.equal(checkExpectedVersion(0), 0);
  assert.equal(checkExpectedVersion(3), 3);
  for (const bad of [undefined, -1, 1.5, '1', Number.MAX_VALUE])
    assert.equal(
      codeOf(() => checkExpectedVersion(bad)),
      'shared_version_invalid',
      String(bad),
    );
});
