// A manual clock for scheduler tests: time moves only when the test says so; timers fire when time passes them.
import type { Clock } from '../../src/schedules/clock.ts';

export class FakeClock implements Clock {
  #now: number;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #nextId = 1;

  constructor(start: string | number) {
    this.#now = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Moves time forward (or to an ISO instant), firing timers that fall due. */
  set(to: string | number): void {
    const target = typeof to === 'string' ? Date.parse(to) : to;
    if (target < this.#now) throw new Error('the fake clock only moves forward');
    this.#now = target;
    for (const [id, timer] of [...this.#timers]) {
      if (timer.at <= this.#now) {
        this.#timers.delete(id);
        timer.fn();
      }
    }
  }

  advance(ms: number): void {
    this.set(this.#now + ms);
  }
}
