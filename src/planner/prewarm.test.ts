// The prewarm section against hand-computed cases — E[W] = P − h·min(P, L), extra = h·G·max(0, L −
// P) — and its monotonicity: a higher hit rate or a longer lead never raises the wait; a longer
// lead never holds less memory.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { amount, close, prewarm as prewarmArb, probability } from './arbitraries.test.ts';
import { planPrewarm } from './prewarm.ts';

describe('planPrewarm', () => {
  it('computes the wait and the extra memory for each lead, and picks the smallest best lead', () => {
    const r = planPrewarm({
      prepSeconds: 20,
      leadSeconds: [0, 5, 10, 20, 30],
      hitRate: 0.7,
      memoryGiB: 2,
    });
    close(r.waitWithoutPrewarmSeconds.value, 20);
    const waits = r.leads.map((l) => l.expectedWaitSeconds.value);
    // 20 − 0.7·min(20, L): L = 0 → 20, 5 → 16.5, 10 → 13, 20 → 6, 30 → 6
    for (const [i, w] of [20, 20 - 0.7 * 5, 20 - 0.7 * 10, 20 - 0.7 * 20, 20 - 0.7 * 20].entries())
      close(waits[i]!, w, `lead ${i}`);
    const extra = r.leads.map((l) => l.extraGiBSecondsPerCall.value);
    // 0.7 × 2 × max(0, L − 20): only L = 30 holds memory early, 0.7 × 2 × 10 = 14
    for (const [i, e] of [0, 0, 0, 0, 14].entries()) close(extra[i]!, e, `lead ${i}`);
    assert.equal(r.bestLeadSeconds.value, 20); // 20 and 30 both wait 6 s; 20 is smaller
    assert.match(
      r.recommendation,
      /^Prewarm 20 s ahead: the expected wait drops from 20 s to 6 s for 0 extra GiB·s per call\./,
    );
  });

  it('with no hits prewarming changes nothing, and the smallest lead is best', () => {
    const r = planPrewarm({ prepSeconds: 8, leadSeconds: [10, 0, 5], hitRate: 0, memoryGiB: 4 });
    for (const l of r.leads) close(l.expectedWaitSeconds.value, 8); // 8 − 0·min(8, L)
    assert.equal(r.bestLeadSeconds.value, 0);
    assert.match(r.recommendation, /does not shorten the wait/);
  });
});

describe('planPrewarm properties', () => {
  it('a higher hit rate never raises the wait', () => {
    fc.assert(
      fc.property(prewarmArb(), probability(), probability(), (input, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        const lo = planPrewarm({ ...input, hitRate: low });
        const hi = planPrewarm({ ...input, hitRate: high });
        for (const [i, l] of lo.leads.entries())
          assert.ok(hi.leads[i]!.expectedWaitSeconds.value <= l.expectedWaitSeconds.value + 1e-12);
      }),
    );
  });

  it('a longer lead never raises the wait and never holds less memory', () => {
    fc.assert(
      fc.property(prewarmArb(), amount(300), amount(300), (input, a, b) => {
        const [short, long] = a <= b ? [a, b] : [b, a];
        const [s, l] = planPrewarm({ ...input, leadSeconds: [short, long] }).leads;
        assert.ok(l!.expectedWaitSeconds.value <= s!.expectedWaitSeconds.value);
        assert.ok(l!.extraGiBSecondsPerCall.value >= s!.extraGiBSecondsPerCall.value);
      }),
    );
  });

  it('the best lead has the least wait of all, and no smaller lead has it', () => {
    fc.assert(
      fc.property(prewarmArb(), (input) => {
        const r = planPrewarm(input);
        const least = Math.min(...r.leads.map((l) => l.expectedWaitSeconds.value));
        const best = r.leads.find((l) => l.leadSeconds === r.bestLeadSeconds.value)!;
        assert.equal(best.expectedWaitSeconds.value, least);
        for (const l of r.leads)
          if (l.leadSeconds < best.leadSeconds) assert.ok(l.expectedWaitSeconds.value > least);
      }),
    );
  });
});
