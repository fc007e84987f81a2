import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelayMs, type BackoffPolicy } from './backoff.ts';

const full: BackoffPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 1_000,
  multiplier: 2,
  jitter: 'full',
};
const equal: BackoffPolicy = { ...full, jitter: 'equal' };

test('full jitter spreads each wait over [0, ceiling) and the ceiling grows by the multiplier up to the maximum', () => {
  assert.deepEqual(
    [1, 2, 3, 4].map((a) => backoffDelayMs(full, a, () => 0)),
    [0, 0, 0, 0],
  );
  assert.deepEqual(
    [1, 2, 3, 4].map((a) => backoffDelayMs(full, a, () => 0.5)),
    [50, 100, 200, 400],
  );
  assert.equal(
    backoffDelayMs(full, 30, () => 0.999_999),
    999,
  );
  assert.equal(
    backoffDelayMs({ ...full, multiplier: 3 }, 3, () => 0.5),
    450,
  );
});

test('equal jitter waits at least half the ceiling and at most all of it', () => {
  assert.deepEqual(
    [backoffDelayMs(equal, 1, () => 0), backoffDelayMs(equal, 1, () => 1)],
    [50, 100],
  );
  assert.deepEqual(
    [backoffDelayMs(equal, 3, () => 0), backoffDelayMs(equal, 3, () => 1)],
    [200, 400],
  );
  assert.equal(
    backoffDelayMs(equal, 30, () => 1),
    1_000,
  );
});

test('attempt 0 or below waits as after the first attempt; a zero ceiling never waits', () => {
  assert.equal(
    backoffDelayMs(full, 0, () => 0.5),
    50,
  );
  assert.equal(
    backoffDelayMs({ ...full, initialDelayMs: 0 }, 5, () => 0.9),
    0,
  );
});
