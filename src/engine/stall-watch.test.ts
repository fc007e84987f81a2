import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKeelError } from '../domain/keel-error.ts';
import { PROGRESS_MAX_BYTES, checkProgress } from './stall-watch.ts';

test('checkProgress: a JSON copy of the state, or progress_too_large past its limit', () => {
  const state = { phase: 'x', at: new Date(0), list: [1, 'two'] };
  assert.deepEqual(checkProgress(state), {
    phase: 'x',
    at: '1970-01-01T00:00:00.000Z',
    list: [1, 'two'],
  });
  assert.equal(checkProgress(undefined), null);
  assert.equal(
    checkProgress('a'.repeat(PROGRESS_MAX_BYTES - 2)),
    'a'.repeat(PROGRESS_MAX_BYTES - 2),
  );
  assert.throws(
    () => checkProgress('é'.repeat(PROGRESS_MAX_BYTES / 2)),
    (error: unknown) => isKeelError(error) && error.code === 'progress_too_large',
  );
});
