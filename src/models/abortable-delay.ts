// A timer that an AbortSignal cancels: used for simulated latency and retry backoff.
// It must never outlive an abort: the timer is cleared and the listener removed on both paths,
// so a cancelled call leaves nothing on the event loop.

/**
 * Resolves after `ms`, or rejects with `signal.reason` as soon as `signal` aborts.
 * Hand-written rather than `node:timers/promises` because that rejects with a generic `AbortError`
 * (the reason only as `cause`); callers here must see the reason itself, e.g. a `KeelError('cancelled')`.
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
