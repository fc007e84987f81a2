// The dashboard timeline's attempts lane (web/src/timeline-segments.ts): each claim of a run is a
// band, the one after an expired lease is a recovery, and an effect re-run because its run was
// recovered is told apart from the effect's own retries (a recovery is never a retry).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptBands, effectReruns, type RunAttempt } from '../web/src/timeline-segments.ts';

const at = (ms: number) => new Date(ms).toISOString();
const attempts: RunAttempt[] = [
  {
    number: 1,
    worker: 'w1',
    leaseToken: 1,
    startedAt: at(1_000),
    endedAt: at(4_000),
    ending: 'lease_expired',
  },
  {
    number: 2,
    worker: 'w2',
    leaseToken: 2,
    startedAt: at(9_000),
    endedAt: null,
    ending: 'running',
  },
];

test('attempts become bands; the one after an expired lease is a recovery; a running one grows until now', () => {
  assert.deepEqual(
    attemptBands(attempts, 12_000).map((b) => [b.number, b.recovery, b.from, b.to]),
    [
      [1, false, 1_000, 4_000],
      [2, true, 9_000, 12_000],
    ],
  );
});

test('an effect re-run by the recovering attempt is no retry; its own retries still are', () => {
  const rerun = { attempts: 2, fencingToken: 2, startedAt: at(9_500) };
  assert.deepEqual(effectReruns(rerun, attempts), { ownAttempts: 1, rerunAfterRecovery: true });
  const retriedToo = { attempts: 3, fencingToken: 2, startedAt: at(9_500) };
  assert.deepEqual(effectReruns(retriedToo, attempts), {
    ownAttempts: 2,
    rerunAfterRecovery: true,
  });
  const retriedBefore = { attempts: 2, fencingToken: 1, startedAt: at(2_000) };
  assert.deepEqual(effectReruns(retriedBefore, attempts), {
    ownAttempts: 2,
    rerunAfterRecovery: false,
  });
  assert.deepEqual(effectReruns({ attempts: 2, startedAt: null }, []), {
    ownAttempts: 2,
    rerunAfterRecovery: false,
  });
});
