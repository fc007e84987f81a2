// A bounded FIFO counting semaphore with abortable acquire: caps concurrent work in a pool (a
// model, inline tools). It must never let a later caller overtake a waiting one, never grow its
// wait queue past its bound, and never keep a waiter (or its abort listener) after that waiter gave
// up. Hand-written because `p-limit` and `async-mutex` cannot withdraw a single waiter when its
// signal aborts.

interface Waiter {
  grant(): void;
  /** When it started waiting (ms since the epoch), for the pool's oldest-item age. */
  since: number;
}

/** Thrown by `acquire` when the wait queue is at its bound; callers map it to their own error. */
export class SemaphoreFullError extends Error {
  constructor(maxWaiters: number) {
    super(`semaphore wait queue is full (${maxWaiters} waiters)`);
    this.name = 'SemaphoreFullError';
  }
}

export class Semaphore {
  readonly permits: number;
  readonly maxWaiters: number;
  #available: number;
  // A Set iterates in insertion order (FIFO) and deletes an aborted waiter in O(1).
  readonly #waiters = new Set<Waiter>();

  constructor(permits: number, maxWaiters: number) {
    if (!Number.isInteger(permits) || permits < 1)
      throw new RangeError(`permits must be a positive integer, got ${permits}`);
    if (!Number.isInteger(maxWaiters) || maxWaiters < 0)
      throw new RangeError(`maxWaiters must be a non-negative integer, got ${maxWaiters}`);
    this.permits = permits;
    this.maxWaiters = maxWaiters;
    this.#available = permits;
  }

  get available(): number {
    return this.#available;
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * How long the oldest waiter has waited (ms), or null when none waits. Same shape as a telemetry
   * pool probe.
   */
  oldestWaitMs(now: number): number | null {
    const oldest = this.#waiters.values().next();
    return oldest.done === true ? null : Math.max(0, now - oldest.value.since);
  }

  depth(): number {
    return this.#waiters.size;
  }

  /**
   * Waits for a permit and returns its release function (calling it twice is harmless). Rejects
   * with `signal.reason` if `signal` aborts first, and with `SemaphoreFullError` if the queue is
   * full.
   * @example
   * const release = await semaphore.acquire(signal);
   * try { await work(); } finally { release(); }
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#available > 0 && this.#waiters.size === 0) {
      this.#available -= 1;
      return Promise.resolve(this.#releaser());
    }
    if (this.#waiters.size >= this.maxWaiters)
      return Promise.reject(new SemaphoreFullError(this.maxWaiters));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        since: Date.now(),
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.#releaser());
        },
      };
      this.#waiters.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release();
    };
  }

  // Hands the permit straight to the oldest waiter, so a caller arriving now cannot barge ahead of
  // it.
  #release(): void {
    const next = this.#waiters.values().next();
    if (next.done === true) {
      this.#available += 1;
      return;
    }
    this.#waiters.delete(next.value);
    next.value.grant();
  }
}
