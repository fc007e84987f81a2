// Crash torture on SQLite: 120 seeded trials, each killing `keel dev` at a random crash point
// mid-work and checking the side-effect invariants after a restart (test/torture/harness.ts).
// Longer runs: `npm run torture -- --trials 5000`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runTrials, summarize } from './torture/harness.ts';

// 120 in `npm test` (a bound on the CI's length); longer runs by `npm run torture -- --trials N`.
const TRIALS = 120;

test(`crash torture (SQLite): ${TRIALS} seeded trials, zero invariant violations`, {
  // A bound for a wedged run, not a speed target: 120 trials take ~8 min on a quiet 2-core machine, 20 on a loaded one.
  timeout: 2_700_000,
}, async (t) => {
  const reports = await runTrials({
    store: { kind: 'sqlite' },
    firstSeed: 1,
    trials: TRIALS,
    concurrency: 2,
  });
  t.diagnostic(summarize(reports));
  assert.ok(
    reports.filter((r) => r.crashed).length >= TRIALS * 0.7,
    'most trials really crashed mid-work',
  );
  assert.deepEqual(
    reports
      .filter((r) => r.violations.length > 0)
      .map((r) => `seed ${r.seed}: ${r.violations.join('; ')}`),
    [],
  );
});
