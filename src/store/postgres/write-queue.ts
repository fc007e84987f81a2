// Group commit for the Postgres store: writes queued while a transaction is in flight share the next one (one WAL
// flush for many runs). One transaction at a time, so commits of one run apply in the order they were submitted.
// A batch runs without savepoints; if one write fails, the batch is rolled back and each write is retried alone,
// so one bad write never fails another. Changes are announced with pg_notify inside the transaction (heard by other
// processes only if it commits) and to local listeners after the commit.
import type { Pool, PoolClient } from 'pg';
import { KeelError } from '../../errors/keel-error.ts';
import type { ChangeSignal, RunChange } from '../store.ts';

export const PG_WRITE_BATCH_MAX_OPS = 512;
export const PG_WRITE_QUEUE_MAX_OPS = 100_000;
/** Channel that carries change notifications between Keel processes (suffixed with the schema when one is set). */
export const CHANGE_CHANNEL = 'keel_changes';
/** pg_notify payloads must stay under 8000 bytes; changes are sent in chunks well below that. */
const NOTIFY_CHANGES_PER_MESSAGE = 60;

export interface PgWriteScope {
  readonly client: PoolClient;
  readonly now: number;
  touch(runId: string, signal: ChangeSignal): void;
}

interface QueuedWrite {
  fsync: boolean;
  apply(scope: PgWriteScope): Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class PgWriteQueue {
  readonly #pool: Pool;
  readonly #origin: string;
  readonly #channel: string;
  readonly #onCommitted: (changes: readonly RunChange[]) => void;
  #queue: QueuedWrite[] = [];
  #flushing = false;
  #closed = false;
  readonly stats = { writes: 0, transactions: 0, fsyncedTransactions: 0 };

  constructor(pool: Pool, origin: string, channel: string, onCommitted: (changes: readonly RunChange[]) => void) {
    this.#pool = pool;
    this.#origin = origin;
    this.#channel = channel;
    this.#onCommitted = onCommitted;
  }

  submit<T>(options: { fsync: boolean }, apply: (scope: PgWriteScope) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('store is closed'));
    if (this.#queue.length >= PG_WRITE_QUEUE_MAX_OPS) {
      return Promise.reject(new KeelError('store_busy', `the store's write queue is full (${PG_WRITE_QUEUE_MAX_OPS} writes)`, { retryable: true, retryAfterMs: 100 }));
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fsync: options.fsync, apply, resolve: resolve as (v: unknown) => void, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  /** Waits until everything queued so far is written. */
  async close(): Promise<void> {
    while (this.#flushing || this.#queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    this.#closed = true;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, PG_WRITE_BATCH_MAX_OPS);
        const ok = await this.#transaction(batch);
        if (!ok) for (const write of batch) await this.#transaction([write]);
      }
    } finally {
      this.#flushing = false;
    }
  }

  /** Runs writes in one transaction. False when one of several failed (they are then retried one by one). */
  async #transaction(batch: QueuedWrite[]): Promise<boolean> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      for (const write of batch) write.reject(unavailable(error));
      return true;
    }
    // The pool's error handler covers idle clients only: a checked-out client whose connection dies (Postgres
    // restarting) emits 'error', and with no listener that event would crash the process. The failing query
    // reports the loss below; release(error) then discards the client.
    client.on('error', ignoreClientError);
    const touched: RunChange[] = [];
    const scope: PgWriteScope = { client, now: Date.now(), touch: (runId, signal) => touched.push({ runId, signal }) };
    const values: unknown[] = [];
    const fsync = batch.some((w) => w.fsync);
    try {
      await client.query('BEGIN');
      // Claims and heartbeats acknowledge nothing outside Keel: the next flushed commit makes them durable too.
      if (!fsync) await client.query('SET LOCAL synchronous_commit = off');
      for (const write of batch) values.push(await write.apply(scope));
      for (let i = 0; i < touched.length; i += NOTIFY_CHANGES_PER_MESSAGE) {
        const payload = JSON.stringify({ origin: this.#origin, changes: touched.slice(i, i + NOTIFY_CHANGES_PER_MESSAGE) });
        await client.query('SELECT pg_notify($1, $2)', [this.#channel, payload]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.removeListener('error', ignoreClientError);
      client.release(isConnectionError(error) ? (error as Error) : undefined);
      if (batch.length > 1 && !isConnectionError(error)) return false;
      for (const write of batch) write.reject(isConnectionError(error) ? unavailable(error) : error);
      return true;
    }
    client.removeListener('error', ignoreClientError);
    client.release();
    this.stats.writes += batch.length;
    this.stats.transactions += 1;
    if (fsync) this.stats.fsyncedTransactions += 1;
    batch.forEach((write, i) => write.resolve(values[i]));
    if (touched.length > 0) this.#onCommitted(touched);
    return true;
  }
}

function ignoreClientError(): void {}

/** Connection-level failures (server restarting, network): retryable, typed as store_busy. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code)
    || (error instanceof Error && /Connection terminated|connection is closed|Client has encountered a connection error/i.test(error.message));
}

export function unavailable(error: unknown): KeelError {
  return new KeelError('store_busy', `the database is unavailable: ${error instanceof Error ? error.message : String(error)}`, { retryable: true, retryAfterMs: 500, cause: error });
}
