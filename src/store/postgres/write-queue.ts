// Group commit for the Postgres store: writes queued while transactions are in flight share the
// next one (one WAL flush for many runs), and with a max wait a write waits up to that long for
// others to join its transaction. A few transactions may be in flight, but never two with writes of
// the same run, so commits of one run apply in the order they were submitted. A batch runs without
// savepoints; if one write fails, the batch is rolled back and each write is retried alone, so one
// bad write never fails another. Changes are announced with pg_notify inside the transaction (heard
// by other processes only if it commits) and to local listeners after the commit. A batch of only
// standalone merged writes (effect commits: one statement that is a whole transaction, audits and
// announces included) is sent without BEGIN and COMMIT: one round trip.
import { crashPoint } from '../../domain/crash-points.ts';
import type { Pool, PoolClient } from 'pg';
import { KeelError } from '../../domain/keel-error.ts';
import type { ChangeSignal, CommitBatchListener, RunChange } from '../store.ts';

export const PG_WRITE_BATCH_MAX_OPS = 512;
/**
 * Group-commit transactions in flight at once. More than one lets Postgres overlap their WAL
 * flushes (its own group commit); a run's writes are never in two transactions at once, so they
 * still apply in submission order.
 */
export const PG_WRITE_TRANSACTIONS_MAX = 3;
export const PG_WRITE_QUEUE_MAX_OPS = 100_000;
/**
 * Channel that carries change notifications between Keel processes (suffixed with the schema when
 * one is set).
 */
export const CHANGE_CHANNEL = 'keel_changes';
/**
 * Acknowledged batches remembered for the not-durable count (a bound on memory, far above one flush
 * window's worth).
 */
const RECENT_ACKS_MAX = 10_000;
/** pg_notify payloads must stay under 8000 bytes; changes are sent in chunks well below that. */
const NOTIFY_CHANGES_PER_MESSAGE = 60;

export interface PgWriteScope {
  readonly client: PoolClient;
  readonly now: number;
  touch(runId: string, signal: ChangeSignal): void;
  /**
   * Set when a standalone merger's statement runs as its own transaction (autocommit): the
   * statement must announce what it changes itself (pg_notify on `channel` with `{ origin, changes
   * }`), and `touch` then tells local listeners only. Unset inside a transaction, whose COMMIT
   * announces what was touched.
   */
  readonly announce: { channel: string; origin: string } | undefined;
}

/**
 * Applies many writes of one kind in one statement (e.g. effect commits of different runs),
 * returning one value per payload, in order. Payloads in one call never share a key, so each key's
 * writes still apply in order.
 */
export type Merger = (scope: PgWriteScope, payloads: unknown[]) => Promise<unknown[]>;

interface QueuedWrite {
  fsync: boolean;
  /** When it was queued (ms): the max wait counts from the oldest queued write. */
  queuedAt: number;
  /**
   * The run it writes, if any: writes with the same key never share or overlap transactions out of
   * order.
   */
  key: string | undefined;
  /**
   * In a transaction of its own: it takes a lock other processes wait for, so it must not wait for
   * others' writes.
   */
  alone: boolean;
  /**
   * Every statement it sends is a whole transaction by itself: sent without BEGIN and COMMIT (it is
   * always alone in its batch).
   */
  autocommit: boolean;
  apply(scope: PgWriteScope): Promise<unknown>;
  /**
   * `standalone`: the merger's one statement is a whole transaction (writes, audits, announces), so
   * a batch of only such writes runs in autocommit.
   */
  merge?: { merger: Merger; key: string; payload: unknown; standalone: boolean };
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class PgWriteQueue {
  readonly #pool: Pool;
  readonly #origin: string;
  readonly #channel: string;
  readonly #onCommitted: (changes: readonly RunChange[]) => void;
  readonly #onBatch: CommitBatchListener;
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  /** The max-wait timer, while one is pending (cleared when a full batch can go at once). */
  #waitTimer: NodeJS.Timeout | undefined;
  #inFlight = 0;
  /** Runs with a write in a transaction now: their next writes wait for it. */
  readonly #busyKeys = new Set<string>();
  #closed = false;
  readonly stats = { writes: 0, transactions: 0, fsyncedTransactions: 0 };

  /** Most writes one transaction takes (group commit's max batch). */
  readonly #maxBatch: number;
  /**
   * How long a write may wait for others to join its transaction (group commit's max wait); 0: the
   * next turn.
   */
  readonly #maxWaitMs: number;
  /**
   * Times (ms) and sizes of acknowledged fsync-class batches, newest last: what `notDurable` counts
   * from.
   */
  readonly #recentAcks: Array<{ at: number; n: number }> = [];
  /**
   * Sessions commit with synchronous_commit on (durability fsync or replicated): an acknowledged
   * commit is flushed.
   */
  readonly #flushesOnCommit: boolean;

  constructor(
    pool: Pool,
    origin: string,
    channel: string,
    onCommitted: (changes: readonly RunChange[]) => void,
    options: {
      maxBatch?: number;
      maxWaitMs?: number;
      flushesOnCommit?: boolean;
      onBatch?: CommitBatchListener;
    } = {},
  ) {
    this.#maxBatch = Math.min(options.maxBatch ?? PG_WRITE_BATCH_MAX_OPS, PG_WRITE_BATCH_MAX_OPS);
    this.#maxWaitMs = options.maxWaitMs ?? 0;
    this.#flushesOnCommit = options.flushesOnCommit ?? true;
    this.#pool = pool;
    this.#origin = origin;
    this.#channel = channel;
    this.#onCommitted = onCommitted;
    this.#onBatch = options.onBatch ?? (() => {});
  }

  /**
   * Writes acknowledged within the last `windowMs` (with synchronous_commit off: those the WAL
   * writer may not have flushed yet).
   */
  acknowledgedWithin(windowMs: number): number {
    const since = Date.now() - windowMs;
    let n = 0;
    for (let i = this.#recentAcks.length - 1; i >= 0 && this.#recentAcks[i]!.at >= since; i--)
      n += this.#recentAcks[i]!.n;
    return n;
  }

  /**
   * Queues a write that may be applied together with neighbouring writes of the same merger
   * (distinct keys). `standalone`: the merger's statement is a transaction by itself (see
   * PgWriteScope.announce), so a batch of nothing else is sent in one round trip.
   */
  submitMergeable<P, T>(
    options: { fsync: boolean; standalone?: boolean },
    merger: (scope: PgWriteScope, payloads: P[]) => Promise<T[]>,
    key: string,
    payload: P,
  ): Promise<T> {
    const merge = {
      merger: merger as unknown as Merger,
      key,
      payload,
      standalone: options.standalone === true,
    };
    return this.#enqueue(
      options,
      async (scope) => (await merge.merger(scope, [payload]))[0],
      merge,
      key,
    ) as Promise<T>;
  }

  /**
   * Queues a write; `key` (a run id) keeps writes about the same run in order across concurrent
   * transactions; `alone` gives it a transaction of its own (a fair claim holds the tenants it
   * locked only as long as it takes itself); `autocommit` (implies `alone`): each of its statements
   * is a transaction by itself, sent without BEGIN and COMMIT (it must not need them to be atomic
   * together, and must set its own synchronous_commit).
   */
  submit<T>(
    options: { fsync: boolean; key?: string; alone?: boolean; autocommit?: boolean },
    apply: (scope: PgWriteScope) => Promise<T>,
  ): Promise<T> {
    return this.#enqueue(options, apply, undefined, options.key) as Promise<T>;
  }

  #enqueue(
    options: { fsync: boolean; alone?: boolean; autocommit?: boolean },
    apply: (scope: PgWriteScope) => Promise<unknown>,
    merge: QueuedWrite['merge'],
    key: string | undefined,
  ): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error('store is closed'));
    if (this.#queue.length >= PG_WRITE_QUEUE_MAX_OPS) {
      return Promise.reject(
        new KeelError(
          'store_busy',
          `the store's write queue is full (${PG_WRITE_QUEUE_MAX_OPS} writes)`,
          { retryable: true, retryAfterMs: 100 },
        ),
      );
    }
    return new Promise<unknown>((resolve, reject) => {
      this.#queue.push({
        fsync: options.fsync,
        queuedAt: Date.now(),
        key,
        alone: options.alone === true || options.autocommit === true,
        autocommit: options.autocommit === true,
        apply,
        ...(merge !== undefined ? { merge } : {}),
        resolve,
        reject,
      });
      this.#schedule();
    });
  }

  /** Waits until everything queued so far is written. */
  async close(): Promise<void> {
    while (this.#inFlight > 0 || this.#queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    this.#closed = true;
  }

  #schedule(): void {
    if (this.#waitTimer !== undefined && this.#queue.length >= this.#maxBatch) {
      // A full batch need not wait for more writes to join it.
      clearTimeout(this.#waitTimer);
      this.#waitTimer = undefined;
      this.#scheduled = false;
    }
    if (this.#scheduled) return;
    this.#scheduled = true;
    const waitMs =
      this.#queue.length >= this.#maxBatch
        ? 0
        : this.#queue[0]!.queuedAt + this.#maxWaitMs - Date.now();
    if (waitMs > 0) {
      this.#waitTimer = setTimeout(() => {
        this.#waitTimer = undefined;
        this.#startTransactions();
      }, waitMs);
      return;
    }
    setImmediate(() => this.#startTransactions());
  }

  #startTransactions(): void {
    this.#scheduled = false;
    while (this.#inFlight < PG_WRITE_TRANSACTIONS_MAX && this.#queue.length > 0) {
      const batch = this.#takeBatch();
      if (batch.length === 0) break;
      this.#inFlight++;
      void this.#run(batch).finally(() => {
        this.#inFlight--;
        for (const write of batch) if (write.key !== undefined) this.#busyKeys.delete(write.key);
        if (this.#queue.length > 0) this.#schedule();
      });
    }
  }

  /**
   * Takes queued writes in order, leaving (with every later write of the same run) those whose run
   * is in flight.
   */
  #takeBatch(): QueuedWrite[] {
    const batch: QueuedWrite[] = [];
    const rest: QueuedWrite[] = [];
    const held = new Set<string>();
    for (const write of this.#queue) {
      const blocked =
        write.key !== undefined && (this.#busyKeys.has(write.key) || held.has(write.key));
      const full =
        batch.length >= this.#maxBatch || (batch.length > 0 && (write.alone || batch[0]!.alone));
      if (blocked || full) {
        if (write.key !== undefined) held.add(write.key);
        rest.push(write);
        continue;
      }
      batch.push(write);
    }
    for (const write of batch) if (write.key !== undefined) this.#busyKeys.add(write.key);
    this.#queue = rest;
    return batch;
  }

  async #run(batch: QueuedWrite[]): Promise<void> {
    const ok = await this.#transaction(batch);
    if (!ok) for (const write of batch) await this.#transaction([write]);
  }

  /**
   * Runs a transaction, again (bounded, jittered) when Postgres aborted it for a retryable reason.
   */
  async #transaction(batch: QueuedWrite[]): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#attempt(batch, attempt < PG_RETRYABLE_ATTEMPTS);
      if (outcome !== 'retry') return outcome;
      await new Promise((r) => setTimeout(r, Math.random() * PG_RETRY_DELAY_MAX_MS * attempt));
    }
  }

  /**
   * Runs writes in one transaction. False when one of several failed (they are then retried one by
   * one); 'retry' when Postgres aborted it for a reason that a new attempt resolves (and
   * `mayRetry`): nothing was applied.
   */
  async #attempt(batch: QueuedWrite[], mayRetry: boolean): Promise<boolean | 'retry'> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      for (const write of batch) write.reject(unavailable(error));
      return true;
    }
    // The pool's error handler covers idle clients only: a checked-out client whose connection dies
    // (Postgres restarting) emits 'error', and with no listener that event would crash the process.
    // The failing query reports the loss below; release(error) then discards the client.
    client.on('error', ignoreClientError);
    const touched: RunChange[] = [];
    const standalone = isStandalone(batch) || (batch.length === 1 && batch[0]!.autocommit);
    const scope: PgWriteScope = {
      client,
      now: Date.now(),
      touch: (runId, signal) => touched.push({ runId, signal }),
      announce: standalone ? { channel: this.#channel, origin: this.#origin } : undefined,
    };
    const values: unknown[] = [];
    const fsync = batch.some((w) => w.fsync);
    try {
      if (standalone) {
        // One statement, its own transaction (autocommit): a crash before it is sent leaves what a
        // crash before COMMIT leaves, nothing.
        crashPoint('commit.in-transaction');
        await applyAll(batch, scope, values);
      } else await this.#applyInTransaction(client, batch, scope, values, touched, fsync);
    } catch (error) {
      if (!standalone) await client.query('ROLLBACK').catch(() => {});
      client.removeListener('error', ignoreClientError);
      client.release(isConnectionError(error) ? (error as Error) : undefined);
      if (mayRetry && RETRYABLE_SQLSTATES.has((error as { code?: string }).code ?? ''))
        return 'retry';
      if (batch.length > 1 && !isConnectionError(error)) return false;
      for (const write of batch)
        write.reject(isConnectionError(error) ? unavailable(error) : error);
      return true;
    }
    client.removeListener('error', ignoreClientError);
    client.release();
    this.stats.writes += batch.length;
    this.stats.transactions += 1;
    if (fsync) {
      this.stats.fsyncedTransactions += 1;
      this.#recentAcks.push({ at: Date.now(), n: batch.filter((w) => w.fsync).length });
      if (this.#recentAcks.length > RECENT_ACKS_MAX)
        this.#recentAcks.splice(0, this.#recentAcks.length - RECENT_ACKS_MAX);
    }
    this.#onBatch(
      batch.length,
      fsync && this.#flushesOnCommit,
      batch.filter((w) => w.fsync).length,
    );
    for (const [i, write] of batch.entries()) write.resolve(values[i]);
    if (touched.length > 0) this.#onCommitted(touched);
    return true;
  }

  /** BEGIN, the batch's writes, their announcements and COMMIT: three round trips and the writes'. */
  async #applyInTransaction(
    client: PoolClient,
    batch: QueuedWrite[],
    scope: PgWriteScope,
    values: unknown[],
    touched: readonly RunChange[],
    fsync: boolean,
  ): Promise<void> {
    // Claims and heartbeats acknowledge nothing outside Keel: the next flushed commit makes them
    // durable too.
    await client.query(fsync ? 'BEGIN' : 'BEGIN; SET LOCAL synchronous_commit = off');
    await applyAll(batch, scope, values);
    if (fsync) crashPoint('commit.in-transaction');
    // The notifications ride in the COMMIT's round trip (one simple-protocol message; payloads
    // escaped by the driver).
    const notifications: string[] = [];
    for (let i = 0; i < touched.length; i += NOTIFY_CHANGES_PER_MESSAGE) {
      const payload = JSON.stringify({
        origin: this.#origin,
        changes: touched.slice(i, i + NOTIFY_CHANGES_PER_MESSAGE),
      });
      notifications.push(
        `SELECT pg_notify(${client.escapeLiteral(this.#channel)}, ${client.escapeLiteral(payload)});`,
      );
    }
    await client.query(`${notifications.join(' ')} COMMIT`);
  }
}

function ignoreClientError(): void {}

/**
 * A batch that can go as one autocommit statement: only durable writes of one standalone merger,
 * each for a different run (applyAll then makes exactly one merger call).
 */
function isStandalone(batch: readonly QueuedWrite[]): boolean {
  const first = batch[0]?.merge;
  if (first === undefined || !first.standalone) return false;
  const keys = new Set<string>();
  for (const write of batch) {
    if (!write.fsync || write.merge?.merger !== first.merger || keys.has(write.merge.key))
      return false;
    keys.add(write.merge.key);
  }
  return true;
}

/**
 * Applies a batch in order, merging runs of consecutive mergeable writes (same merger, distinct
 * keys) into one call.
 */
async function applyAll(
  batch: QueuedWrite[],
  scope: PgWriteScope,
  values: unknown[],
): Promise<void> {
  let i = 0;
  while (i < batch.length) {
    const first = batch[i]!;
    if (first.merge === undefined) {
      values.push(await first.apply(scope));
      i++;
      continue;
    }
    const keys = new Set<string>();
    const group: QueuedWrite[] = [];
    while (i < batch.length) {
      const merge = batch[i]!.merge;
      if (merge === undefined || merge.merger !== first.merge.merger || keys.has(merge.key)) break;
      keys.add(merge.key);
      group.push(batch[i]!);
      i++;
    }
    values.push(
      ...(await first.merge.merger(
        scope,
        group.map((w) => w.merge!.payload),
      )),
    );
  }
}

/**
 * SQLSTATEs after which the whole transaction was rolled back and a new attempt can succeed:
 * serialization failure, deadlock (multi-run writes lock rows in id order, so this should not
 * happen, but a retry is the safe answer).
 */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
export const PG_RETRYABLE_ATTEMPTS = 5;
export const PG_RETRY_DELAY_MAX_MS = 20;

/** Connection-level failures (server restarting, network): retryable, typed as store_busy. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return (
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code) ||
    (error instanceof Error &&
      /Connection terminated|connection is closed|Client has encountered a connection error/i.test(
        error.message,
      ))
  );
}

export function unavailable(error: unknown): KeelError {
  return new KeelError(
    'store_busy',
    `the database is unavailable: ${error instanceof Error ? error.message : String(error)}`,
    { retryable: true, retryAfterMs: 500, cause: error },
  );
}
