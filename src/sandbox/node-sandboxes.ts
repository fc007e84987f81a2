// This node's sandbox plane: one SandboxManager shared by every built-in tool, with workspaces
// under
// <dataDir>/sandboxes and artifacts in the same store as the runs (SQLite file or Postgres), so a run's workspace
// can be rebuilt by whichever process picks the run up. The runtime attaches it at start with its
// configuration and hands it to tools through their context; what crashed Keel processes left
// behind is swept at attach (not at the first call); environments are released when their run
// ends, and everything at close(). It reads no configuration of its own and keeps no
// process-global state.
import { join, resolve } from 'node:path';
import type { KeelConfig } from '../config/config.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import { ImageCache } from './images/image-cache.ts';
import { openArtifactStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { egressNarrowingsFrom } from './egress/egress-narrowings.ts';
import { EgressProxy, type EgressRecord, type RevealSecret } from './egress/egress-proxy.ts';
import { releaseEnvironmentsOnRunEnd } from './run-endings.ts';
import {
  type EnvironmentCounts,
  type EnvironmentTime,
  type SandboxLifecycleEvent,
  SandboxManager,
} from './sandbox-manager.ts';
import { sharedSpaceFrom } from './shared-space-reader.ts';
import { sweepStaleSandboxes } from './stale-sweep.ts';

export interface NodeSandboxes {
  /** The node's data directory, absolute. */
  readonly dataDir: string;
  /**
   * The node's sandbox manager, created on first use (nothing is opened until a sandboxed tool
   * first runs).
   */
  manager(): SandboxManager;
  /** The manager's environments by state, or undefined before it was first used. */
  environmentCounts(): EnvironmentCounts | undefined;
  close(): Promise<void>;
}

export interface NodeSandboxesOptions {
  /**
   * Memory-time of environments as it accrues (the runtime feeds
   * keel_sandbox_environment_gib_seconds_total).
   */
  onEnvironmentTime?: (time: EnvironmentTime) => void;
  /** Each environment start and reclaim (the runtime feeds the keel_sandbox_* lifecycle metrics). */
  onLifecycle?: (event: SandboxLifecycleEvent) => void;
  /** Each connection through the node's egress proxy, when it ends (the runtime audits and counts it). */
  onEgress?: (record: EgressRecord) => void;
  /** The current value of a tenant's `secret:NAME` (the runtime's secret vault). */
  revealSecret?: RevealSecret;
}

function artifactStoreFor(config: KeelConfig): ArtifactStore {
  return openArtifactStore({ databaseUrl: config.databaseUrl, dataDir: resolve(config.dataDir) });
}

/** The node's image cache: the configured image directory, else `<dataDir>/images`. */
export function imageCacheFor(config: KeelConfig): ImageCache {
  return new ImageCache({
    dir: resolve(config.imagesDir ?? join(config.dataDir, 'images')),
    mirror: config.imageMirror,
    buildWaitMs: config.imageBuildWaitMs,
  });
}

/**
 * Called by the runtime at start, with the configuration it runs under (which may override the
 * environment's).
 */
export function attachNodeSandboxes(
  store: Pick<Store, 'onChange' | 'getTenant' | 'getRun' | 'listSharedFiles' | 'readSharedFile'>,
  config: KeelConfig,
  options: NodeSandboxesOptions = {},
): NodeSandboxes {
  const dataDir = resolve(config.dataDir);
  const root = join(dataDir, 'sandboxes');
  // At start: a crashed predecessor's sandboxes must not wait for this node's first sandbox call.
  const swept = sweepStaleSandboxes(root).catch(() => undefined);
  let shared: { manager: SandboxManager; artifacts: ArtifactStore; images: ImageCache } | undefined;
  let closed = false;
  const unbind = releaseEnvironmentsOnRunEnd(store, () => shared?.manager);
  return {
    dataDir,
    manager() {
      if (closed)
        throw new KeelError(
          'sandbox_unavailable',
          'this node is stopping: its sandboxes are closed',
        );
      if (shared === undefined) {
        const artifacts = artifactStoreFor(config);
        const images = imageCacheFor(config);
        shared = {
          manager: new SandboxManager({
            root,
            artifacts,
            swept,
            images,
            onEnvironmentTime: options.onEnvironmentTime,
            onLifecycle: options.onLifecycle,
            egress: new EgressProxy({
              onRecord: options.onEgress ?? (() => undefined),
              revealSecret: options.revealSecret ?? noSecrets,
            }),
            ...(options.revealSecret === undefined ? {} : { revealSecret: options.revealSecret }),
            egressNarrowings: egressNarrowingsFrom(store),
            sharedSpace: sharedSpaceFrom(store),
          }),
          artifacts,
          images,
        };
      }
      return shared.manager;
    },
    environmentCounts: () => shared?.manager.environmentCounts(),
    async close() {
      closed = true;
      unbind();
      await swept;
      const current = shared;
      shared = undefined;
      if (current === undefined) return;
      await current.manager.close();
      await current.images.close();
      await current.artifacts.close?.();
    },
  };
}

async function noSecrets(): Promise<string> {
  throw new KeelError('secrets_unconfigured', 'this node was started without secrets');
}
