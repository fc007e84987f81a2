// Wraps a store so that what the engine does through it becomes telemetry: claims teach run labels,
// commits become metrics and spans (commit-observer.ts), releases forget. Every other method passes
// through untouched, so the wrapper follows the Store interface as other planes extend it. It never
// changes what the store does or returns.
import type { RunRecord } from '../domain/records.ts';
import type { ClaimRequest, CommitOutcome, RunCommit, Store } from '../store/store.ts';
import { isKeelError } from '../domain/keel-error.ts';
import { observeCommit } from './commit-observer.ts';
import { forgetRun, rememberRun } from './run-labels.ts';
import type { Telemetry } from './telemetry.ts';

/**
 * The store with telemetry: use it wherever the orchestrator gets its store. A Proxy rather than a
 * class implementing Store: the interface grows as planes add methods, and a hand-written
 * pass-through would silently miss them; only the three observed methods are intercepted.
 * @example
 * const store = observeStore(new SqliteStore({ path }), telemetry);
 */
export function observeStore(store: Store, t: Telemetry): Store {
  const observed: Pick<Store, 'claimRuns' | 'commit' | 'releaseLeases'> = {
    async claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
      const runs = await store.claimRuns(request);
      for (const run of runs) rememberRun(run);
      return runs;
    },
    async commit(commit: RunCommit): Promise<CommitOutcome> {
      const submittedAt = Date.now();
      const started = performance.now();
      try {
        const outcome = await store.commit(commit);
        const batchSize = t.lastCommitBatchSize;
        t.metrics.commits.inc({ result: 'ok' });
        t.metrics.commitDuration.observe((performance.now() - started) / 1000);
        observeCommit(t, commit, { submittedAt, acknowledgedAt: Date.now(), batchSize });
        return outcome;
      } catch (error) {
        t.metrics.commits.inc({
          result: isKeelError(error) && error.code === 'stale_write' ? 'stale' : 'error',
        });
        throw error;
      }
    },
    async releaseLeases(owner: string, runIds: string[]): Promise<void> {
      await store.releaseLeases(owner, runIds);
      for (const id of runIds) forgetRun(id);
    },
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'claimRuns' || property === 'commit' || property === 'releaseLeases')
        return observed[property];
      const value: unknown = Reflect.get(target, property, target);
      // Methods run on the real store: its private fields are not reachable through the proxy.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
