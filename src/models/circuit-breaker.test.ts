import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transition } from './breaker-state.ts';
import { BREAKER_DEFAULTS, CircuitBreaker } from './circuit-breaker.ts';
import { ManualClock } from '../domain/clock.ts';

const settings = {
  ...BREAKER_DEFAULTS,
  consecutiveFailures: 3,
  failureRatio: 0.5,
  windowCalls: 10,
  minCalls: 6,
  openMs: 1_000,
};

describe('CircuitBreaker', () => {
  it('opens after N consecutive failures, refuses calls while open, and says when to come back', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker(settings, clock);
    for (let i = 0; i < 2; i += 1) breaker.failed(false);
    assert.equal(breaker.status, 'closed');
    breaker.failed(false);
    assert.equal(breaker.status, 'open');
    clock.advance(400);
    assert.deepEqual(breaker.admit(), { admitted: false, retryInMs: 600 });
  });

  it('opens on the failure ratio over its window even without a long run of failures', () => {
    const breaker = new CircuitBreaker(settings, new ManualClock());
    for (let i = 0; i < 3; i += 1) {
      breaker.succeeded(false);
      breaker.failed(false);
    }
    assert.equal(breaker.status, 'open');
  });

  it('lets exactly one probe through when half-open; the probe decides', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker(settings, clock);
    for (let i = 0; i < 3; i += 1) breaker.failed(false);
    clock.advance(1_000);
    assert.equal(breaker.status, 'half_open');
    const probe = breaker.admit();
    assert.deepEqual(probe, { admitted: true, probe: true });
    assert.equal(breaker.admit().admitted, false, 'a second call waits for the probe');
    breaker.failed(true);
    assert.equal(breaker.status, 'open');
    clock.advance(1_000);
    assert.equal(breaker.admit().admitted, true);
    breaker.succeeded(true);
    assert.equal(breaker.status, 'closed');
    assert.equal(breaker.opened, 2);
  });

  it('frees the probe when it ends without an outcome', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker(settings, clock);
    for (let i = 0; i < 3; i += 1) breaker.failed(false);
    clock.advance(1_000);
    assert.equal(breaker.admit().admitted, true);
    breaker.released(true);
    assert.equal(breaker.admit().admitted, true);
  });

  it('refuses moves the transition table does not have', () => {
    assert.throws(() => transition('closed', 'probe_succeeded'));
    assert.throws(() => transition('open', 'trip'));
    assert.equal(transition('half_open', 'probe_failed'), 'open');
  });
});
