// The routing section against hand-computed replicas, and properties: a longer queue never lowers a
// replica's total, and moving the chosen replica's queue across its flip point moves the choice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { amount, close, routing as routingArb } from './arbitraries.test.ts';
import { planRouting } from './routing.ts';
import type { RoutingInput } from './scenario.ts';

const replica = (name: string, queueMs: number, cacheHit: number) => ({
  name,
  queueMs,
  cacheHit,
  prefillHitMs: 40,
  prefillMissMs: 600,
});
const INPUT: RoutingInput = {
  networkMs: 2,
  replicas: [replica('a', 120, 0.9), replica('b', 30, 0.1), replica('c', 60, 0.5)],
};

describe('planRouting', () => {
  it('estimates each replica and picks the least total', () => {
    const r = planRouting(INPUT);
    const [a, b, c] = r.replicas;
    close(a!.expectedPrefillMs.value, 96); // 0.9 × 40 + 0.1 × 600
    close(a!.totalMs.value, 218); // 2 + 120 + 96
    close(b!.totalMs.value, 576); // 2 + 30 + (0.1 × 40 + 0.9 × 600 = 544)
    close(c!.totalMs.value, 382); // 2 + 60 + (0.5 × 40 + 0.5 × 600 = 320)
    assert.equal(r.choice, 'a');
    close(a!.flipQueueMs.value, 284); // c's 382 − (218 − 120): a's queue may grow by 164 ms
    close(b!.flipQueueMs.value, 218 - (576 - 30)); // −328: b cannot win on queue alone
    assert.match(
      r.recommendation,
      /^Route to a \(218 ms against 382 ms on c\); that holds until its queue passes 284 ms\.$/,
    );
  });

  it('a tie goes to the replica listed first; a lone replica never flips', () => {
    assert.equal(
      planRouting({ networkMs: 0, replicas: [replica('x', 10, 0.5), replica('y', 10, 0.5)] })
        .choice,
      'x',
    );
    const alone = planRouting({ networkMs: 0, replicas: [replica('only', 10, 0)] });
    assert.equal(alone.replicas[0]!.flipQueueMs.value, Number.POSITIVE_INFINITY);
  });
});

describe('planRouting properties', () => {
  it("a longer queue never lowers that replica's total", () => {
    fc.assert(
      fc.property(routingArb(), fc.nat(), amount(1_000), (input, pick, more) => {
        const i = pick % input.replicas.length;
        const longer = structuredClone(input);
        longer.replicas[i]!.queueMs += more;
        assert.ok(
          planRouting(longer).replicas[i]!.totalMs.value >=
            planRouting(input).replicas[i]!.totalMs.value,
        );
      }),
    );
  });

  it('the chosen replica loses the choice once its queue passes the flip point, and keeps it below', () => {
    const MARGIN_MS = 1;
    fc.assert(
      fc.property(routingArb(), (input) => {
        const r = planRouting(input);
        const i = input.replicas.findIndex((x) => x.name === r.choice);
        const flip = r.replicas[i]!.flipQueueMs.value;
        if (!Number.isFinite(flip)) return;
        const at = (queueMs: number) => {
          const moved = structuredClone(input);
          moved.replicas[i]!.queueMs = queueMs;
          return planRouting(moved).choice;
        };
        assert.notEqual(at(flip + MARGIN_MS), r.choice);
        if (flip - MARGIN_MS >= 0) assert.equal(at(flip - MARGIN_MS), r.choice);
      }),
    );
  });
});
