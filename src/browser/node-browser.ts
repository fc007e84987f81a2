// This node's browser plane: one BrowserPool per process, created on the first browser action (no
// Chromium is started before), with storage states in the same artifact store as the runs, so a
// session can be rebuilt by whichever process picks its run up. The runtime attaches it at start
// and hands it to tools through their context; a run's session is reclaimed when the run leaves
// this process (the orchestrator's onRunLeft: parked, preempted, lost, ended) and, for runs ended
// elsewhere, through the store's change feed (the same hook sandbox environments use). It reads no
// configuration of its own and keeps no process-global state.
import { resolve } from 'node:path';
import type { KeelConfig } from '../config/config.ts';
import { KeelError } from '../domain/keel-error.ts';
import { releaseEnvironmentsOnRunEnd } from '../sandbox/run-endings.ts';
import type { PoolRegistry } from '../scheduling/pool-registry.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import { openArtifactStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { BrowserPool, type BrowserPoolObserver } from './browser-pool.ts';
import { reclaimReasonOf, type SessionState } from './session-state.ts';

export interface NodeBrowser {
  /** The node's browser pool, created on first use. */
  pool(): BrowserPool;
  /** Sessions by state and the oldest lease's age, or undefined before the pool was first used. */
  gauges(): { sessions: Record<SessionState, number>; oldestLeaseAgeSeconds: number } | undefined;
  /** The run left this process with `status` (the orchestrator's onRunLeft): reclaim its session. */
  runLeft(runId: string, status: string): void;
  close(): Promise<void>;
}

export function attachNodeBrowser(
  store: Pick<Store, 'onChange'>,
  config: Pick<
    KeelConfig,
    'databaseUrl' | 'dataDir' | 'browserPath' | 'browserMaxSessions' | 'browserIdleMs'
  >,
  pools: PoolRegistry,
  observer?: BrowserPoolObserver,
): NodeBrowser {
  let shared: { pool: BrowserPool; artifacts: ArtifactStore } | undefined;
  let closed = false;
  const unbind = releaseEnvironmentsOnRunEnd(store, () =>
    shared === undefined ? undefined : { endRun: (runId) => shared!.pool.release(runId, 'ended') },
  );
  return {
    pool() {
      if (closed)
        throw new KeelError(
          'browser_unavailable',
          'this node is stopping: its browser pool is closed',
        );
      if (shared === undefined) {
        const artifacts = openArtifactStore({
          databaseUrl: config.databaseUrl,
          dataDir: resolve(config.dataDir),
        });
        shared = {
          artifacts,
          pool: new BrowserPool({
            pools,
            artifacts,
            executablePath: config.browserPath,
            maxSessions: config.browserMaxSessions,
            idleMs: config.browserIdleMs,
            ...(observer === undefined ? {} : { observer }),
          }),
        };
      }
      return shared.pool;
    },
    gauges: () =>
      shared === undefined
        ? undefined
        : {
            sessions: shared.pool.counts(),
            oldestLeaseAgeSeconds: shared.pool.oldestLeaseAgeSeconds(),
          },
    runLeft(runId, status) {
      void shared?.pool.release(runId, reclaimReasonOf(status)).catch(() => undefined);
    },
    async close() {
      closed = true;
      unbind();
      const current = shared;
      shared = undefined;
      if (current === undefined) return;
      await current.pool.close();
      await current.artifacts.close?.();
    },
  };
}
