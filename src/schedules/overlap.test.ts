import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideOverlap } from './overlap.ts';

test('every policy starts when nothing is active', () => {
  for (const policy of ['allow', 'skip', 'buffer_one', 'buffer_all', 'cancel_other'] as const) {
    assert.equal(decideOverlap(policy, { activeRuns: 0, waitingFires: 0 }), 'start', policy);
  }
});

test('with an active run: allow starts, skip skips, buffer_one buffers one then skips, buffer_all buffers, cancel_other cancels', () => {
  const busy = { activeRuns: 1, waitingFires: 0 };
  assert.equal(decideOverlap('allow', busy), 'start');
  assert.equal(decideOverlap('skip', busy), 'skip');
  assert.equal(decideOverlap('buffer_one', busy), 'buffer');
  assert.equal(decideOverlap('buffer_one', { activeRuns: 1, waitingFires: 1 }), 'skip');
  assert.equal(decideOverlap('buffer_all', { activeRuns: 1, waitingFires: 5 }), 'buffer');
  assert.equal(decideOverlap('cancel_other', busy), 'cancel_other');
});
