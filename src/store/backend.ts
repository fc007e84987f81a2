// What opening a database gives a process: the run store, the schedule store area in the same
// database and transactions, the artifact store and (where processes share the database) the shared
// model rate windows, with the named capability flags callers branch on. Callers never ask which
// database it is, only what it can do.
import type { LiveRelay } from '../domain/live-events.ts';
import type { ArchiveStore } from './archive-store.ts';
import type { ArtifactStore } from './artifact-store.ts';
import type { PayloadLimits } from './payload-offload.ts';
import type { RateWindows } from './rate-windows.ts';
import type { ScheduleStore } from './schedule-store.ts';
import type {
  CommitBatchListener,
  Durability,
  GroupCommit,
  Store,
  StoreCapabilities,
} from './store.ts';

export interface BackendCapabilities extends StoreCapabilities {
  /**
   * Model RPM/TPM windows are kept in the database and shared by every process using it
   * (`rateWindows` is set). Without it, each process's own limiter is exact: no other process
   * shares the store.
   */
  sharedRateWindows: boolean;
}

export interface StoreBackend {
  readonly capabilities: BackendCapabilities;
  readonly runs: Store;
  readonly schedules: ScheduleStore;
  /** Retention and archival records, in the same database and transactions. */
  readonly archives: ArchiveStore;
  /** Set exactly when `capabilities.sharedRateWindows`. */
  readonly rateWindows: RateWindows | undefined;
  /** Opens an artifact store on this database (its own connection; the caller closes it). */
  openArtifacts(): ArtifactStore;
  /**
   * Opens the relay of live events between the processes sharing this database (its own
   * connections; the caller starts and closes it). Absent where no other process shares it.
   */
  openLiveRelay?(): LiveRelay & { start(): Promise<void> };
}

/**
 * How to open a backend: plain options, so the store knows nothing of the process's configuration.
 */
export interface StoreOptions {
  /**
   * A PostgreSQL connection string: the distributed store. Without it, the embedded SQLite store
   * under `dataDir`.
   */
  databaseUrl?: string | undefined;
  /** Directory of the SQLite file (`keel.db`); unused with `databaseUrl`. */
  dataDir: string;
  durability?: Durability;
  groupCommit?: GroupCommit;
  /** Told after each write transaction (the process's commit-batch metrics). */
  onCommitBatch?: CommitBatchListener;
  /** Postgres: connections in the run store's pool. */
  poolSize?: number;
  /** Large payloads: inline threshold and limits (defaults: DEFAULT_PAYLOAD_LIMITS). */
  payloads?: PayloadLimits;
}

/**
 * A backend chosen but not opened yet: its capabilities are known before it is (e.g. to lock a data
 * directory first).
 */
export interface BackendFactory {
  readonly capabilities: BackendCapabilities;
  open(): StoreBackend;
  /**
   * Opens an artifact store on this database without opening the run store (the sandbox node, on
   * first use).
   */
  openArtifacts(): ArtifactStore;
}
