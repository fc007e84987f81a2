// Chooses the backend for a process from plain options: Postgres when a connection string is given,
// otherwise the embedded SQLite file, its run store storing large values as payloads. The one place
// that tells the databases apart; everything else asks for capability flags.
import type { BackendFactory, StoreBackend, StoreOptions } from './backend.ts';
import { withPayloads } from './payload-offload.ts';
import type { ArtifactStore } from './artifact-store.ts';
import { postgresBackend } from './postgres/backend.ts';
import { sqliteBackend } from './sqlite/backend.ts';

export function selectBackend(options: StoreOptions): BackendFactory {
  const { databaseUrl } = options;
  const factory =
    databaseUrl !== undefined
      ? postgresBackend({ ...options, databaseUrl })
      : sqliteBackend(options);
  // Large values are stored as payloads on either database (issue 22): the run store every caller
  // gets resolves them transparently.
  return {
    ...factory,
    open(): StoreBackend {
      const backend = factory.open();
      return { ...backend, runs: withPayloads(backend.runs, options.payloads) };
    },
  };
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
