// The commits section against hand-computed cases, and its monotonicity: a bigger batch never costs
// more commit time and never loses less work in a crash.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { close, commits as commitsArb } from './arbitraries.test.ts';
import { planCommits } from './commits.ts';

describe('planCommits', () => {
  it('computes commit time, total time and worst redone work per batch size', () => {
    // 10,000 requests of 2 ms work; a commit costs 4 ms + 0.05 ms per record.
    const r = planCommits({
      requests: 10_000,
      workMs: 2,
      commitFixedMs: 4,
      perRecordMs: 0.05,
      batchSizes: [1, 10, 50, 100, 500],
    });
    const [one, ten, fifty, hundred, five] = r.batchSizes;
    close(one!.batches.value, 10_000); // ceil(10000 ÷ 1)
    close(one!.commitMs.value, 40_500); // 10000 × 4 + 10000 × 0.05
    close(one!.totalMs.value, 60_500); // 10000 × 2 + 40500
    close(one!.worstRedoneWorkMs.value, 2); // 1 × 2
    close(ten!.commitMs.value, 4_500); // 1000 × 4 + 500
    close(fifty!.totalMs.value, 21_300); // 20000 + 200 × 4 + 500
    close(hundred!.totalMs.value, 20_900); // 20000 + 100 × 4 + 500
    close(five!.totalMs.value, 20_580); // 20000 + 20 × 4 + 500
    close(five!.worstRedoneWorkMs.value, 1_000); // 500 × 2
    assert.equal(r.fastestBatchSize.value, 500);
    assert.equal(r.recommendedBatchSize.value, 50); // smallest with total ≤ 20580 × 1.05 = 21609
    assert.match(
      r.recommendation,
      /^Commit in batches of 50: 21,300 ms in all \(the fastest, 500, takes 20,580 ms\), and a crash redoes at most 100 ms of work\.$/,
    );
  });

  it('a partial last batch still costs a whole commit; a batch bigger than the work redoes only the work', () => {
    const r = planCommits({
      requests: 25,
      workMs: 3,
      commitFixedMs: 10,
      perRecordMs: 1,
      batchSizes: [10, 100],
    });
    close(r.batchSizes[0]!.batches.value, 3); // ceil(25 ÷ 10)
    close(r.batchSizes[0]!.commitMs.value, 55); // 3 × 10 + 25 × 1
    close(r.batchSizes[1]!.worstRedoneWorkMs.value, 75); // min(100, 25) × 3
  });

  it('no requests: nothing to commit', () => {
    const r = planCommits({
      requests: 0,
      workMs: 3,
      commitFixedMs: 10,
      perRecordMs: 1,
      batchSizes: [7, 3],
    });
    for (const b of r.batchSizes) close(b.totalMs.value, 0);
    assert.equal(r.fastestBatchSize.value, 3); // a tie goes to the smaller batch
  });
});

describe('planCommits properties', () => {
  it('a bigger batch never costs more commit time and never redoes less work', () => {
    fc.assert(
      fc.property(
        commitsArb(),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        (input, a, b) => {
          const [small, big] = a <= b ? [a, b] : [b, a];
          const [s, l] = planCommits({ ...input, batchSizes: [small, big] }).batchSizes;
          assert.ok(l!.commitMs.value <= s!.commitMs.value);
          assert.ok(l!.worstRedoneWorkMs.value >= s!.worstRedoneWorkMs.value);
          assert.ok(s!.totalMs.value >= input.requests * input.workMs);
        },
      ),
    );
  });
});
