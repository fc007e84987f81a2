import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { jainIndex, percentile, relativeError } from './stats.ts';

describe('jainIndex', () => {
  it('gives the known values', () => {
    assert.equal(jainIndex([5, 5, 5, 5]), 1);
    assert.equal(jainIndex([1, 0, 0, 0]), 0.25);
    // (1 + 2 + 3)² / (3 · (1 + 4 + 9)) = 36 / 42
    assert.ok(Math.abs(jainIndex([1, 2, 3]) - 36 / 42) < 1e-12);
    assert.equal(jainIndex([]), 1);
  });

  it('lies in [1/n, 1] and ignores scale', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.001, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        (xs, k) => {
          const j = jainIndex(xs);
          assert.ok(j <= 1 + 1e-9 && j >= 1 / xs.length - 1e-9);
          assert.ok(Math.abs(jainIndex(xs.map((x) => x * k)) - j) < 1e-9);
        },
      ),
    );
  });
});

describe('percentile and relativeError', () => {
  it('take the nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(xs, 50), 50);
    assert.equal(percentile(xs, 99), 99);
    assert.equal(percentile([7], 95), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
    assert.equal(relativeError(10, 12), 0.2);
    assert.equal(relativeError(0, 0), 0);
  });
});
