// A circuit breaker per provider endpoint: counts outcomes over a sliding window of recent calls
// and opens on N consecutive failures or a failure ratio; after `openMs` it lets one probe through
// (half-open) and closes when the probe succeeds. It must never let more than one probe out at a
// time, and never reads the wall clock itself.
import type { Clock } from '../domain/clock.ts';
import { BREAKER_STATUS, transition, type BreakerStatus } from './breaker-state.ts';

export interface BreakerSettings {
  /** Consecutive failures that open the breaker. */
  consecutiveFailures: number;
  /**
   * Failure ratio over the last `windowCalls` calls that opens it (with at least `minCalls` calls).
   */
  failureRatio: number;
  windowCalls: number;
  minCalls: number;
  /** How long it stays open before letting a probe through. */
  openMs: number;
}

/** How often a call waiting on a half-open breaker (its probe still out) looks again. */
export const BREAKER_PROBE_POLL_MS = 100;

export const BREAKER_DEFAULTS: BreakerSettings = {
  consecutiveFailures: 5,
  failureRatio: 0.5,
  windowCalls: 20,
  minCalls: 10,
  openMs: 5_000,
};

export type Admission = { admitted: true; probe: boolean } | { admitted: false; retryInMs: number };

export class CircuitBreaker {
  readonly settings: BreakerSettings;
  readonly #clock: Clock;
  #status: BreakerStatus = BREAKER_STATUS.closed;
  #openedAt = 0;
  #consecutive = 0;
  #outcomes: boolean[] = [];
  #probeOut = false;
  /** Times the breaker opened, for metrics and tests. */
  opened = 0;

  readonly #onTransition: ((status: BreakerStatus) => void) | undefined;

  /** `onTransition` hears every status change (telemetry's breaker-state gauge). */
  constructor(
    settings: BreakerSettings,
    clock: Clock,
    onTransition?: (status: BreakerStatus) => void,
  ) {
    this.settings = settings;
    this.#clock = clock;
    this.#onTransition = onTransition;
  }

  get status(): BreakerStatus {
    this.#coolDownIfDue();
    return this.#status;
  }

  /**
   * Milliseconds until a call may be admitted: the rest of the open period, a poll while a probe is
   * out, else 0.
   */
  retryInMs(): number {
    const status = this.status;
    if (status === 'half_open') return this.#probeOut ? BREAKER_PROBE_POLL_MS : 0;
    if (status !== 'open') return 0;
    return Math.max(0, this.#openedAt + this.settings.openMs - this.#clock.now());
  }

  /** Asks to send one call; a half-open breaker admits only one probe at a time. */
  admit(): Admission {
    const status = this.status;
    if (status === 'closed') return { admitted: true, probe: false };
    if (status === 'half_open' && !this.#probeOut) {
      this.#probeOut = true;
      return { admitted: true, probe: true };
    }
    return { admitted: false, retryInMs: this.retryInMs() };
  }

  /** Whether `admit` would succeed now, without taking the probe. */
  wouldAdmit(): boolean {
    const status = this.status;
    return status === 'closed' || (status === 'half_open' && !this.#probeOut);
  }

  succeeded(probe: boolean): void {
    this.#record(true);
    this.#consecutive = 0;
    if (probe && this.#status === 'half_open') {
      this.#probeOut = false;
      this.#status = transition(this.#status, 'probe_succeeded');
      this.#outcomes = [];
      this.#onTransition?.(this.#status);
    }
  }

  failed(probe: boolean): void {
    this.#record(false);
    this.#consecutive += 1;
    if (probe && this.#status === 'half_open') {
      this.#probeOut = false;
      this.#open('probe_failed');
      return;
    }
    if (this.#status !== 'closed') return;
    const failures = this.#outcomes.filter((ok) => !ok).length;
    const ratioTripped =
      this.#outcomes.length >= this.settings.minCalls &&
      failures / this.#outcomes.length >= this.settings.failureRatio;
    if (this.#consecutive >= this.settings.consecutiveFailures || ratioTripped) this.#open('trip');
  }

  /**
   * A probe ended without an outcome about the endpoint (cancelled, or a 4xx about the request
   * itself).
   */
  released(probe: boolean): void {
    if (probe) this.#probeOut = false;
  }

  #open(event: 'trip' | 'probe_failed'): void {
    this.#status = transition(this.#status, event);
    this.#openedAt = this.#clock.now();
    this.opened += 1;
    this.#onTransition?.(this.#status);
  }

  #coolDownIfDue(): void {
    if (this.#status === 'open' && this.#clock.now() >= this.#openedAt + this.settings.openMs) {
      this.#status = transition(this.#status, 'cool_down');
      this.#probeOut = false;
      this.#onTransition?.(this.#status);
    }
  }

  #record(ok: boolean): void {
    this.#outcomes.push(ok);
    if (this.#outcomes.length > this.settings.windowCalls) this.#outcomes.shift();
  }
}
