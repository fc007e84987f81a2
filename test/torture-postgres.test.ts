// Crash torture on Postgres: 120 seeded trials against `keel server`, each on a fresh database
// (test/torture/harness.ts). Reproduce one trial: `npm run torture -- --store postgres --seed
// <seed> --trials 1`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postgresAvailable } from './support/postgres.ts';
import { runTrials, summarize } from './torture/harness.ts';

// 120 in `npm test` (a bound on the CI's length); longer runs by `npm run torture -- --trials N`.
const TRIALS = 120;

test(`crash torture (Postgres): ${TRIALS} seeded trials, zero invariant violations`, {
  // A bound for a wedged run, not a speed target: 120 trials take ~18 min on a quiet 2-core machine.
  timeout: 2_700_000,
  skip: !(await postgresAvailable()) && 'PostgreSQL is not reachable',
}, async (t) => {
  const reports = await runTrials({
    store: { kind: 'postgres' },
    firstSeed: 100_001,
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
