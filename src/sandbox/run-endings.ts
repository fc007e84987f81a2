// Tears down a run's environment when the run reaches a terminal status, by listening to the
// store's change feed (signal `ended`) instead of hooking the engine. A missed signal ('*' after a
// reconnect) is harmless: environments of runs that are still going stay, and endRun() is
// idempotent.
import type { Store } from '../store/store.ts';
import type { SandboxManager } from './sandbox-manager.ts';

/** `manager` may be a getter answering undefined while no sandbox exists yet in this process. */
export function releaseEnvironmentsOnRunEnd(
  store: Pick<Store, 'onChange'>,
  manager: SandboxManager | (() => SandboxManager | undefined),
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
