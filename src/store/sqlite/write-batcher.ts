// Group commit for the SQLite store: every write is queued, and the writes queued during one
// event-loop turn (or during the configured max wait, cut short by a full batch) are applied in one
// transaction (one fsync), each inside its own savepoint so one failing write never undoes another.
// A write's promise settles when the batch reaches the configured durability: `fsync` after an
// fsync'd COMMIT; `os` after a COMMIT written without fsync (a periodic WAL checkpoint makes it
// durable); `memory` as soon as it is applied, inside a transaction that is committed every
// max-wait interval.
import type { DatabaseSync } from 'node:sqlite';
import { crashPoint } from '../../domain/crash-points.ts';
import { GROUP_COMMIT_MAX_BATCH_LIMIT } from '../../domain/group-commit.ts';
import { KeelError } from '../../domain/keel-error.ts';
import type {
  ChangeSignal,
  CommitBatchListener,
  Durability,
  GroupCommit,
  RunChange,
} from '../store.ts';

/**
 * Upper bound on queued writes; past it, writers get a retryable store_busy instead of unbounded
 * memory.
 */
export const WRITE_QUEUE_MAX_OPS = 100_000;

/** `memory`: how often the open transaction is committed when group commit sets no max wait. */
export const MEMORY_COMMIT_INTERVAL_MS_DEFAULT = 100;
/** `os`: how often a WAL checkpoint (which fsyncs the WAL first) makes written commits durable. */
export const OS_CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * SQLite's `synchronous` per level (WAL mode): NORMAL writes the WAL at COMMIT and fsyncs it only
 * at checkpoints.
 */
const SYNCHRONOUS: Record<Exclude<Durability, 'replicated'>, string> = {
  memory: 'NORMAL',
  os: 'NORMAL',
  fsync: 'FULL',
};

/** What a caller refused with store_busy is told to wait before retrying. */
export const STORE_BUSY_RETRY_AFTER_MS = 100;

/**
 * SQLite's "busy"/"locked" failures are transient: a typed, retryable store_busy; anything else as
 * it is.
 */
function busyOr(error: unknown): unknown {
  const code = (error as { errcode?: number; code?: string }).errcode;
  const message = error instanceof Error ? error.message : '';
  const busy = code === 5 || code === 6 || /database is (locked|busy)/i.test(message);
  return busy
    ? new KeelError('store_busy', `the store is busy: ${message}`, {
        retryable: true,
        retryAfterMs: STORE_BUSY_RETRY_AFTER_MS,
        cause: error,
      })
    : error;
}

export interface WriteScope {
  /** Time of the transaction, one value for every write in the batch. */
  readonly now: number;
  /** Marks a run as changed, so change listeners hear about it after the commit. */
  touch(runId: string, signal: ChangeSignal): void;
}

export interface WriteOptions {
  /**
   * False for writes that acknowledge nothing outside Keel (claims, heartbeats): they need not wait
   * for an fsync.
   */
  fsync: boolean;
}

interface QueuedWrite {
  fsync: boolean;
  apply(scope: WriteScope): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class WriteBatcher {
  readonly #db: DatabaseSync;
  readonly #durability: Exclude<Durability, 'replicated'>;
  /** The connection's `synchronous` setting, restored after a batch that did without fsync. */
  readonly #synchronous: string;
  readonly #groupCommit: GroupCommit;
  readonly #onCommitted: (changes: readonly RunChange[]) => void;
  readonly #onBatch: CommitBatchListener;
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  /** The max-wait timer, while one is pending (cleared when a full batch can go at once). */
  #waitTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** `memory`: a transaction is open and holds acknowledged writes. */
  #open = false;
  #commitTimer: NodeJS.Timeout | undefined;
  #checkpointTimer: NodeJS.Timeout | undefined;
  /**
   * Acknowledged writes not yet durable (`memory`: in the open transaction; `os`: since the last
   * checkpoint).
   */
  #notDurable = 0;
  /**
   * Writes acknowledged so far, transactions used for them, how many of those were fsync'd, and
   * acknowledged writes lost.
   */
  readonly stats = { writes: 0, transactions: 0, fsyncedTransactions: 0, lostWrites: 0 };

  constructor(
    db: DatabaseSync,
    durability: Exclude<Durability, 'replicated'>,
    groupCommit: GroupCommit,
    onCommitted: (changes: readonly RunChange[]) => void,
    onBatch: CommitBatchListener = () => {},
  ) {
    this.#db = db;
    this.#durability = durability;
    this.#synchronous = SYNCHRONOUS[durability];
    this.#groupCommit = groupCommit;
    this.#onCommitted = onCommitted;
    this.#onBatch = onBatch;
    db.exec(`PRAGMA synchronous = ${this.#synchronous}`);
  }

  /** Acknowledged writes that a crash (memory) or a power cut (os) could still lose. */
  get notDurable(): number {
    return this.#notDurable;
  }

  get queued(): number {
    return this.#queue.length;
  }

  submit<T>(apply: (scope: WriteScope) => T): Promise<T>;
  submit<T>(options: WriteOptions, apply: (scope: WriteScope) => T): Promise<T>;
  submit<T>(
    first: WriteOptions | ((scope: WriteScope) => T),
    second?: (scope: WriteScope) => T,
  ): Promise<T> {
    const apply = typeof first === 'function' ? first : second!;
    const fsync = typeof first === 'function' ? true : first.fsync;
    if (this.#closed) return Promise.reject(new Error('store is closed'));
    if (this.#queue.length >= WRITE_QUEUE_MAX_OPS) {
      return Promise.reject(
        new KeelError(
          'store_busy',
          `the store's write queue is full (${WRITE_QUEUE_MAX_OPS} writes)`,
          { retryable: true, retryAfterMs: STORE_BUSY_RETRY_AFTER_MS },
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fsync, apply, resolve: resolve as (v: unknown) => void, reject });
      if (
        this.#waitTimer !== undefined &&
        this.#queue.length >= Math.min(GROUP_COMMIT_MAX_BATCH_LIMIT, this.#groupCommit.maxBatch)
      ) {
        // A full batch need not wait for more writes to join it.
        clearTimeout(this.#waitTimer);
        this.#waitTimer = undefined;
        setImmediate(() => this.#flush());
      } else if (!this.#scheduled) {
        this.#scheduled = true;
        // Under `memory` the max wait paces the COMMIT of the open transaction instead; writes
        // apply at once.
        const wait = this.#durability === 'memory' ? 0 : this.#groupCommit.maxWaitMs;
        if (wait > 0) {
          this.#waitTimer = setTimeout(() => {
            this.#waitTimer = undefined;
            this.#flush();
          }, wait);
        } else setImmediate(() => this.#flush());
      }
    });
  }

  /**
   * Applies what is queued now and makes it durable; used by close() so no acknowledged write is
   * lost.
   */
  drain(): void {
    while (this.#queue.length > 0) this.#flushBatch();
    this.#commitOpen();
    if (this.#durability === 'os' && this.#notDurable > 0) this.#checkpoint();
  }

  close(): void {
    this.drain();
    clearTimeout(this.#waitTimer);
    clearTimeout(this.#commitTimer);
    clearInterval(this.#checkpointTimer);
    this.#closed = true;
  }

  #flush(): void {
    this.#scheduled = false;
    this.#flushBatch();
    if (this.#queue.length > 0 && !this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  #flushBatch(): void {
    const batch = this.#queue.splice(
      0,
      Math.min(GROUP_COMMIT_MAX_BATCH_LIMIT, this.#groupCommit.maxBatch),
    );
    if (batch.length === 0) return;
    if (this.#durability === 'memory') {
      this.#applyInOpenTransaction(batch);
      return;
    }
    const touched: RunChange[] = [];
    const scope: WriteScope = {
      now: Date.now(),
      touch: (runId, signal) => touched.push({ runId, signal }),
    };
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const skipFsync = this.#synchronous === 'FULL' && batch.every((w) => !w.fsync);
    if (skipFsync) this.#db.exec('PRAGMA synchronous = NORMAL');
    try {
      this.#flushTransaction(batch, scope, outcomes);
    } finally {
      if (skipFsync) this.#db.exec(`PRAGMA synchronous = ${this.#synchronous}`);
    }
    if (outcomes.length < batch.length) return; // the transaction failed; every write was rejected
    this.stats.writes += batch.length;
    this.stats.transactions += 1;
    if (this.#synchronous === 'FULL' && !skipFsync) this.stats.fsyncedTransactions += 1;
    if (this.#durability === 'os') this.#written(batch.filter((w) => w.fsync).length);
    this.#onBatch(
      batch.length,
      this.#synchronous === 'FULL' && !skipFsync,
      batch.filter((w) => w.fsync).length,
    );
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
    if (touched.length > 0) this.#onCommitted(touched);
  }

  #flushTransaction(
    batch: QueuedWrite[],
    scope: WriteScope,
    outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>,
  ): void {
    try {
      this.#db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const w of batch) w.reject(busyOr(error));
      return;
    }
    for (const write of batch) {
      this.#db.exec('SAVEPOINT w');
      try {
        outcomes.push({ ok: true, value: write.apply(scope) });
        this.#db.exec('RELEASE w');
      } catch (error) {
        this.#db.exec('ROLLBACK TO w');
        this.#db.exec('RELEASE w');
        outcomes.push({ ok: false, error });
      }
    }
    if (batch.some((w) => w.fsync)) crashPoint('commit.in-transaction');
    try {
      this.#db.exec('COMMIT');
    } catch (error) {
      try {
        this.#db.exec('ROLLBACK');
      } catch {
        // The transaction is already gone; the commit error below is what callers need.
      }
      outcomes.length = 0;
      for (const w of batch) w.reject(busyOr(error));
    }
  }

  /**
   * `os`: commits written without fsync; a periodic checkpoint (it fsyncs the WAL first) makes them
   * durable.
   */
  #written(n: number): void {
    this.#notDurable += n;
    if (this.#checkpointTimer === undefined) {
      this.#checkpointTimer = setInterval(() => this.#checkpoint(), OS_CHECKPOINT_INTERVAL_MS);
      this.#checkpointTimer.unref();
    }
  }

  #checkpoint(): void {
    if (this.#notDurable === 0) return;
    try {
      const before = this.#notDurable;
      this.#db.exec('PRAGMA wal_checkpoint(PASSIVE)');
      this.#notDurable -= before;
    } catch {
      // Busy: the next interval tries again; the count stays honest meanwhile.
    }
  }

  /**
   * `memory`: applies the batch inside the open transaction and acknowledges it at once. The
   * transaction commits every max-wait interval (or when it holds max-batch writes); a crash before
   * then loses what it holds, as documented.
   */
  #applyInOpenTransaction(batch: QueuedWrite[]): void {
    if (!this.#open) {
      try {
        this.#db.exec('BEGIN IMMEDIATE');
      } catch (error) {
        for (const w of batch) w.reject(busyOr(error));
        return;
      }
      this.#open = true;
      this.#commitTimer = setTimeout(
        () => this.#commitOpen(),
        this.#groupCommit.maxWaitMs || MEMORY_COMMIT_INTERVAL_MS_DEFAULT,
      );
      this.#commitTimer.unref();
    }
    const touched: RunChange[] = [];
    const scope: WriteScope = {
      now: Date.now(),
      touch: (runId, signal) => touched.push({ runId, signal }),
    };
    this.#onBatch(batch.length, false, batch.filter((w) => w.fsync).length);
    for (const write of batch) {
      this.#db.exec('SAVEPOINT w');
      try {
        const value = write.apply(scope);
        this.#db.exec('RELEASE w');
        this.#notDurable++;
        write.resolve(value);
      } catch (error) {
        this.#db.exec('ROLLBACK TO w');
        this.#db.exec('RELEASE w');
        write.reject(error);
      }
    }
    this.stats.writes += batch.length;
    if (touched.length > 0) this.#onCommitted(touched);
    if (this.#notDurable >= this.#groupCommit.maxBatch) this.#commitOpen();
  }

  #commitOpen(): void {
    if (!this.#open) return;
    clearTimeout(this.#commitTimer);
    this.#open = false;
    crashPoint('commit.in-transaction');
    try {
      this.#db.exec('COMMIT');
      this.stats.transactions += 1;
    } catch {
      // Acknowledged writes are lost: the price of `memory`, counted so it is visible.
      try {
        this.#db.exec('ROLLBACK');
      } catch {
        // Already rolled back by SQLite.
      }
      this.stats.lostWrites += this.#notDurable;
    }
    this.#notDurable = 0;
  }
}
