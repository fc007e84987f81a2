// The one source of time for the planes that wait (engine, model gateway, scheduler): wall-clock
// milliseconds, timers and abortable sleeps. Production uses SYSTEM_CLOCK; tests inject ManualClock
// and move time by hours without waiting. Timers that fire at a wall-clock instant (a run's
// deadline, a parked run's wake-up, a backoff) go through it; timers that only pace work
// (heartbeats, polls, grace periods) and elapsed-time measurements use Node's timers and
// performance.now(), which is monotonic: a clock set back must not make a duration negative. It
// never supplies values replay depends on by itself: agent time is ctx.now(), recorded in the
// journal. (Agent code in an isolate reads the isolate thread's Date.now() for ctx.now(): the clock
// object cannot cross threads.)

/** A timer set through a clock: opaque, only handed back to the same clock's clearTimeout. */
export type ClockTimer = unknown;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
  /**
   * Resolves after `ms`, or rejects with `signal.reason` itself (not a generic AbortError) once
   * `signal` aborts.
   */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
  sleep: abortableDelay,
};

/**
 * Resolves after `ms`, or rejects with `signal.reason` as soon as `signal` aborts. Hand-written
 * rather than `node:timers/promises`, which rejects with a generic `AbortError` (the reason only as
 * `cause`): callers must see the reason itself, e.g. a `KeelError('cancelled')`. It never outlives
 * an abort: timer and listener are removed on both paths, so a cancelled wait leaves nothing on the
 * event loop.
 * @example
 * await abortableDelay(250, controller.signal);
 */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A clock that moves only when told: timers and sleepers fire when `advance` (or `set`) passes
 * their time.
 * @example
 * const clock = new ManualClock(0);
 * const woke = clock.sleep(1_000, signal);
 * clock.advance(1_000); // woke resolves
 */
export class ManualClock implements Clock {
  #now: number;
  #timers = new Map<number, { at: number; fire: () => void }>();
  #nextTimer = 1;

  constructor(start: number | string = 0) {
    this.#now = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const id = this.#nextTimer++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fire: fn });
    return id;
  }

  clearTimeout(timer: ClockTimer): void {
    this.#timers.delete(timer as number);
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = this.setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Moves time forward by `ms` and fires every timer and sleeper whose time has come, in the order
   * they were set.
   */
  advance(ms: number): void {
    this.set(this.#now + ms);
  }

  /** Moves time forward to an instant (epoch ms or ISO string); the clock never moves back. */
  set(to: number | string): void {
    const target = typeof to === 'string' ? Date.parse(to) : to;
    if (target < this.#now) throw new Error('a manual clock only moves forward');
    this.#now = target;
    const due = [...this.#timers].filter(([, t]) => t.at <= target);
    for (const [id, timer] of due) {
      this.#timers.delete(id);
      timer.fire();
    }
  }

  /** Timers and sleepers not fired yet. */
  get pending(): number {
    return this.#timers.size;
  }
}
