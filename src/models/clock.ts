// The gateway's source of time: wall-clock milliseconds and abortable sleeps. Limiters, breakers, budgets and the
// router read time only through it, so tests can drive a minute of load without waiting a minute.
// It must never be used for journaled values (agent time comes from ctx.now()).
import { abortableDelay } from './abortable-delay.ts';

export interface Clock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => abortableDelay(ms, signal),
};

/**
 * A clock that moves only when told: sleepers wake when `advance` passes their time. For tests and simulations.
 * @example
 * const clock = new ManualClock(0);
 * const woke = clock.sleep(1_000, signal);
 * clock.advance(1_000); // woke resolves
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: Array<{ at: number; wake: () => void }> = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const sleeper = { at: this.#now + Math.max(0, ms), wake: () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      } };
      const onAbort = (): void => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Moves time forward and wakes every sleeper whose time has come. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.at <= this.#now);
    this.#sleepers = this.#sleepers.filter((s) => s.at > this.#now);
    for (const sleeper of due) sleeper.wake();
  }

  get sleepers(): number {
    return this.#sleepers.length;
  }
}
