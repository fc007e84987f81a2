// Done-when (routing): the warm-cache replica wins over a faster queue when the formula says so,
// and not otherwise.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../domain/clock.ts';
import { prefixFingerprint } from './prefix-fingerprint.ts';
import { PREFIX_CACHE_TTL_MS, ReplicaStats, route } from './replica-router.ts';
import type { ChatMessage } from '../sdk/types.ts';

const estimates = { networkMs: 10, prefillMsPerKTok: 200, cachedPrefillMsPerKTok: 10 };

function conversation(systemChars: number, question: string): ChatMessage[] {
  return [
    { role: 'system', content: 'x'.repeat(systemChars) },
    { role: 'user', content: question },
  ];
}

/** Replica `warm` has served the system prompt and has `queued` calls ahead; `cold` is idle. */
function replicas(
  clock: ManualClock,
  systemChars: number,
  queued: number,
): { warm: ReplicaStats; cold: ReplicaStats } {
  const warm = new ReplicaStats('warm', 1, clock, estimates);
  const cold = new ReplicaStats('cold', 1, clock, estimates);
  warm.remember(prefixFingerprint(conversation(systemChars, 'earlier question'), []));
  warm.serviceMs = 500;
  warm.inFlight = 1;
  warm.queued = queued - 1;
  return { warm, cold };
}

describe('replica routing', () => {
  it('prefers the warm replica over an idle one when the cached prefill saves more than the queue costs', () => {
    const clock = new ManualClock();
    const { warm, cold } = replicas(clock, 40_000, 1); // ~10k tokens of shared prefix: 2000 ms uncached, 100 ms cached
    const decision = route(
      [cold, warm],
      prefixFingerprint(conversation(40_000, 'new question'), []),
    )!;
    assert.equal(decision.chosen, 'warm');
    const byName = Object.fromEntries(decision.candidates.map((c) => [c.replica, c]));
    assert.equal(byName.warm!.queueMs, 500);
    assert.equal(byName.cold!.queueMs, 0);
    assert.ok(byName.warm!.cachedTokens >= 10_000);
    assert.equal(byName.cold!.cachedTokens, 0);
    assert.ok(byName.warm!.totalMs < byName.cold!.totalMs);
  });

  it('takes the faster queue when the cache saves less than the wait', () => {
    const clock = new ManualClock();
    const { warm, cold } = replicas(clock, 4_000, 1); // ~1k tokens: 200 ms uncached vs 500 ms queue
    assert.equal(
      route([warm, cold], prefixFingerprint(conversation(4_000, 'new question'), []))!.chosen,
      'cold',
    );
  });

  it('takes the faster queue when the warm replica does not hold this prefix, or held it too long ago', () => {
    const clock = new ManualClock();
    const { warm, cold } = replicas(clock, 40_000, 1);
    assert.equal(
      route([warm, cold], prefixFingerprint(conversation(40_001, 'different system prompt'), []))!
        .chosen,
      'cold',
    );
    clock.advance(PREFIX_CACHE_TTL_MS);
    assert.equal(
      route([warm, cold], prefixFingerprint(conversation(40_000, 'new question'), []))!.chosen,
      'cold',
    );
  });

  it('always picks the least estimate, the earlier replica on a tie', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            queued: fc.nat(5),
            seen: fc.boolean(),
            prefill: fc.integer({ min: 1, max: 500 }),
          }),
          { minLength: 1, maxLength: 5 },
        ),
        fc.integer({ min: 10, max: 20_000 }),
        (specs, chars) => {
          const clock = new ManualClock();
          const messages = conversation(chars, 'q');
          const points = prefixFingerprint(messages, []);
          const stats = specs.map((spec, i) => {
            const r = new ReplicaStats(`r${i}`, 2, clock, {
              networkMs: 5,
              prefillMsPerKTok: spec.prefill,
              cachedPrefillMsPerKTok: 1,
            });
            r.queued = spec.queued;
            if (spec.seen) r.remember(points);
            return r;
          });
          const decision = route(stats, points)!;
          const totals = decision.candidates.map((c) => c.totalMs);
          const best = Math.min(...totals);
          assert.equal(decision.chosen, decision.candidates[totals.indexOf(best)]!.replica);
        },
      ),
    );
  });

  it('learns prefill rates from measured time to first token', () => {
    const replica = new ReplicaStats('r', 1, new ManualClock(), {
      networkMs: 10,
      prefillMsPerKTok: 100,
    });
    for (let i = 0; i < 50; i += 1)
      replica.observe({
        serviceMs: 300,
        firstTokenMs: 410,
        inputTokens: 2_000,
        cachedInputTokens: 0,
      });
    assert.ok(Math.abs(replica.prefillMsPerKTok - 200) < 1, String(replica.prefillMsPerKTok));
    assert.ok(Math.abs(replica.serviceMs - 300) < 1);
  });
});
