// When to rebuild an environment ahead of its next call: just early enough to hide the rebuild,
// since starting earlier only holds memory. And how long a pre-warmed environment may wait for that
// call before it is released again (the run may be waiting for a human, not for its model).
/** Start this much earlier than the bare estimate, for the estimate's noise. */
export const PREWARM_MARGIN = 1.25;
export const PREWARM_HOLD_MIN_MS = 1_000;

/** Milliseconds after the environment was released at which to start rebuilding it. */
export function prewarmDelayMs(expectedIdleSeconds: number, rebuildSeconds: number): number {
  return Math.max(0, (expectedIdleSeconds - rebuildSeconds * PREWARM_MARGIN) * 1000);
}

/**
 * How long a pre-warmed environment is kept without a call: twice the expected idle time, at least
 * a second.
 */
export function prewarmHoldMs(expectedIdleSeconds: number): number {
  return Math.max(PREWARM_HOLD_MIN_MS, 2 * expectedIdleSeconds * 1000);
}
