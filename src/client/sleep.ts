// An abortable wait for keel/client's backoffs: browser-safe (setTimeout, no node:timers), and an
// abort rejects at once with the signal's reason and clears the timer, so nothing is left pending.

/** Resolves after `ms`, or rejects with `signal.reason` as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
