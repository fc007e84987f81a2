// This process's sandbox node: one SandboxManager shared by every built-in tool, with workspaces under
// <dataDir>/sandboxes and artifacts in the same store as the runs (SQLite file or Postgres), so a run's workspace
// can be rebuilt by whichever process picks the run up. The runtime attaches it at start (run endings release
// environments) and closes it at stop; tools created before that find it lazily.
import { join, resolve } from 'node:path';
import type { KeelConfig } from '../config/config.ts';
import { loadConfig } from '../config/config.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import { openArtifactStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { releaseEnvironmentsOnRunEnd } from './run-endings.ts';
import { SandboxManager } from './sandbox-manager.ts';

let shared: { manager: SandboxManager; artifacts: ArtifactStore } | undefined;
/** The runtime's configuration (it may override the environment's, e.g. `keel dev --data`). */
let configured: KeelConfig | undefined;

function create(config: KeelConfig): { manager: SandboxManager; artifacts: ArtifactStore } {
  const artifacts = openArtifactStore({ databaseUrl: config.databaseUrl, dataDir: resolve(config.dataDir) });
  return { manager: new SandboxManager({ root: join(resolve(config.dataDir), 'sandboxes'), artifacts }), artifacts };
}

/** The process's sandbox manager, created from the configuration on first use. */
export function nodeSandboxManager(): SandboxManager {
  shared ??= create(configured ?? loadConfig().config);
  return shared.manager;
}

/**
 * Called by the runtime at start: environments are released when their run ends, and everything at close().
 * Nothing is opened until a sandboxed tool first runs.
 */
export function attachNodeSandboxes(store: Pick<Store, 'onChange'>, config: KeelConfig): { close(): Promise<void> } {
  configured = config;
  const unbind = releaseEnvironmentsOnRunEnd(store, () => shared?.manager);
  return {
    async close() {
      unbind();
      const current = shared;
      shared = undefined;
      configured = undefined;
      if (current === undefined) return;
      await current.manager.close();
      await current.artifacts.close?.();
    },
  };
}
