import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prewarmDelayMs, prewarmHoldMs } from './prewarm.ts';

test('pre-warming starts the rebuild time (plus margin) before the expected call, never before the release', () => {
  assert.equal(prewarmDelayMs(10, 2), 7_500);
  assert.equal(prewarmDelayMs(1, 2), 0);
  assert.equal(prewarmHoldMs(0.1), 1_000);
  assert.equal(prewarmHoldMs(30), 60_000);
});
