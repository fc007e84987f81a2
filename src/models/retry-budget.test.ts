import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../domain/clock.ts';
import { RetryBudget } from './retry-budget.ts';

describe('RetryBudget', () => {
  it('allows retries up to ratio × first attempts plus the floor, per provider', () => {
    const budget = new RetryBudget(
      { ratio: 0.1, minRetriesPerWindow: 2, windowMs: 10_000, perRun: 1_000 },
      new ManualClock(),
    );
    for (let i = 0; i < 100; i += 1) budget.firstAttempt('a');
    let allowed = 0;
    for (let i = 0; i < 100; i += 1) if (budget.tryRetry('a', undefined).allowed) allowed += 1;
    assert.equal(allowed, 12);
    assert.deepEqual(
      budget.tryRetry('b', undefined),
      { allowed: true },
      'another provider has its own budget',
    );
  });

  it('forgets attempts that left the sliding window', () => {
    const clock = new ManualClock();
    const budget = new RetryBudget(
      { ratio: 0, minRetriesPerWindow: 1, windowMs: 1_000, perRun: 1_000 },
      clock,
    );
    assert.equal(budget.tryRetry('a', undefined).allowed, true);
    assert.equal(budget.tryRetry('a', undefined).allowed, false);
    clock.advance(1_200);
    assert.equal(budget.tryRetry('a', undefined).allowed, true);
  });

  it('caps the retries of one run across its calls', () => {
    const budget = new RetryBudget(
      { ratio: 10, minRetriesPerWindow: 100, windowMs: 1_000, perRun: 2 },
      new ManualClock(),
    );
    assert.equal(budget.tryRetry('a', 'run1').allowed, true);
    assert.equal(budget.tryRetry('a', 'run1').allowed, true);
    assert.deepEqual(budget.tryRetry('a', 'run1'), { allowed: false, reason: 'run_retry_budget' });
    assert.equal(budget.tryRetry('a', 'run2').allowed, true);
  });
});
