// The pause section against hand-computed cases and its monotonicity: a longer idle gap never frees
// less memory or adds more delay, and once pausing pays it keeps paying for longer gaps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { close, pause as pauseArb } from './arbitraries.test.ts';
import { planPause } from './pause.ts';
import type { PauseInput } from './scenario.ts';

/**
 * 2 GiB, idle 6 s, pause 0.5 s/GiB, resume 0.25 s/GiB, 0.0000012 per GiB·s, 0.000002 per pause +
 * resume.
 */
const BASE: PauseInput = {
  memoryGiB: 2,
  idleSeconds: 6,
  pauseSecondsPerGiB: 0.5,
  resumeSecondsPerGiB: 0.25,
  pricePerGiBSecond: 0.0000012,
  transitionCost: 0.000002,
};

describe('planPause', () => {
  it('pays when the freed GiB·s are worth more than the transition', () => {
    const r = planPause(BASE);
    close(r.transitionSeconds.value, 1.5); // 2 GiB × (0.5 + 0.25) s/GiB
    close(r.freedSeconds.value, 4.5); // 6 − 1.5
    close(r.gibSecondsSaved.value, 9); // 2 × 4.5
    close(r.savedCost.value, 0.0000108); // 0.0000012 × 9
    close(r.netSaving.value, 0.0000088); // 0.0000108 − 0.000002
    assert.equal(r.pays.value, true); // 0.0000108 > 0.000002
    close(r.addedDelaySeconds.value, 0); // the gap outlasts both transitions
    close(r.breakEvenIdleSeconds.value, 1.5 + 0.000002 / 0.0000024); // 1.5 + 0.8333 = 2.3333 s
    assert.match(r.recommendation, /^Pause: it saves 0\.0000088 net/);
  });

  it('a gap shorter than pause + resume frees nothing and delays the next tool call', () => {
    const r = planPause({ ...BASE, idleSeconds: 1 });
    close(r.freedSeconds.value, 0); // max(0, 1 − 1.5)
    assert.equal(r.pays.value, false); // 0 > 0.000002 is false
    close(r.addedDelaySeconds.value, 0.5); // 1.5 − 1
    assert.match(
      r.recommendation,
      /^Keep it resident: it pays only for idle gaps longer than 2\.333 s\. It would delay the next tool call by 0\.5 s\./,
    );
  });

  it('free memory never pays back a transition', () => {
    const r = planPause({ ...BASE, pricePerGiBSecond: 0 });
    assert.equal(r.breakEvenIdleSeconds.value, Number.POSITIVE_INFINITY);
    assert.equal(r.pays.value, false);
    assert.match(r.recommendation, /idle memory costs nothing/);
  });

  it('a free transition pays as soon as any memory is freed', () => {
    assert.equal(planPause({ ...BASE, transitionCost: 0, idleSeconds: 1.6 }).pays.value, true); // freed 0.1 s
    assert.equal(planPause({ ...BASE, transitionCost: 0, idleSeconds: 1.5 }).pays.value, false); // freed 0 s
  });
});

describe('planPause properties', () => {
  it('a longer idle gap never frees less, never delays more, and keeps paying once it pays', () => {
    fc.assert(
      fc.property(pauseArb(), fc.double({ min: 0, max: 600, noNaN: true }), (input, longer) => {
        const short = planPause(input);
        const long = planPause({ ...input, idleSeconds: input.idleSeconds + longer });
        assert.ok(long.freedSeconds.value >= short.freedSeconds.value);
        assert.ok(long.gibSecondsSaved.value >= short.gibSecondsSaved.value);
        assert.ok(long.addedDelaySeconds.value <= short.addedDelaySeconds.value);
        if (short.pays.value) assert.equal(long.pays.value, true);
      }),
    );
  });

  it('pays exactly when the idle gap is past the break-even (away from the boundary)', () => {
    fc.assert(
      fc.property(pauseArb(), (input) => {
        const r = planPause(input);
        const edge = r.breakEvenIdleSeconds.value;
        if (Math.abs(input.idleSeconds - edge) <= 1e-6 * Math.max(1, edge)) return;
        assert.equal(
          r.pays.value,
          input.idleSeconds > edge,
          `idle ${input.idleSeconds}, break-even ${edge}`,
        );
      }),
    );
  });
});
