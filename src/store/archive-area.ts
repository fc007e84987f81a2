// The archive store area, written once for both backends (like the schedule area): its writes are
// the shared procedures in procedures/archives.ts run in the run store's write transactions, its
// reads single named statements from the backend's archive-statements/ directory.
import { toArchive, toChunk, toPolicy } from './archive-rows.ts';
import type {
  ArchiveChunkRecord,
  ArchiveStore,
  DueRunsQuery,
  PruneOutcome,
  RetentionPolicy,
  RunArchiveRecord,
  TenantStorage,
} from './archive-store.ts';
import * as procedures from './procedures/archives.ts';
import type { Procedure, Row, Step, Tx } from './procedures/transaction.ts';

/** What a backend gives the archive area: its write transactions and single reads. */
export interface ArchiveAreaPort {
  transact<T>(key: string, procedure: (tx: Tx) => Procedure<T>): Promise<T>;
  read(step: Step): Promise<unknown>;
}

const NONE = -1;

export class ArchiveArea implements ArchiveStore {
  readonly #port: ArchiveAreaPort;

  constructor(port: ArchiveAreaPort) {
    this.#port = port;
  }

  async #one(statement: string, params: Step['params']): Promise<Row | undefined> {
    return (await this.#port.read({ mode: 'one', statement, params })) as Row | undefined;
  }

  async #all(statement: string, params: Step['params']): Promise<Row[]> {
    return (await this.#port.read({ mode: 'all', statement, params })) as Row[];
  }

  async dueRuns(query: DueRunsQuery): Promise<Array<{ runId: string; endedAt: number }>> {
    let countEndedAt = NONE;
    let countId = '';
    if (query.keepRuns !== null) {
      const cutoff = await this.#one('archive-count-cutoff', {
        tenant_id: query.tenantId,
        keep_runs: query.keepRuns,
      });
      if (cutoff !== undefined) {
        countEndedAt = Number(cutoff.ended_at);
        countId = cutoff.id as string;
      }
    }
    const rows = await this.#all('archive-due-runs', {
      tenant_id: query.tenantId,
      ended_before: query.endedBefore ?? NONE,
      count_ended_at: countEndedAt,
      count_id: countId,
      now: query.now,
      limit: query.limit,
    });
    return rows.map((row) => ({ runId: row.id as string, endedAt: Number(row.ended_at) }));
  }

  claimArchival(
    runId: string,
    tenantId: string,
    owner: string,
    leaseMs: number,
  ): Promise<RunArchiveRecord | null> {
    return this.#port.transact(runId, (tx) =>
      procedures.claimArchival(tx, runId, tenantId, owner, leaseMs),
    );
  }

  async setArchiveExtent(
    runId: string,
    token: number,
    extent: { journalLast: number; eventsLast: number; snapshotSha256: string },
  ): Promise<void> {
    await this.#port.transact(runId, (tx) => procedures.setExtent(tx, runId, token, extent));
  }

  recordChunk(token: number, chunk: ArchiveChunkRecord): Promise<RunArchiveRecord> {
    return this.#port.transact(chunk.runId, (tx) => procedures.recordChunk(tx, token, chunk));
  }

  pruneArchived(runId: string, token: number): Promise<PruneOutcome> {
    return this.#port.transact(runId, (tx) => procedures.pruneArchived(tx, runId, token));
  }

  async getArchive(runId: string): Promise<RunArchiveRecord | null> {
    const row = await this.#one('archive-get', { run_id: runId });
    return row === undefined ? null : toArchive(row);
  }

  async listChunks(runId: string): Promise<ArchiveChunkRecord[]> {
    return (await this.#all('archive-chunks', { run_id: runId })).map(toChunk);
  }

  async getRetention(tenantId: string): Promise<RetentionPolicy | null> {
    const row = await this.#one('retention-get', { tenant_id: tenantId });
    return row === undefined ? null : toPolicy(row);
  }

  putRetention(tenantId: string, policy: RetentionPolicy): Promise<RetentionPolicy> {
    return this.#port.transact(tenantId, (tx) => procedures.putRetention(tx, tenantId, policy));
  }

  deleteRetention(tenantId: string): Promise<boolean> {
    return this.#port.transact(tenantId, () => procedures.deleteRetention(tenantId));
  }

  async storageByTenant(): Promise<TenantStorage[]> {
    const live = await this.#all('storage-live-bytes', {});
    const archived = new Map(
      (await this.#all('storage-archive-bytes', {})).map((row) => [row.tenant_id as string, row]),
    );
    const payloads = new Map(
      (await this.#all('storage-payload-bytes', {})).map((row) => [
        row.tenant_id as string,
        Number(row.payload_bytes),
      ]),
    );
    const tenants = new Set([
      ...live.map((row) => row.tenant_id as string),
      ...archived.keys(),
      ...payloads.keys(),
    ]);
    const liveOf = new Map(live.map((row) => [row.tenant_id as string, row]));
    return [...tenants].sort().map((tenantId) => ({
      tenantId,
      journalBytes: Number(liveOf.get(tenantId)?.journal_bytes ?? 0),
      eventsBytes: Number(liveOf.get(tenantId)?.events_bytes ?? 0),
      archiveBytes: Number(archived.get(tenantId)?.archive_bytes ?? 0),
      payloadBytes: payloads.get(tenantId) ?? 0,
      archivedRuns: Number(archived.get(tenantId)?.archived_runs ?? 0),
    }));
  }
}

/** A run store that keeps the archive area in its own database and transactions. */
export interface HoldsArchiveArea {
  readonly archives: ArchiveStore;
}

/** The archive area of a run store opened directly (tests, the server's wiring). */
export function archiveAreaOf(runs: object): ArchiveStore {
  const area = (runs as Partial<HoldsArchiveArea>).archives;
  if (area === undefined) throw new TypeError('this run store keeps no archive area');
  return area;
}
