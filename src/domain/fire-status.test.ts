import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIRE_STATUSES, TRANSITIONS, isWaiting, transition } from './fire-status.ts';

test('fire transitions: decided fires are final except that backfill reopens missed and skipped ones', () => {
  assert.equal(transition('pending', 'buffer'), 'buffered');
  assert.equal(transition('buffered', 'start'), 'started');
  assert.equal(transition('cancelling_other', 'start'), 'cancelled_other');
  assert.equal(transition('cancelling_other', 'supersede'), 'skipped');
  assert.equal(transition('buffered', 'supersede'), 'skipped');
  assert.equal(transition('missed', 'backfill'), 'pending');
  assert.throws(
    () => transition('started', 'start'),
    /illegal fire transition: started --start-->/,
  );
  assert.throws(() => transition('cancelled_other', 'backfill'), /illegal/);
  assert.throws(() => transition('buffered', 'miss'), /illegal/);
  for (const status of FIRE_STATUSES) {
    assert.equal(isWaiting(status), Object.keys(TRANSITIONS[status]).includes('start'), status);
  }
});
