// What a process starts for retention and archival: its archiver loop (on the backend's archive
// area and artifact store) and the API's archive-reading view of the store. The one place the
// runtime wires the archive plane from configuration.
import type { Clock } from '../domain/clock.ts';
import type { StoreBackend } from '../store/backend.ts';
import type { Store } from '../store/store.ts';
import type { KeelMetrics } from '../telemetry/metrics.ts';
import { ArchiveReader } from './archive-reader.ts';
import { withArchiveReads } from './archive-reads.ts';
import { Archiver } from './archiver.ts';

export interface ArchivePlaneConfig {
  retentionDays: number;
  retentionRuns: number;
  archiveIntervalMs: number;
  archiveChunkPositions: number;
}

export interface ArchivePlane {
  readonly archiver: Archiver;
  /** The store as the API reads it: archived runs read back transparently. */
  readonly apiStore: Store;
  stop(): Promise<void>;
}

export function startArchivePlane(
  backend: Pick<StoreBackend, 'archives' | 'openArtifacts'>,
  store: Store,
  config: ArchivePlaneConfig,
  deps: {
    owner: string;
    clock: Clock;
    metrics?: KeelMetrics;
    log: (level: 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  },
): ArchivePlane {
  const artifacts = backend.openArtifacts();
  const archiver = new Archiver({
    store,
    archives: backend.archives,
    artifacts,
    clock: deps.clock,
    owner: deps.owner,
    defaults: {
      keepDays: config.retentionDays === 0 ? null : config.retentionDays,
      keepRuns: config.retentionRuns === 0 ? null : config.retentionRuns,
    },
    chunkPositions: config.archiveChunkPositions,
    intervalMs: config.archiveIntervalMs,
    ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }),
    log: deps.log,
  });
  archiver.start();
  return {
    archiver,
    apiStore: withArchiveReads(store, new ArchiveReader(backend.archives, artifacts)),
    async stop() {
      await archiver.stop();
      await artifacts.close?.();
    },
  };
}
