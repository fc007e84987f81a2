// Waits until a run is terminal or a wait runs out, woken by the event hub (the store's change
// feed), never by polling the store: the long-poll behind GET /v1/runs/:id/result and
// POST /v1/runs?wait=. It subscribes before it reads, so a run that ends between the read and the
// subscription still wakes it; it holds one listener and one timer, released on every path.
import { z } from 'zod';
import { isTerminal } from '../domain/run-status.ts';
import type { RunRecord } from '../domain/records.ts';
import type { Store } from '../store/store.ts';
import type { EventHub } from './event-hub.ts';

/**
 * The longest a result request waits, in ms: below the idle timeouts of common proxies and load
 * balancers (60 s on many), so a long-poll is answered before a middlebox cuts it.
 */
export const RESULT_WAIT_MAX_MS = 55_000;

/** A `waitMs` query parameter: how long a request may wait for its run to end. */
export const WaitMsQuery = z.coerce
  .number()
  .int()
  .min(0)
  .max(RESULT_WAIT_MAX_MS)
  .describe(
    `How long to wait for the run to end, in ms (0 to ${RESULT_WAIT_MAX_MS}); answered at once when it ends`,
  );

/**
 * The run once it is terminal, or as it stands when `waitMs` passes or `signal` aborts (the client
 * went away, the server is closing). `null` if the run no longer exists.
 */
export async function waitForTerminal(
  store: Store,
  hub: EventHub,
  runId: string,
  waitMs: number,
  signal: AbortSignal,
): Promise<RunRecord | null> {
  let changed = true;
  let wake: (() => void) | undefined;
  const nudge = (): void => {
    changed = true;
    wake?.();
  };
  const unsubscribe = hub.subscribe(runId, nudge);
  let expired = waitMs <= 0;
  const timer = setTimeout(() => {
    expired = true;
    wake?.();
  }, waitMs);
  const stop = (): void => {
    expired = true;
    wake?.();
  };
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) expired = true;
  try {
    for (;;) {
      if (changed || expired) {
        changed = false;
        const run = await store.getRun(runId);
        if (run === null || isTerminal(run.status) || expired) return run;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
    unsubscribe();
  }
}
