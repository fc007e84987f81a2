// Chooses the backend for a process from plain options: Postgres when a connection string is given,
// otherwise the embedded SQLite file. The one place that tells the databases apart; everything else
// asks for capability flags.
import type { BackendFactory, StoreOptions } from './backend.ts';
import type { ArtifactStore } from './artifact-store.ts';
import { postgresBackend } from './postgres/backend.ts';
import { sqliteBackend } from './sqlite/backend.ts';

export function selectBackend(options: StoreOptions): BackendFactory {
  const { databaseUrl } = options;
  return databaseUrl !== undefined
    ? postgresBackend({ ...options, databaseUrl })
    : sqliteBackend(options);
}

/**
 * An artifact store on the process's database, without opening its run store (the sandbox node
 * opens it on first use).
 */
export function openArtifactStore(
  options: Pick<StoreOptions, 'databaseUrl' | 'dataDir'>,
): ArtifactStore {
  return selectBackend(options).openArtifacts();
}
