// The embedded store: one SQLite file through Node's built-in node:sqlite, one connection, one
// process. Its methods are the shared ProcedureStore's; here is only its transport: every write
// procedure is driven synchronously inside the WriteBatcher's transaction (group commit, no promise
// per statement), reads run directly on the connection. It never decides what a run does next: it
// applies the engine's commits under their guards.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { KeelError } from '../../domain/keel-error.ts';
import { ProcedureStore, type WriteOptions } from '../procedure-store.ts';
import * as claims from '../procedures/claims.ts';
import {
  runSync,
  type Dialect,
  type Procedure,
  type Step,
  type Tx,
} from '../procedures/transaction.ts';
import { ArchiveArea } from '../archive-area.ts';
import type { ArchiveStore } from '../archive-store.ts';
import { ScheduleArea } from '../schedule-area.ts';
import type { ScheduleStore } from '../schedule-store.ts';
import type {
  CommitBatchListener,
  Durability,
  GroupCommit,
  HeartbeatResult,
  StoreCapabilities,
  StoreHealth,
} from '../store.ts';
import { migrate } from './migrate.ts';
import {
  prepareDirectory,
  prepareStatements,
  type NamedStatement,
  type StatementName,
  type Statements,
} from './statements.ts';
import { GROUP_COMMIT_MAX_BATCH_LIMIT } from '../../domain/group-commit.ts';
import { WriteBatcher, type WriteScope } from './write-batcher.ts';

/**
 * Heartbeats acknowledge nobody outside Keel, so they need no fsync of their own: a later fsync'd
 * commit appends after them in the same WAL and makes them durable too. A batch of such writes
 * alone skips the fsync.
 */
const LEASE_ONLY = { fsync: false } as const;
const WRITE_FSYNC = { fsync: true } as const;

const BUSY_TIMEOUT_MS = 5_000;
const SCHEDULE_STATEMENTS_DIR = new URL('./schedule-statements/', import.meta.url);
const ARCHIVE_STATEMENTS_DIR = new URL('./archive-statements/', import.meta.url);

/** SQLite runs in-process: a statement per row costs less than building and parsing JSON. */
const SQLITE_DIALECT: Dialect = { bulkStatements: false, sharedFairClaims: false };

export interface SqliteStoreOptions {
  /** Path of the database file. */
  path: string;
  /** Default `fsync`. `replicated` is refused: there is no standby to replicate to. */
  durability?: Durability;
  groupCommit?: GroupCommit;
  /** Told after each write transaction (the process's commit-batch metrics). */
  onCommitBatch?: CommitBatchListener;
}

/**
 * One transaction per event-loop turn (max wait 0), at most GROUP_COMMIT_MAX_BATCH_LIMIT writes in
 * it.
 */
const GROUP_COMMIT_DEFAULT: GroupCommit = { maxBatch: GROUP_COMMIT_MAX_BATCH_LIMIT, maxWaitMs: 0 };

export class SqliteStore extends ProcedureStore {
  readonly capabilities: StoreCapabilities = { multiProcess: false };
  readonly durability: Durability;
  readonly #db: DatabaseSync;
  readonly #batcher: WriteBatcher;
  #sql: Statements | undefined;
  #scheduleStatements: Map<string, NamedStatement> | undefined;
  #schedules: ScheduleStore | undefined;
  #archiveStatements: Map<string, NamedStatement> | undefined;
  #archives: ArchiveStore | undefined;

  constructor(options: SqliteStoreOptions) {
    super();
    const durability = options.durability ?? 'fsync';
    if (durability === 'replicated') {
      throw new KeelError(
        'durability_unavailable',
        'durability `replicated` needs Postgres with synchronous replication; SQLite offers memory, os and fsync',
      );
    }
    this.durability = durability;
    mkdirSync(dirname(options.path), { recursive: true });
    this.#db = new DatabaseSync(options.path);
    this.#db.exec(`PRAGMA journal_mode = WAL; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};`);
    this.#batcher = new WriteBatcher(
      this.#db,
      durability,
      options.groupCommit ?? GROUP_COMMIT_DEFAULT,
      (changes) => this.emitChanges(changes),
      options.onCommitBatch,
    );
  }

  notDurableCommits(): number {
    return this.#batcher.notDurable;
  }

  /**
   * Group-commit statistics: writes acknowledged, transactions used for them, and the fsync'd ones
   * among those.
   */
  get writeStats(): {
    writes: number;
    transactions: number;
    fsyncedTransactions: number;
    lostWrites: number;
  } {
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

  heartbeat(owner: string, runIds: string[], leaseMs: number): Promise<HeartbeatResult> {
    if (runIds.length === 0) return Promise.resolve({ held: [] });
    return this.#batcher.submit(LEASE_ONLY, (scope) =>
      this.#drive(scope, (tx) => claims.heartbeat(tx, owner, runIds, leaseMs)),
    );
  }

  /**
   * SQLite's one writer needs no ordering key: the batcher runs one transaction at a time, in
   * submission order.
   */
  protected write<T>(options: WriteOptions, procedure: (tx: Tx) => Procedure<T>): Promise<T> {
    return this.#batcher.submit(options.fsync ? WRITE_FSYNC : LEASE_ONLY, (scope) =>
      this.#drive(scope, procedure),
    );
  }

  protected async read<T>(procedure: Procedure<T>): Promise<T> {
    return runSync(procedure, this.#execute);
  }

  // Store areas kept in their own files

  /**
   * @internal The connection, for the statements and reads of a store area kept in its own files.
   */
  get connection(): DatabaseSync {
    return this.#db;
  }

  /**
   * The schedule store area: its own statements on this connection, its writes in this store's
   * transactions.
   */
  get schedules(): ScheduleStore {
    this.#schedules ??= new ScheduleArea({
      transact: (_key, procedure) =>
        this.#batcher.submit(WRITE_FSYNC, (scope) =>
          this.#drive(scope, procedure, this.#scheduleStatement),
        ),
      read: async (step) =>
        execute(this.#scheduleStatement(step.statement) ?? this.#statement(step.statement), step),
    });
    return this.#schedules;
  }

  readonly #scheduleStatement = (name: string): NamedStatement | undefined => {
    this.#scheduleStatements ??= prepareDirectory(this.#db, SCHEDULE_STATEMENTS_DIR);
    return this.#scheduleStatements.get(name);
  };

  /** The archive store area (retention and archival): its own statements, this store's transactions. */
  get archives(): ArchiveStore {
    this.#archives ??= new ArchiveArea({
      transact: (_key, procedure) =>
        this.#batcher.submit(WRITE_FSYNC, (scope) =>
          this.#drive(scope, procedure, this.#archiveStatement),
        ),
      read: async (step) =>
        execute(this.#archiveStatement(step.statement) ?? this.#statement(step.statement), step),
    });
    return this.#archives;
  }

  readonly #archiveStatement = (name: string): NamedStatement | undefined => {
    this.#archiveStatements ??= prepareDirectory(this.#db, ARCHIVE_STATEMENTS_DIR);
    return this.#archiveStatements.get(name);
  };

  // Internals (run inside a write transaction)

  /**
   * Drives a shared procedure synchronously inside the batcher's transaction: no promise per
   * statement.
   */
  #drive<T>(
    scope: WriteScope,
    procedure: (tx: Tx) => Procedure<T>,
    statements?: (name: string) => NamedStatement | undefined,
  ): T {
    const tx: Tx = { now: scope.now, touch: scope.touch, dialect: SQLITE_DIALECT };
    return runSync(
      procedure(tx),
      statements === undefined
        ? this.#execute
        : (step) => execute(statements(step.statement) ?? this.#statement(step.statement), step),
    );
  }

  readonly #execute = (step: Step): unknown => execute(this.#statement(step.statement), step);

  #statement(name: string): NamedStatement {
    const statement = this.#s[name as StatementName];
    if (statement === undefined) throw new Error(`no SQLite statement ${name}`);
    return statement;
  }
}

function execute(statement: NamedStatement, step: Step): unknown {
  switch (step.mode) {
    case 'one':
      return statement.get(step.params);
    case 'all':
      return statement.all(step.params);
    case 'run':
      return Number(statement.run(step.params).changes);
  }
}
