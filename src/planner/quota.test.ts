// The quota section against a hand-computed case, and properties: more active runs never use less
// of any limit, and the runs a limit admits fit under it while one more run would not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { close, quota as quotaArb } from './arbitraries.test.ts';
import { planQuota, QUOTA_LIMITS } from './quota.ts';
import type { QuotaInput } from './scenario.ts';

/**
 * 400 runs × 10 calls per minute, 6 s and 3,000 tokens a call, against 5,000 rpm, 10M tpm, 500
 * concurrent.
 */
const INPUT: QuotaInput = {
  activeRuns: 400,
  windowSeconds: 60,
  callsPerRun: 10,
  secondsPerCall: 6,
  tokensPerCall: 3000,
  rpmLimit: 5000,
  tpmLimit: 10_000_000,
  concurrencyLimit: 500,
};

describe('planQuota', () => {
  it('computes the load and finds the binding limit', () => {
    const r = planQuota(INPUT);
    close(r.requestsPerSec.value, (400 * 10) / 60); // 66.67/s
    close(r.requestsPerMin.value, 4000); // 66.67 × 60
    close(r.callsInFlight.value, 400); // Little: 66.67/s × 6 s
    close(r.tokensPerMin.value, 12_000_000); // 4000 × 3000
    close(r.limits.rpmLimit.utilization.value, 0.8); // 4000 ÷ 5000
    close(r.limits.tpmLimit.utilization.value, 1.2); // 12M ÷ 10M
    close(r.limits.concurrencyLimit.utilization.value, 0.8); // 400 ÷ 500
    assert.equal(r.binding, 'tpmLimit');
    close(r.limits.tpmLimit.maxActiveRuns.value, 333); // floor(10M ÷ (10 ÷ 60 × 60 × 3000 = 30000 per run))
    close(r.limits.rpmLimit.maxActiveRuns.value, 500); // floor(5000 ÷ 10)
    close(r.limits.concurrencyLimit.maxActiveRuns.value, 500); // floor(500 ÷ (10 ÷ 60 × 6 = 1))
    assert.match(
      r.recommendation,
      /^tpmLimit is exceeded \(120\.0%\): it admits 333 active runs against 400 planned\.$/,
    );
  });

  it('no calls: no limit binds', () => {
    const r = planQuota({ ...INPUT, callsPerRun: 0 });
    assert.equal(r.binding, null);
    assert.equal(r.limits.rpmLimit.maxActiveRuns.value, Number.POSITIVE_INFINITY);
  });
});

describe('planQuota properties', () => {
  it('more active runs never use less of any limit', () => {
    fc.assert(
      fc.property(quotaArb(), fc.integer({ min: 0, max: 1000 }), (input, more) => {
        const r = planQuota(input);
        const busier = planQuota({ ...input, activeRuns: input.activeRuns + more });
        for (const l of QUOTA_LIMITS)
          assert.ok(busier.limits[l].used.value >= r.limits[l].used.value, l);
      }),
    );
  });

  it('the runs a limit admits fit under it, and one more would not', () => {
    fc.assert(
      fc.property(quotaArb(), (input) => {
        for (const l of QUOTA_LIMITS) {
          const admits = planQuota(input).limits[l].maxActiveRuns.value;
          if (!Number.isFinite(admits) || admits > 1e9) continue;
          assert.ok(
            planQuota({ ...input, activeRuns: admits }).limits[l].utilization.value <= 1 + 1e-9,
            `${l} at ${admits}`,
          );
          assert.ok(
            planQuota({ ...input, activeRuns: admits + 1 }).limits[l].utilization.value > 1 - 1e-9,
            `${l} at ${admits + 1}`,
          );
        }
      }),
    );
  });
});
