import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  activeFault,
  type FaultWindow,
  meanLatencyMs,
  rampScale,
  sampleLatencyMs,
  seededRandom,
} from './mock-latency.ts';

const draws = (seed: number, n: number) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => random());
};

describe('seeded latency models', () => {
  it('repeat the same draws for the same seed, in [0, 1)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (seed) => {
        const a = draws(seed, 50);
        assert.deepEqual(a, draws(seed, 50));
        assert.ok(a.every((x) => x >= 0 && x < 1));
      }),
    );
    assert.notDeepEqual(draws(1, 10), draws(2, 10));
  });

  it('keep uniform draws inside their bounds and lognormal draws positive', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (seed, a, b) => {
          const random = seededRandom(seed);
          const [minMs, maxMs] = a <= b ? [a, b] : [b, a];
          const u = sampleLatencyMs({ kind: 'uniform', minMs, maxMs }, random);
          assert.ok(u >= minMs && u <= maxMs);
          const l = sampleLatencyMs(
            { kind: 'lognormal', p50Ms: minMs + 1, p99Ms: maxMs + 1 },
            random,
          );
          assert.ok(l > 0);
        },
      ),
    );
  });

  it('give a lognormal whose sample median and 99th percentile match p50 and p99', () => {
    const random = seededRandom(42);
    const model = { kind: 'lognormal', p50Ms: 100, p99Ms: 400 } as const;
    const sample = Array.from({ length: 20_000 }, () => sampleLatencyMs(model, random)).sort(
      (x, y) => x - y,
    );
    const median = sample[10_000]!;
    const p99 = sample[19_800]!;
    assert.ok(Math.abs(median - 100) / 100 < 0.05, `median ${median}`);
    assert.ok(Math.abs(p99 - 400) / 400 < 0.1, `p99 ${p99}`);
    const mean = sample.reduce((s, x) => s + x, 0) / sample.length;
    assert.ok(Math.abs(mean - meanLatencyMs(model)) / meanLatencyMs(model) < 0.05, `mean ${mean}`);
  });

  it('ramp latency linearly between its instants and hold it after', () => {
    const ramp = { fromSeconds: 10, toSeconds: 20, fromScale: 1, toScale: 12 / 9 };
    assert.equal(rampScale(undefined, 15), 1);
    assert.equal(rampScale(ramp, 5), 1);
    assert.ok(Math.abs(rampScale(ramp, 15) - (1 + 12 / 9) / 2) < 1e-12);
    assert.equal(rampScale(ramp, 30), 12 / 9);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 100, noNaN: true }), (t) => {
        const s = rampScale(ramp, t);
        assert.ok(s >= 1 && s <= 12 / 9 + 1e-12);
      }),
    );
  });

  it('find the fault window in force, end excluded', () => {
    const windows: FaultWindow[] = [
      { kind: 'outage', fromSeconds: 5, toSeconds: 10, share: 1 },
      { kind: 'rate-limit', fromSeconds: 8, toSeconds: 12, retryAfterMs: 500, share: 1 },
    ];
    assert.equal(activeFault(windows, 4.9), undefined);
    assert.equal(activeFault(windows, 5)?.kind, 'outage');
    assert.equal(activeFault(windows, 9)?.kind, 'outage');
    assert.equal(activeFault(windows, 10)?.kind, 'rate-limit');
    assert.equal(activeFault(windows, 12), undefined);
  });
});
