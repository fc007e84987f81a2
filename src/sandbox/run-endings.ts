// Tears down what a run holds on this node (its sandbox environment, its browser session) when the
// run reaches a terminal status, by listening to the store's change feed (signal `ended`) instead
// of hooking the engine. A missed signal ('*' after a reconnect) is harmless: what runs still going
// hold stays, and endRun() is idempotent.
import type { Store } from '../store/store.ts';

/** Anything a run holds on the node until it ends: the sandbox manager, the browser pool. */
export interface RunEndListener {
  endRun(runId: string): Promise<void>;
}

/** `manager` may be a getter answering undefined while none exists yet in this process. */
export function releaseEnvironmentsOnRunEnd(
  store: Pick<Store, 'onChange'>,
  manager: RunEndListener | (() => RunEndListener | undefined),
): () => void {
  return store.onChange((changes) => {
    const current = typeof manager === 'function' ? manager() : manager;
    if (current === undefined) return;
    for (const change of changes) {
      if (change.signal === 'ended' && change.runId !== '*')
        void current.endRun(change.runId).catch(() => undefined);
    }
  });
}
