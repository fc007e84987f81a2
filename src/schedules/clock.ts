// The scheduler's clock, injected: the system clock in production, a manual one in tests (test/support/fake-clock.ts),
// so tests move time by hours without sleeping. Nothing in src/schedules reads Date.now() directly.

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
