// The restart section against hand-computed cases — backlog λ·Tₛ, drain λ·Tₛ/(μ − λ) or never — and
// its monotonicity: a slower start never shortens the drain, a faster service never lengthens it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { amount, close, restart as restartArb } from './arbitraries.test.ts';
import { planRestart } from './restart.ts';

describe('planRestart', () => {
  it('computes the backlog at ready and its drain time', () => {
    const r = planRestart({ arrivalPerSec: 2, serviceRatePerSec: 2.5, startupSeconds: 40 });
    close(r.backlogAtReady.value, 80); // 2/s × 40 s
    assert.equal(r.drains.value, true);
    close(r.drainSeconds.value, 160); // 80 ÷ (2.5 − 2)
    close(r.recoverySeconds.value, 200); // 40 + 160
    assert.equal(
      r.drainSeconds.formula,
      'backlogAtReady ÷ (serviceRatePerSec − arrivalPerSec) = 80 ÷ (2.5 − 2)',
    );
  });

  it('never drains when the service cannot outpace arrivals', () => {
    for (const serviceRatePerSec of [2, 1.5]) {
      const r = planRestart({ arrivalPerSec: 2, serviceRatePerSec, startupSeconds: 40 });
      assert.equal(r.drains.value, false);
      assert.equal(r.drainSeconds.value, Number.POSITIVE_INFINITY);
      assert.match(r.drainSeconds.formula, /^never/);
      assert.match(r.recommendation, /never drains/);
    }
  });

  it('nothing arriving: nothing to drain, even with no service', () => {
    const r = planRestart({ arrivalPerSec: 0, serviceRatePerSec: 0, startupSeconds: 40 });
    close(r.backlogAtReady.value, 0);
    close(r.drainSeconds.value, 0);
    close(r.recoverySeconds.value, 40);
  });
});

describe('planRestart properties', () => {
  it('a longer startup never lowers the backlog or the drain; a faster service never lengthens the drain', () => {
    fc.assert(
      fc.property(restartArb(), amount(300), amount(100), (input, slower, faster) => {
        const r = planRestart(input);
        const slow = planRestart({ ...input, startupSeconds: input.startupSeconds + slower });
        const quick = planRestart({
          ...input,
          serviceRatePerSec: input.serviceRatePerSec + faster,
        });
        assert.ok(slow.backlogAtReady.value >= r.backlogAtReady.value);
        assert.ok(slow.drainSeconds.value >= r.drainSeconds.value);
        assert.ok(quick.drainSeconds.value <= r.drainSeconds.value);
      }),
    );
  });
});
