// The burst section against hand-computed cases and against a call-by-call simulation of the same
// queue, and its monotonicity: more calls never shorten a wait, more cores never lengthen one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { burst as burstArb, close } from './arbitraries.test.ts';
import { planBurst } from './burst.ts';
import type { BurstInput } from './scenario.ts';

/** Call i (from 0) starts when a core frees: the earliest-free core, first come first served. */
function simulate({ calls, secondsPerCall, cores }: BurstInput) {
  const freeAt = new Array<number>(cores).fill(0);
  const waits: number[] = [];
  let done = 0;
  for (let i = 0; i < calls; i += 1) {
    const core = freeAt.indexOf(Math.min(...freeAt));
    const start = freeAt[core]!;
    waits.push(start);
    freeAt[core] = start + secondsPerCall;
    done = Math.max(done, freeAt[core]!);
  }
  return {
    mean: calls === 0 ? 0 : waits.reduce((s, w) => s + w, 0) / calls,
    max: Math.max(0, ...waits),
    done,
  };
}

describe('planBurst', () => {
  it('50 calls of 3 s on 8 cores', () => {
    const r = planBurst({ calls: 50, secondsPerCall: 3, cores: 8 });
    close(r.waves.value, 7); // ceil(50 ÷ 8)
    close(r.fullWaves.value, 6); // floor(50 ÷ 8)
    close(r.leftOver.value, 2); // 50 − 8 × 6
    close(r.meanWaitSeconds.value, 7.92); // 3 × (8 × (0 + 1 + … + 5) + 2 × 6) ÷ 50 = 3 × (120 + 12) ÷ 50
    close(r.maxWaitSeconds.value, 18); // (7 − 1) × 3
    close(r.completionSeconds.value, 21); // 7 × 3
  });

  it('fewer calls than cores: nobody waits', () => {
    const r = planBurst({ calls: 3, secondsPerCall: 5, cores: 8 });
    close(r.meanWaitSeconds.value, 0);
    close(r.maxWaitSeconds.value, 0);
    close(r.completionSeconds.value, 5);
  });

  it('no calls: all zero', () => {
    const r = planBurst({ calls: 0, secondsPerCall: 5, cores: 2 });
    assert.deepEqual(
      [r.meanWaitSeconds.value, r.maxWaitSeconds.value, r.completionSeconds.value],
      [0, 0, 0],
    );
  });
});

describe('planBurst properties', () => {
  it('matches a call-by-call simulation', () => {
    fc.assert(
      fc.property(burstArb(), (input) => {
        const r = planBurst(input);
        const s = simulate(input);
        close(r.meanWaitSeconds.value, s.mean, 'mean');
        close(r.maxWaitSeconds.value, s.max, 'max');
        close(r.completionSeconds.value, s.done, 'completion');
      }),
    );
  });

  it('more calls never shorten a wait; more cores never lengthen one', () => {
    fc.assert(
      fc.property(
        burstArb(),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 16 }),
        (input, moreCalls, moreCores) => {
          const r = planBurst(input);
          const busier = planBurst({ ...input, calls: input.calls + moreCalls });
          const wider = planBurst({ ...input, cores: input.cores + moreCores });
          for (const key of ['meanWaitSeconds', 'maxWaitSeconds', 'completionSeconds'] as const) {
            assert.ok(busier[key].value >= r[key].value - 1e-9, key);
            assert.ok(wider[key].value <= r[key].value + 1e-9, key);
          }
        },
      ),
    );
  });
});
