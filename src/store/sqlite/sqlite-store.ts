// The embedded store: one SQLite file through Node's built-in node:sqlite, one connection, one process.
// Every write is a shared procedure (src/store/procedures/) driven synchronously inside the WriteBatcher's transaction
// (group commit); reads are direct. It never decides what a run does next: it applies the engine's commits under their
// guards and reports which runs changed.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { KeelError } from '../../domain/keel-error.ts';
import { statusesAllowing } from '../../domain/run-status.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import type { Json } from '../../domain/json.ts';
import type { JournalEntry, NewRun, RunEventRecord, RunRecord, TenantQuotas, TenantRecord } from '../../domain/records.ts';
import type {
  ClaimRequest, CommitBatchListener, CommitOutcome, ExecutionResolution, RunChange, StoreHealth, CreateRunResult, Durability, GroupCommit, HeartbeatResult, RunCommit, RunFilter,
  StarvedInteractive, StarvedRequest, Store, StoreCapabilities,
} from '../store.ts';
import type { LiveMetrics } from '../live-metrics.ts';
import { migrate } from './migrate.ts';
import { toEvent, toJournalEntry, toRun, toTenant } from '../rows.ts';
import { toEndedRunsBucket, toRunSummaryRow, toTenantSummaryRow, type EndedRunsBucket, type RunSummaryRow, type TenantSummaryRow } from '../run-summaries.ts';
import { prepareDirectory, prepareStatements, type NamedStatement, type StatementName, type Statements } from './statements.ts';
import { ScheduleArea } from '../schedule-area.ts';
import type { ScheduleStore } from '../schedule-store.ts';
import { WRITE_BATCH_MAX_OPS, WriteBatcher, type WriteScope } from './write-batcher.ts';
import { toTenantUsage, type TenantUsage } from '../usage.ts';
import * as claims from '../procedures/claims.ts';
import { applyCommit } from '../procedures/commit.ts';
import * as runs from '../procedures/runs.ts';
import * as tenants from '../procedures/tenants.ts';
import { runSync, type Dialect, type Procedure, type Step, type Tx } from '../procedures/transaction.ts';

/**
 * Claims and heartbeats acknowledge nobody outside Keel, so they need no fsync of their own: a later fsync'd commit
 * appends after them in the same WAL and makes them durable too, and a claim lost to a power cut only leaves the run
 * queued (no effect can have committed under it). A batch of such writes alone skips the fsync.
 */
const LEASE_ONLY = { fsync: false } as const;

const BUSY_TIMEOUT_MS = 5_000;
const SCHEDULE_STATEMENTS_DIR = new URL('./schedule-statements/', import.meta.url);
const CLAIMABLE_STATUSES = JSON.stringify(statusesAllowing('claim'));

export interface SqliteStoreOptions {
  /** Path of the database file. */
  path: string;
  /** Default `fsync`. `replicated` is refused: there is no standby to replicate to. */
  durability?: Durability;
  groupCommit?: GroupCommit;
  /** Told after each write transaction (the process's commit-batch metrics). */
  onCommitBatch?: CommitBatchListener;
}

/** One transaction per event-loop turn (max wait 0), at most WRITE_BATCH_MAX_OPS writes in it. */
const GROUP_COMMIT_DEFAULT: GroupCommit = { maxBatch: WRITE_BATCH_MAX_OPS, maxWaitMs: 0 };

type Row = Record<string, unknown>;

export class SqliteStore implements Store {
  readonly capabilities: StoreCapabilities = { multiProcess: false };
  readonly durability: Durability;
  readonly #db: DatabaseSync;
  readonly #batcher: WriteBatcher;
  readonly #listeners = new Set<(changes: readonly RunChange[]) => void>();
  #sql: Statements | undefined;
  #scheduleStatements: Map<string, NamedStatement> | undefined;
  #schedules: ScheduleStore | undefined;

  constructor(options: SqliteStoreOptions) {
    const durability = options.durability ?? 'fsync';
    if (durability === 'replicated') {
      throw new KeelError('durability_unavailable', 'durability `replicated` needs Postgres with synchronous replication; SQLite offers memory, os and fsync');
    }
    this.durability = durability;
    mkdirSync(dirname(options.path), { recursive: true });
    this.#db = new DatabaseSync(options.path);
    this.#db.exec(`PRAGMA journal_mode = WAL; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};`);
    this.#batcher = new WriteBatcher(this.#db, durability, options.groupCommit ?? GROUP_COMMIT_DEFAULT, (changes) => {
      for (const listener of this.#listeners) listener(changes);
    }, options.onCommitBatch);
  }

  notDurableCommits(): number {
    return this.#batcher.notDurable;
  }

  /** Group-commit statistics: writes acknowledged, transactions used for them, and the fsync'd ones among those. */
  get writeStats(): { writes: number; transactions: number; fsyncedTransactions: number; lostWrites: number } {
    return this.#batcher.stats;
  }

  get #s(): Statements {
    if (this.#sql === undefined) throw new Error('SqliteStore used before migrate()');
    return this.#sql;
  }

  async migrate(): Promise<void> {
    migrate(this.#db);
    this.#sql = prepareStatements(this.#db);
  }

  async health(): Promise<StoreHealth> {
    try {
      this.#s['get-run'].get({ id: '' });
      return { reachable: true, changeFeed: true };
    } catch {
      return { reachable: false, changeFeed: true };
    }
  }

  async close(): Promise<void> {
    this.#batcher.close();
    this.#db.close();
  }

  async liveMetrics(now: number): Promise<LiveMetrics> {
    const queue = this.#s['run-queue'].get({ now, claimable_statuses: CLAIMABLE_STATUSES })!;
    return {
      runs: this.#s['live-run-counts'].all().map((r) => ({ tenantId: String(r.tenant_id), status: r.status as RunStatus, count: Number(r.runs) })),
      claimable: Number(queue.depth),
      oldestClaimableSince: queue.oldest_since === null ? null : Number(queue.oldest_since),
      unknownExecutions: Number(this.#s['count-unknown-executions'].get()!.executions),
    };
  }

  onChange(listener: (changes: readonly RunChange[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // Tenants

  createTenant(name: string, apiKeyHash: string, quotas?: Partial<TenantQuotas>): Promise<TenantRecord> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => tenants.createTenant(tx, name, apiKeyHash, quotas)));
  }

  updateTenant(id: string, quotas: Partial<TenantQuotas>): Promise<TenantRecord> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => tenants.updateTenant(tx, id, quotas)));
  }

  async getTenant(id: string): Promise<TenantRecord | null> {
    const row = this.#s['get-tenant'].get({ id }) as Row | undefined;
    return row === undefined ? null : toTenant(row);
  }

  async listTenants(): Promise<TenantRecord[]> {
    return (this.#s['list-tenants'].all() as Row[]).map(toTenant);
  }

  async heldRuns(tenantId: string): Promise<number> {
    return Number((this.#s['count-held-runs'].get({ tenant_id: tenantId }) as Row).held);
  }

  async queuedRoom(tenantId: string): Promise<number | null> {
    return runSync(tenants.queuedRoom(tenantId), this.#execute);
  }

  ensureTenant(name: string, apiKeyHash: string): Promise<TenantRecord> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => tenants.ensureTenant(tx, name, apiKeyHash)));
  }

  async findTenantByKeyHash(apiKeyHash: string): Promise<TenantRecord | null> {
    const row = this.#s['find-tenant-by-key'].get({ key_hash: apiKeyHash }) as Row | undefined;
    return row === undefined ? null : toTenant(row);
  }

  async tenantUsage(tenantId: string): Promise<TenantUsage> {
    return toTenantUsage(this.#s['tenant-usage'].get({ tenant_id: tenantId }) as Row);
  }

  async tenantUsageSince(tenantId: string, sinceMs: number): Promise<{ tokens: number; costUsd: number }> {
    const row = this.#s['tenant-usage-since'].get({ tenant_id: tenantId, since: sinceMs }) as Row;
    return { tokens: Number(row.tokens), costUsd: Number(row.cost_usd) };
  }

  // Runs

  createRun(run: NewRun): Promise<CreateRunResult> {
    // Admission inside the write transaction: the batcher runs one transaction at a time, so the count is exact.
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => runs.createRun(tx, run)));
  }

  async getRun(id: string): Promise<RunRecord | null> {
    const row = this.#s['get-run'].get({ id }) as Row | undefined;
    return row === undefined ? null : toRun(row);
  }

  async listRuns(tenantId: string, filter: RunFilter): Promise<RunRecord[]> {
    const rows = this.#s['list-runs'].all({
      tenant_id: tenantId, status: filter.status ?? null, agent: filter.agent ?? null, code: filter.errorCode ?? null, after_id: filter.afterId ?? null, limit: filter.limit,
    }) as Row[];
    return rows.map(toRun);
  }

  requestCancel(runId: string): Promise<RunRecord> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => runs.requestCancel(tx, runId)));
  }

  provideInput(runId: string, key: string, value: Json): Promise<RunRecord> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => runs.provideInput(tx, runId, key, value)));
  }

  resolveExecution(runId: string, executionId: string, resolution: ExecutionResolution): Promise<RunRecord> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => runs.resolveExecution(tx, runId, executionId, resolution)));
  }

  readmitRun(runId: string): Promise<RunRecord> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => runs.readmitRun(tx, runId)));
  }

  async getInput(runId: string, key: string): Promise<{ value: Json } | null> {
    const row = this.#s['get-input'].get({ run_id: runId, key }) as Row | undefined;
    return row === undefined ? null : { value: JSON.parse(row.value as string) as Json };
  }

  // Work

  claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    return this.#batcher.submit(LEASE_ONLY, (scope) => this.#run(scope, (tx) => claims.claimRuns(tx, request)));
  }

  async starvedInteractive(request: StarvedRequest): Promise<StarvedInteractive> {
    const row = this.#s['starved-interactive'].get({
      cutoff: request.cutoff, served: JSON.stringify(request.served), claimable_statuses: CLAIMABLE_STATUSES, limit: request.limit,
    }) as Row;
    return { count: Number(row.starved), oldestSince: row.oldest_since === null ? null : Number(row.oldest_since) };
  }

  heartbeat(owner: string, runIds: string[], leaseMs: number): Promise<HeartbeatResult> {
    if (runIds.length === 0) return Promise.resolve({ held: [] });
    return this.#batcher.submit(LEASE_ONLY, (scope) => this.#run(scope, (tx) => claims.heartbeat(tx, owner, runIds, leaseMs)));
  }

  releaseLeases(owner: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return Promise.resolve();
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => runs.releaseLeases(tx, owner, runIds)));
  }

  expireForeignLeases(owner: string): Promise<number> {
    return this.#batcher.submit(({ now }) => Number(this.#s['expire-foreign-leases'].run({ owner, now }).changes));
  }

  commit(commit: RunCommit): Promise<CommitOutcome> {
    return this.#batcher.submit((scope) => this.#run(scope, (tx) => applyCommit(tx, commit))).then((outcome) => {
      if ('stale' in outcome) {
        throw new KeelError('stale_write', `commit to run ${commit.runId} was fenced off`, { details: outcome.stale });
      }
      return outcome;
    });
  }

  // History

  async loadJournal(runId: string): Promise<JournalEntry[]> {
    return (this.#s['load-journal'].all({ run_id: runId }) as Row[]).map(toJournalEntry);
  }

  async listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEventRecord[]> {
    return (this.#s['list-events'].all({ run_id: runId, after_seq: afterSeq, limit }) as Row[]).map(toEvent);
  }

  // Store areas kept in their own files

  /** @internal The connection, for the statements and reads of a store area kept in its own files. */
  get connection(): DatabaseSync {
    return this.#db;
  }

  /** The schedule store area: its own statements on this connection, its writes in this store's transactions. */
  get schedules(): ScheduleStore {
    this.#schedules ??= new ScheduleArea({
      transact: (_key, procedure) => this.#batcher.submit((scope) => this.#run(scope, procedure, this.#scheduleStatement)),
      read: async (step) => execute(this.#scheduleStatement(step.statement) ?? this.#statement(step.statement), step),
    });
    return this.#schedules;
  }

  readonly #scheduleStatement = (name: string): NamedStatement | undefined => {
    this.#scheduleStatements ??= prepareDirectory(this.#db, SCHEDULE_STATEMENTS_DIR);
    return this.#scheduleStatements.get(name);
  };

  // Dashboard: read-only aggregates
  async summarizeRuns(tenantId: string): Promise<RunSummaryRow[]> {
    return (this.#s['summarize-runs'].all({ tenant_id: tenantId }) as Row[]).map(toRunSummaryRow);
  }

  async countEndedRuns(tenantId: string, sinceMs: number, bucketMs: number): Promise<EndedRunsBucket[]> {
    return (this.#s['count-ended-runs'].all({ tenant_id: tenantId, since: sinceMs, bucket_ms: bucketMs }) as Row[]).map(toEndedRunsBucket);
  }

  async summarizeTenants(): Promise<TenantSummaryRow[]> {
    return (this.#s['summarize-tenants'].all() as Row[]).map(toTenantSummaryRow);
  }

  // Internals (run inside a write transaction)

  /** Drives a shared procedure synchronously inside the batcher's transaction: no promise per statement. */
  #run<T>(scope: WriteScope, procedure: (tx: Tx) => Procedure<T>, statements?: (name: string) => NamedStatement | undefined): T {
    const tx: Tx = { now: scope.now, touch: scope.touch, dialect: SQLITE_DIALECT };
    return runSync(procedure(tx), statements === undefined ? this.#execute : (step) => execute(statements(step.statement) ?? this.#statement(step.statement), step));
  }

  readonly #execute = (step: Step): unknown => execute(this.#statement(step.statement), step);

  #statement(name: string): NamedStatement {
    const statement = this.#s[name as StatementName];
    if (statement === undefined) throw new Error(`no SQLite statement ${name}`);
    return statement;
  }
}

/** SQLite runs in-process: a statement per row costs less than building and parsing JSON. */
const SQLITE_DIALECT: Dialect = { bulkStatements: false };

function execute(statement: NamedStatement, step: Step): unknown {
  switch (step.mode) {
    case 'one': return statement.get(step.params);
    case 'all': return statement.all(step.params);
    case 'run': return Number(statement.run(step.params).changes);
  }
}
