import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs, WEBHOOK_BACKOFF_MAX_MS } from './webhook-notifier.ts';

test('webhook backoff doubles from 1 s with jitter in [half, full] and is capped', () => {
  assert.deepEqual([backoffMs(1, () => 0), backoffMs(1, () => 1)], [500, 1_000]);
  assert.deepEqual([backoffMs(3, () => 0), backoffMs(3, () => 1)], [2_000, 4_000]);
  assert.equal(
    backoffMs(30, () => 1),
    WEBHOOK_BACKOFF_MAX_MS,
  );
});
