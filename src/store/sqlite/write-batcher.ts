// Group commit for the SQLite store: every write is queued, and all writes queued during one event-loop turn
// are applied in one transaction (one fsync), each inside its own savepoint so one failing write never undoes
// another. A write's promise settles only after the transaction is durable, per the configured durability.
import type { DatabaseSync } from 'node:sqlite';
import { KeelError } from '../../errors/keel-error.ts';
import type { ChangeSignal, RunChange } from '../store.ts';
import { telemetry } from '../../telemetry/telemetry.ts';

/** Upper bound on writes sharing one transaction, so one fsync never waits behind an unbounded batch. */
export const WRITE_BATCH_MAX_OPS = 1024;
/** Upper bound on queued writes; past it, writers get a retryable store_busy instead of unbounded memory. */
export const WRITE_QUEUE_MAX_OPS = 100_000;

/** What a caller refused with store_busy is told to wait before retrying. */
export const STORE_BUSY_RETRY_AFTER_MS = 100;

/** SQLite's "busy"/"locked" failures are transient: a typed, retryable store_busy; anything else as it is. */
function busyOr(error: unknown): unknown {
  const code = (error as { errcode?: number; code?: string }).errcode;
  const message = error instanceof Error ? error.message : '';
  const busy = code === 5 || code === 6 || /database is (locked|busy)/i.test(message);
  return busy ? new KeelError('store_busy', `the store is busy: ${message}`, { retryable: true, retryAfterMs: STORE_BUSY_RETRY_AFTER_MS, cause: error }) : error;
}

export interface WriteScope {
  /** Time of the transaction, one value for every write in the batch. */
  readonly now: number;
  /** Marks a run as changed, so change listeners hear about it after the commit. */
  touch(runId: string, signal: ChangeSignal): void;
}

export interface WriteOptions {
  /** False for writes that acknowledge nothing outside Keel (claims, heartbeats): they need not wait for an fsync. */
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
  /** The connection's `synchronous` setting, restored after a batch that did without fsync. */
  readonly #synchronous: string;
  readonly #onCommitted: (changes: readonly RunChange[]) => void;
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  #closed = false;
  /** Writes acknowledged so far, transactions used for them, and how many of those were fsync'd (group-commit statistics). */
  readonly stats = { writes: 0, transactions: 0, fsyncedTransactions: 0 };

  constructor(db: DatabaseSync, synchronous: string, onCommitted: (changes: readonly RunChange[]) => void) {
    this.#db = db;
    this.#synchronous = synchronous;
    this.#onCommitted = onCommitted;
  }

  get queued(): number {
    return this.#queue.length;
  }

  submit<T>(apply: (scope: WriteScope) => T): Promise<T>;
  submit<T>(options: WriteOptions, apply: (scope: WriteScope) => T): Promise<T>;
  submit<T>(first: WriteOptions | ((scope: WriteScope) => T), second?: (scope: WriteScope) => T): Promise<T> {
    const apply = typeof first === 'function' ? first : second!;
    const fsync = typeof first === 'function' ? true : first.fsync;
    if (this.#closed) return Promise.reject(new Error('store is closed'));
    if (this.#queue.length >= WRITE_QUEUE_MAX_OPS) {
      return Promise.reject(new KeelError('store_busy', `the store's write queue is full (${WRITE_QUEUE_MAX_OPS} writes)`, { retryable: true, retryAfterMs: STORE_BUSY_RETRY_AFTER_MS }));
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fsync, apply, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /** Applies what is queued now; used by close() so no acknowledged write is lost. */
  drain(): void {
    while (this.#queue.length > 0) this.#flushBatch();
  }

  close(): void {
    this.drain();
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
    const batch = this.#queue.splice(0, WRITE_BATCH_MAX_OPS);
    if (batch.length === 0) return;
    const touched: RunChange[] = [];
    const scope: WriteScope = { now: Date.now(), touch: (runId, signal) => touched.push({ runId, signal }) };
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
    telemetry.commitBatch(batch.length, this.#synchronous === 'FULL' && !skipFsync, batch.filter((w) => w.fsync).length);
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
    if (touched.length > 0) this.#onCommitted(touched);
  }

  #flushTransaction(batch: QueuedWrite[], scope: WriteScope, outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>): void {
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
}
