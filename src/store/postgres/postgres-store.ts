// The distributed store: PostgreSQL through `pg`, shared by any number of Keel processes. Its
// methods are the shared ProcedureStore's; here is only its transport: write procedures are driven
// with await inside the PgWriteQueue's transactions (group commit), effect-only commits of many
// runs merge into one statement, reads use the pool, and other processes' changes arrive through
// LISTEN/NOTIFY. It applies the engine's commits under their guards only.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { KeelError } from '../../domain/keel-error.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import { ProcedureStore, type WriteOptions } from '../procedure-store.ts';
import * as claims from '../procedures/claims.ts';
import { journalRow, type StaleCommit } from '../procedures/commit.ts';
import {
  runAsync,
  type Dialect,
  type Procedure,
  type Row,
  type Step,
  type Tx,
} from '../procedures/transaction.ts';
import { ArchiveArea } from '../archive-area.ts';
import type { ArchiveStore } from '../archive-store.ts';
import { ScheduleArea } from '../schedule-area.ts';
import type { ScheduleStore } from '../schedule-store.ts';
import type {
  CommitBatchListener,
  CommitOutcome,
  Durability,
  GroupCommit,
  HeartbeatResult,
  RunChange,
  RunCommit,
  StoreCapabilities,
  StoreHealth,
} from '../store.ts';
import { ChangeListener } from './change-listener.ts';
import { migratePostgres } from './migrate.ts';
import {
  loadPgStatementDirectory,
  loadPgStatements,
  type Params,
  type PgStatement,
  type PgStatementName,
  type PgStatements,
  type Queryable,
} from './statements.ts';
import { CHANGE_CHANNEL, PgWriteQueue, type PgWriteScope } from './write-queue.ts';

export const PG_POOL_MAX_CONNECTIONS_DEFAULT = 10;
const DURABLE = { fsync: true } as const;
/** Effect commits: one statement that is a whole transaction (see commit-effects.sql). */
const EFFECT_COMMIT = { fsync: true, standalone: true } as const;
const SCHEDULE_STATEMENTS = loadPgStatementDirectory(
  new URL('./schedule-statements/', import.meta.url),
  'schedule-',
);
const ARCHIVE_STATEMENTS = loadPgStatementDirectory(
  new URL('./archive-statements/', import.meta.url),
  'archive-area-',
);

export interface PostgresStoreOptions {
  connectionString: string;
  poolSize?: number;
  /**
   * `fsync` (default): synchronous_commit=local, flushed on this server. `replicated`:
   * synchronous_commit=on, which waits for a synchronous standby (refused at migrate() when
   * synchronous_standby_names is empty). `memory`/`os`: synchronous_commit=off: Postgres
   * acknowledges before the WAL flush, which its WAL writer does within 3 × wal_writer_delay (a
   * Postgres crash loses at most that window; Keel's own crash loses nothing).
   */
  durability?: Durability;
  groupCommit?: GroupCommit;
  /** Told after each write transaction (the process's commit-batch metrics). */
  onCommitBatch?: CommitBatchListener;
  /**
   * A schema to keep Keel's tables in (created if missing); several installations can share a
   * database.
   */
  schema?: string;
}

const SYNCHRONOUS_COMMIT: Record<Durability, string> = {
  memory: 'off',
  os: 'off',
  fsync: 'local',
  replicated: 'on',
};

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresStore extends ProcedureStore {
  readonly capabilities: StoreCapabilities = { multiProcess: true };
  readonly durability: Durability;
  readonly #pool: pg.Pool;
  readonly #origin = randomUUID();
  readonly #writes: PgWriteQueue;
  readonly #listener: ChangeListener;
  readonly #s: PgStatements = loadPgStatements();
  #schedules: ScheduleStore | undefined;
  #archives: ArchiveStore | undefined;

  readonly #schema: string | undefined;
  /**
   * With synchronous_commit off, how long an acknowledged commit may wait for the WAL flush (3 ×
   * wal_writer_delay).
   */
  #flushWindowMs = 600;

  constructor(options: PostgresStoreOptions) {
    super();
    this.durability = options.durability ?? 'fsync';
    if (options.schema !== undefined && !SCHEMA_PATTERN.test(options.schema))
      throw new KeelError(
        'config_invalid',
        `invalid schema name ${JSON.stringify(options.schema)}`,
      );
    this.#schema = options.schema;
    const settings = [
      ...(options.schema !== undefined ? [`-c search_path=${options.schema}`] : []),
      `-c synchronous_commit=${SYNCHRONOUS_COMMIT[this.durability]}`,
    ];
    const channel =
      options.schema === undefined ? CHANGE_CHANNEL : `${CHANGE_CHANNEL}_${options.schema}`;
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? PG_POOL_MAX_CONNECTIONS_DEFAULT,
      ...(settings.length > 0 ? { options: settings.join(' ') } : {}),
    });
    // An idle client's connection error (the server restarted) must not crash the process; the pool
    // replaces it.
    this.#pool.on('error', () => {});
    const emit = (changes: readonly RunChange[]) => this.emitChanges(changes);
    this.#writes = new PgWriteQueue(this.#pool, this.#origin, channel, emit, {
      ...(options.groupCommit !== undefined
        ? { maxBatch: options.groupCommit.maxBatch, maxWaitMs: options.groupCommit.maxWaitMs }
        : {}),
      flushesOnCommit: this.durability === 'fsync' || this.durability === 'replicated',
      ...(options.onCommitBatch !== undefined ? { onBatch: options.onCommitBatch } : {}),
    });
    this.#listener = new ChangeListener(options.connectionString, this.#origin, channel, emit);
  }

  get writeStats(): { writes: number; transactions: number; fsyncedTransactions: number } {
    return this.#writes.stats;
  }

  async health(): Promise<StoreHealth> {
    let reachable = true;
    try {
      await this.#pool.query('SELECT 1');
    } catch {
      reachable = false;
    }
    return { reachable, changeFeed: this.#listener.connected };
  }

  async migrate(): Promise<void> {
    await this.#checkDurability();
    if (this.#schema !== undefined)
      await this.#pool.query(`CREATE SCHEMA IF NOT EXISTS ${this.#schema}`);
    await migratePostgres(this.#pool);
    await this.#listener.start();
  }

  /**
   * Refuses `replicated` without a synchronous standby; learns the WAL writer's flush window for
   * the not-durable count.
   */
  async #checkDurability(): Promise<void> {
    const settings = (await this.#s['read-server-settings'].row(this.#pool)) as {
      names: string;
      delay: string;
    };
    if (this.durability === 'replicated' && settings.names.trim() === '') {
      throw new KeelError(
        'durability_unavailable',
        'durability `replicated` needs synchronous replication: synchronous_standby_names is empty on this server',
      );
    }
    const delay = /^(\d+)(ms|s)?$/.exec(settings.delay.trim());
    if (delay !== null) this.#flushWindowMs = 3 * Number(delay[1]) * (delay[2] === 's' ? 1000 : 1);
  }

  notDurableCommits(): number {
    return this.durability === 'memory' || this.durability === 'os'
      ? this.#writes.acknowledgedWithin(this.#flushWindowMs)
      : 0;
  }

  async close(): Promise<void> {
    await this.#writes.close();
    await this.#listener.close();
    await this.#pool.end();
  }
  async heartbeat(owner: string, runIds: string[], leaseMs: number): Promise<HeartbeatResult> {
    if (runIds.length === 0) return { held: [] };
    // Straight to the pool, not through the write queue: lease renewal must never wait behind a
    // backlog of commits, or a busy but healthy worker would lose its leases. It only extends
    // leases the owner still holds, so it needs neither the queue's ordering nor a transaction.
    const tx: Tx = { now: Date.now(), touch: () => {}, dialect: POSTGRES_DIALECT };
    return runAsync(claims.heartbeat(tx, owner, runIds, leaseMs), (step) =>
      execute(this.#pool, this.#statement(step.statement), step),
    );
  }

  protected write<T>(options: WriteOptions, procedure: (tx: Tx) => Procedure<T>): Promise<T> {
    return this.#writes.submit(options, (scope) => this.#drive(scope, procedure));
  }

  protected read<T>(procedure: Procedure<T>): Promise<T> {
    return runAsync(procedure, (step) =>
      execute(this.#pool, this.#statement(step.statement), step),
    );
  }

  /**
   * Effect-only commits (counters, journal, events) of different runs are merged into one statement
   * by the queue.
   */
  protected writeCommit(commit: RunCommit): Promise<CommitOutcome | StaleCommit> {
    return isEffectOnly(commit)
      ? this.#writes.submitMergeable(EFFECT_COMMIT, this.#commitEffects, commit.runId, commit)
      : super.writeCommit(commit);
  }

  // Store areas kept in their own modules

  /**
   * @internal One named statement on the pool, for a store area kept in its own module (the shared
   * rate windows).
   */
  query(name: PgStatementName, params: Params): Promise<Row[]> {
    return this.#s[name].rows(this.#pool, params);
  }

  /**
   * The schedule store area: its own statements, its writes in this store's group-commit
   * transactions.
   */
  get schedules(): ScheduleStore {
    this.#schedules ??= new ScheduleArea({
      transact: (key, procedure) =>
        this.#writes.submit({ ...DURABLE, key }, (scope) =>
          this.#drive(scope, procedure, SCHEDULE_STATEMENTS),
        ),
      read: (step) =>
        execute(
          this.#pool,
          SCHEDULE_STATEMENTS.get(step.statement) ?? this.#statement(step.statement),
          step,
        ),
    });
    return this.#schedules;
  }

  /** The archive store area (retention and archival): its own statements, this store's transactions. */
  get archives(): ArchiveStore {
    this.#archives ??= new ArchiveArea({
      transact: (key, procedure) =>
        this.#writes.submit({ ...DURABLE, key }, (scope) =>
          this.#drive(scope, procedure, ARCHIVE_STATEMENTS),
        ),
      read: (step) =>
        execute(
          this.#pool,
          ARCHIVE_STATEMENTS.get(step.statement) ?? this.#statement(step.statement),
          step,
        ),
    });
    return this.#archives;
  }

  // Internals (inside a write transaction)

  /**
   * Drives a shared procedure inside a group-commit transaction, one statement after another's
   * answer. It may run twice (a failed batch is retried write by write): it writes only through the
   * transaction.
   */
  #drive<T>(
    scope: PgWriteScope,
    procedure: (tx: Tx) => Procedure<T>,
    statements?: ReadonlyMap<string, PgStatement>,
  ): Promise<T> {
    const tx: Tx = { now: scope.now, touch: scope.touch, dialect: POSTGRES_DIALECT };
    return runAsync(procedure(tx), (step) =>
      execute(
        scope.client,
        statements?.get(step.statement) ?? this.#statement(step.statement),
        step,
      ),
    );
  }

  #statement(name: string): PgStatement {
    const statement = this.#s[name as PgStatementName];
    if (statement === undefined) throw new Error(`no Postgres statement ${name}`);
    return statement;
  }

  /**
   * The hot path: effect commits (counters, journal, events only) of different runs in one
   * statement; the group commit queue merges neighbouring ones. The statement audits a stale commit
   * itself and, sent alone (scope.announce set), is its own transaction and announces its changes:
   * one round trip. New columns of an effect commit go into each commit's object below and into
   * commit-effects.sql.
   */
  readonly #commitEffects = async (
    scope: PgWriteScope,
    commits: RunCommit[],
  ): Promise<Array<CommitOutcome | StaleCommit>> => {
    const rows = await this.#s['commit-effects'].rows(scope.client, {
      now: scope.now,
      channel: scope.announce?.channel ?? null,
      origin: scope.announce?.origin ?? null,
      commits: JSON.stringify(
        commits.map((c, idx) => ({
          idx,
          id: c.runId,
          lease_token: c.leaseToken,
          expected_state_version: c.expectedStateVersion,
          d_steps: c.run?.counters?.steps ?? 0,
          d_input_tokens: c.run?.counters?.inputTokens ?? 0,
          d_output_tokens: c.run?.counters?.outputTokens ?? 0,
          d_cost_usd: c.run?.counters?.costUsd ?? 0,
          entries: (c.journal ?? []).map(journalRow),
          events: (c.events ?? []).map((e) => ({ type: e.type, data: JSON.stringify(e.data) })),
        })),
      ),
    });
    const byIdx = new Map(rows.filter((r) => r.idx !== null).map((r) => [Number(r.idx), r]));
    return commits.map((c, idx) => {
      const row = byIdx.get(idx);
      if (row === undefined) throw new Error(`commit-effects returned no row for commit ${idx}`);
      if (row.applied !== true) {
        const current = (v: unknown) => (v === null ? null : Number(v));
        return {
          stale: {
            leaseToken: c.leaseToken,
            expectedStateVersion: c.expectedStateVersion,
            currentLeaseToken: current(row.current_lease_token),
            currentStateVersion: current(row.current_state_version),
            currentStatus: row.current_status ?? null,
          },
        };
      }
      if ((c.events ?? []).length > 0) scope.touch(c.runId, 'events');
      return { stateVersion: Number(row.state_version), status: row.status as RunStatus };
    });
  };
}

/**
 * A commit that only adds counters, journal entries and events: the shape most effect results have.
 */
function isEffectOnly(c: RunCommit): boolean {
  const patchKeys = Object.keys(c.run ?? {});
  const sideWork =
    [c.createRuns, c.wakeRuns, c.cancelRuns, c.consumeInputs].some(
      (list) => (list ?? []).length > 0,
    ) || c.wakeIf !== undefined;
  return patchKeys.every((k) => k === 'counters') && !sideWork;
}

/**
 * Postgres answers over the network: rows written together go as one statement (one round trip).
 */
const POSTGRES_DIALECT: Dialect = { bulkStatements: true, sharedFairClaims: true };

function execute(db: Queryable, statement: PgStatement, step: Step): Promise<unknown> {
  switch (step.mode) {
    case 'one':
      return statement.row(db, step.params);
    case 'all':
      return statement.rows(db, step.params);
    case 'run':
      return statement.run(db, step.params);
  }
}
