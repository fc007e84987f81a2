// The SQLite backend: one file under the data directory (mode 0600), one process. Its run store and schedule
// area share one connection and one group-commit transaction; artifacts live in the same file
// (their own connection). It has no shared rate windows: with one process, that process's own
// limiter is exact.
import { join } from 'node:path';
import type {
  BackendCapabilities,
  BackendFactory,
  StoreBackend,
  StoreOptions,
} from '../backend.ts';
import { createPrivateFile } from './data-dir-modes.ts';
import { SqliteArtifactStore } from './sqlite-artifact-store.ts';
import { SqliteStore } from './sqlite-store.ts';

export const SQLITE_FILE_NAME = 'keel.db';

export const SQLITE_CAPABILITIES: BackendCapabilities = {
  multiProcess: false,
  sharedRateWindows: false,
};

export function sqliteBackend(options: StoreOptions): BackendFactory {
  const path = join(options.dataDir, SQLITE_FILE_NAME);
  const openArtifacts = () => {
    createPrivateFile(path);
    return new SqliteArtifactStore({ path });
  };
  return {
    capabilities: SQLITE_CAPABILITIES,
    openArtifacts,
    open(): StoreBackend {
      createPrivateFile(path);
      const runs = new SqliteStore({
        path,
        ...(options.durability !== undefined ? { durability: options.durability } : {}),
        ...(options.groupCommit !== undefined ? { groupCommit: options.groupCommit } : {}),
        ...(options.onCommitBatch !== undefined ? { onCommitBatch: options.onCommitBatch } : {}),
      });
      return {
        capabilities: SQLITE_CAPABILITIES,
        runs,
        schedules: runs.schedules,
        archives: runs.archives,
        rateWindows: undefined,
        openArtifacts,
      };
    },
  };
}
