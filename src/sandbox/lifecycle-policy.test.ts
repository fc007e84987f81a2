import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decideAuto } from './lifecycle-policy.ts';

const base = { memoryPricePerGiBSecond: 1, memoryGiB: 0.5, pauseFreesMemory: true };

test('auto keeps the environment resident when holding it costs less than any transition', () => {
  // 1 × 0.5 GiB × 2 s = 1 < pause 3, rebuild 5
  assert.equal(
    decideAuto({ ...base, expectedIdleSeconds: 2, pauseCost: 3, rebuildCost: 5 }).action,
    'keep',
  );
});

test('auto pauses when the hold value beats the cheaper pause', () => {
  // 1 × 0.5 × 10 = 5 > pause 3 (and > rebuild 4); pause is cheaper
  assert.equal(
    decideAuto({ ...base, expectedIdleSeconds: 10, pauseCost: 3, rebuildCost: 4 }).action,
    'pause',
  );
});

test('auto rebuilds when rebuilding is cheaper than pausing, or the tier cannot free memory by pausing', () => {
  assert.equal(
    decideAuto({ ...base, expectedIdleSeconds: 10, pauseCost: 4, rebuildCost: 3 }).action,
    'rebuild',
  );
  // a cgroup freeze frees nothing: never chosen, however cheap
  assert.equal(
    decideAuto({
      ...base,
      pauseFreesMemory: false,
      expectedIdleSeconds: 10,
      pauseCost: 0.001,
      rebuildCost: 3,
    }).action,
    'rebuild',
  );
  assert.equal(
    decideAuto({
      ...base,
      pauseFreesMemory: false,
      expectedIdleSeconds: 2,
      pauseCost: 0.001,
      rebuildCost: 3,
    }).action,
    'keep',
  );
});

test('auto transitions exactly when price × memory × idle exceeds the chosen cost', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 10, noNaN: true }),
      fc.double({ min: 0, max: 4, noNaN: true }),
      fc.double({ min: 0, max: 3600, noNaN: true }),
      fc.double({ min: 0, max: 1000, noNaN: true }),
      fc.double({ min: 0, max: 1000, noNaN: true }),
      fc.boolean(),
      (price, gib, idle, pauseCost, rebuildCost, frees) => {
        const decision = decideAuto({
          memoryPricePerGiBSecond: price,
          memoryGiB: gib,
          expectedIdleSeconds: idle,
          pauseCost,
          rebuildCost,
          pauseFreesMemory: frees,
        });
        const hold = price * gib * idle;
        const cheapest = Math.min(rebuildCost, frees ? pauseCost : Infinity);
        if (hold > cheapest) assert.notEqual(decision.action, 'keep');
        else assert.equal(decision.action, 'keep');
        if (decision.action === 'pause') assert.ok(frees && pauseCost <= rebuildCost);
      },
    ),
  );
});
