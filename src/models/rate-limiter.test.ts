import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isKeelError } from '../domain/keel-error.ts';
import { ManualClock } from '../domain/clock.ts';
import { RateLimiter } from './rate-limiter.ts';

const never = new AbortController().signal;

describe('RateLimiter', () => {
  it('reserves tokens and settles them to actual usage', () => {
    const limiter = new RateLimiter(new ManualClock());
    const keys = [{ key: 'm', limits: { tpm: 1_000 } }];
    const verdict = limiter.tryReserve(keys, 800);
    assert.ok(verdict.ok);
    assert.equal(limiter.tryReserve(keys, 300).ok, false, 'the reservation holds 800 of 1000');
    verdict.reservation.settle(200);
    assert.equal(limiter.usage('m').tokens, 200);
    assert.ok(limiter.tryReserve(keys, 300).ok, 'settling freed the unused part');
  });

  it('says how long to wait for the sliding window to free enough tokens', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(clock);
    const keys = [{ key: 'm', limits: { tpm: 1_000 } }];
    assert.ok(limiter.tryReserve(keys, 600).ok);
    clock.advance(10_000);
    assert.ok(limiter.tryReserve(keys, 400).ok);
    const blocked = limiter.tryReserve(keys, 500);
    assert.equal(blocked.ok, false);
    assert.equal(!blocked.ok && blocked.waitMs, 50_000);
  });

  it('enforces RPM and concurrency, and the tightest of several keys', async () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(clock);
    const keys = [
      { key: 'model', limits: { rpm: 100 } },
      { key: 'tenant:a', limits: { rpm: 2, maxConcurrency: 1 } },
    ];
    const first = limiter.tryReserve(keys, 1);
    assert.ok(first.ok);
    const second = limiter.tryReserve(keys, 1);
    assert.equal(second.ok, false);
    assert.equal(!second.ok && second.waitMs, undefined, 'waits for a concurrent call to end');
    const waiting = limiter.reserve(keys, 1, never);
    first.reservation.settle(1);
    const third = await waiting;
    third.settle(1);
    const fourth = limiter.tryReserve(keys, 1);
    assert.equal(fourth.ok, false);
    assert.match(!fourth.ok ? fourth.reason : '', /tenant:a: 2 requests per minute/);
  });

  it('refuses a call that can never fit', () => {
    const limiter = new RateLimiter(new ManualClock());
    assert.throws(
      () => limiter.tryReserve([{ key: 'm', limits: { tpm: 100 } }], 101),
      (error) => isKeelError(error) && error.code === 'model_request_too_large',
    );
  });

  it('a late settle of an entry that already left the window does not corrupt the total', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(clock);
    const keys = [{ key: 'm', limits: { tpm: 1_000 } }];
    const slow = limiter.tryReserve(keys, 500);
    clock.advance(61_000);
    assert.equal(limiter.usage('m').tokens, 0);
    assert.ok(slow.ok);
    slow.reservation.settle(900);
    assert.equal(limiter.usage('m').tokens, 0);
  });
});
