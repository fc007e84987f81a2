// The Postgres backend: a database shared by any number of Keel processes. Its run store and
// schedule area share the group-commit transactions; artifacts use their own pool on the same
// database; model rate windows are shared by every process (keel_reserve_rate); live events pass
// between processes through NOTIFY (live-relay.ts).
import type {
  BackendCapabilities,
  BackendFactory,
  StoreBackend,
  StoreOptions,
} from '../backend.ts';
import { PostgresLiveRelay } from './live-relay.ts';
import { PostgresArtifactStore } from './postgres-artifact-store.ts';
import { PostgresStore } from './postgres-store.ts';
import { PostgresRateWindows } from './rate-windows.ts';

export const POSTGRES_CAPABILITIES: BackendCapabilities = {
  multiProcess: true,
  sharedRateWindows: true,
};

export function postgresBackend(options: StoreOptions & { databaseUrl: string }): BackendFactory {
  const openArtifacts = () => new PostgresArtifactStore({ connectionString: options.databaseUrl });
  return {
    capabilities: POSTGRES_CAPABILITIES,
    openArtifacts,
    open(): StoreBackend {
      const runs = new PostgresStore({
        connectionString: options.databaseUrl,
        ...(options.durability !== undefined ? { durability: options.durability } : {}),
        ...(options.groupCommit !== undefined ? { groupCommit: options.groupCommit } : {}),
        ...(options.onCommitBatch !== undefined ? { onCommitBatch: options.onCommitBatch } : {}),
        ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
      });
      return {
        capabilities: POSTGRES_CAPABILITIES,
        runs,
        schedules: runs.schedules,
        archives: runs.archives,
        rateWindows: new PostgresRateWindows(runs),
        openArtifacts,
        openLiveRelay: () => new PostgresLiveRelay(options.databaseUrl),
      };
    },
  };
}
