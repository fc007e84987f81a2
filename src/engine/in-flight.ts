// What a live run has in flight (effects being dispatched or committed, isolate turns taking
// positions): the run neither parks nor commits its end under it. It counts holds and wakes those
// waiting for none to be left; it never decides what happens then (its owner, RunExecution, does).

export class InFlight {
  #count = 0;
  #idleWaiters: Array<() => void> = [];
  readonly #onIdle: () => void;

  /**
   * `onIdle` is called each time the last hold is released, after the `idle` waiters have been
   * woken.
   */
  constructor(onIdle: () => void) {
    this.#onIdle = onIdle;
  }

  get count(): number {
    return this.#count;
  }

  /**
   * Counts one piece of work in flight until the returned function is called (once; later calls do
   * nothing).
   */
  hold(): () => void {
    this.#count++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#count--;
      if (this.#count === 0) {
        for (const wake of this.#idleWaiters.splice(0)) wake();
        this.#onIdle();
      }
    };
  }

  /**
   * Resolves when nothing is in flight, or after `timeoutMs` (a grace period) if that comes first.
   */
  idle(timeoutMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = Number.isFinite(timeoutMs) ? setTimeout(resolve, timeoutMs) : undefined;
      this.#idleWaiters.push(() => {
        if (timer !== undefined) clearTimeout(timer);
        resolve();
      });
    });
  }
}
