// The recovery-tree section against a hand-computed tree (every path written out), and invariants
// over random trees: path probabilities total 1, on-time success ≤ success ≤ 1, and a more reliable
// first attempt never lowers the odds of success.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { close, probability, recoveryTree as treeArb } from './arbitraries.test.ts';
import { planRecoveryTree } from './recovery-tree.ts';
import type { RecoveryTreeInput } from './scenario.ts';

/**
 * first: 0.8, cost 1, 10 s; half its failures retry (0.5, cost 1, 10 s), half give up; deadline 15
 * s.
 */
const TREE: RecoveryTreeInput = {
  deadlineSeconds: 15,
  root: {
    name: 'first',
    cost: 1,
    seconds: 10,
    successProbability: 0.8,
    onFailure: [
      { share: 0.5, next: { name: 'retry', cost: 1, seconds: 10, successProbability: 0.5 } },
      { share: 0.5 },
    ],
  },
};

describe('planRecoveryTree', () => {
  it('lists every path with its probability, cost and time, in the order the tree is written', () => {
    const r = planRecoveryTree(TREE);
    const rows = r.paths.map((p) => [p.attempts.join(' → '), p.outcome, p.onTime]);
    assert.deepEqual(rows, [
      ['first', 'success', true],
      ['first → retry', 'success', false], // 20 s > 15 s
      ['first → retry', 'gave up', false],
      ['first', 'gave up', false],
    ]);
    const [p1, p2, p3, p4] = r.paths;
    close(p1!.probability.value, 0.8);
    close(p2!.probability.value, 0.05); // (1 − 0.8) × 0.5 × 0.5
    close(p3!.probability.value, 0.05); // (1 − 0.8) × 0.5 × (1 − 0.5)
    close(p4!.probability.value, 0.1); // (1 − 0.8) × 0.5
    close(p2!.cost.value, 2); // 1 + 1
    close(p2!.seconds.value, 20); // 10 + 10
    assert.equal(
      p2!.probability.formula,
      '(1 − p(first)) × share(first→retry) × p(retry) = (1 − 0.8) × 0.5 × 0.5',
    );
  });

  it('sums the paths into success odds and spend', () => {
    const r = planRecoveryTree(TREE);
    close(r.successProbability.value, 0.85); // 0.8 + 0.05
    close(r.onTimeSuccessProbability.value, 0.8); // only the first attempt finishes within 15 s
    close(r.expectedSpend.value, 1.1); // 0.8 × 1 + 0.05 × 2 + 0.05 × 2 + 0.1 × 1
    close(r.expectedSeconds.value, 11); // 0.8 × 10 + 0.05 × 20 + 0.05 × 20 + 0.1 × 10
    close(r.costPerSuccess.value, 1.1 / 0.85); // 1.294: failed tasks' spend is carried by the successes
    close(r.costPerOnTimeSuccess.value, 1.1 / 0.8); // 1.375
    assert.match(
      r.recommendation,
      /^85\.0% of tasks succeed, 80\.0% on time; each success costs 1\.294 and each on-time success 1\.375\. The likeliest miss gives up: first \(10\.0%\)\.$/,
    );
  });

  it('a tree that never succeeds costs infinitely much per success', () => {
    const r = planRecoveryTree({
      deadlineSeconds: 5,
      root: { name: 'doomed', cost: 3, seconds: 1, successProbability: 0 },
    });
    close(r.successProbability.value, 0);
    close(r.expectedSpend.value, 3);
    assert.equal(r.costPerSuccess.value, Number.POSITIVE_INFINITY);
    assert.equal(r.costPerOnTimeSuccess.value, Number.POSITIVE_INFINITY);
  });
});

describe('planRecoveryTree properties', () => {
  it('path probabilities total 1 and on-time success ≤ success ≤ 1', () => {
    fc.assert(
      fc.property(treeArb(), (input) => {
        const r = planRecoveryTree(input);
        close(
          r.paths.reduce((s, p) => s + p.probability.value, 0),
          1,
          'total',
        );
        assert.ok(r.onTimeSuccessProbability.value <= r.successProbability.value + 1e-12);
        assert.ok(r.successProbability.value <= 1 + 1e-9);
      }),
    );
  });

  it('a more reliable first attempt never lowers the success probability', () => {
    fc.assert(
      fc.property(treeArb(), probability(), probability(), (input, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        const at = (p: number) =>
          planRecoveryTree({ ...input, root: { ...input.root, successProbability: p } })
            .successProbability.value;
        assert.ok(at(high) >= at(low) - 1e-12);
      }),
    );
  });
});
