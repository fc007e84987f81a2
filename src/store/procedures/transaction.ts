// The transaction port every store procedure is written against: a procedure is a generator that
// yields named statements (`const row = yield* one('get-run', { id })`, `yield run('insert-audit',
// {...})`) and receives their results, so one text of each multi-statement write serves both
// backends. SQLite drives it synchronously inside its one write transaction (no promise per
// statement); Postgres drives it with `await`. Procedures never see a connection, never branch on a
// backend's name (only on its named dialect flags) and hold no SQL: that stays per dialect in the
// .sql files.
import type { ChangeSignal } from '../store.ts';

export type Row = Record<string, unknown>;
export type Params = Record<string, string | number | null | Uint8Array>;

/**
 * One named statement to run: `one` returns the first row (or undefined), `all` every row, `run`
 * the changed-row count.
 */
export interface Step {
  readonly mode: 'one' | 'all' | 'run';
  readonly statement: string;
  readonly params: Params;
}

export type Procedure<T> = Generator<Step, T, unknown>;

/** How a dialect's statements are shaped, where the shared procedures must follow it. */
export interface Dialect {
  /**
   * Rows written together (a commit's events and journal entries, a fair claim's tenants) go as one
   * statement with a JSON parameter (one round trip: Postgres); without it, one statement per row
   * (cheaper than JSON in-process: SQLite).
   */
  readonly bulkStatements: boolean;
  /**
   * Several processes claim from the same store: a fair claim locks only a window of backlogged
   * tenants (FOR UPDATE SKIP LOCKED), never a row every claim needs (Postgres). Without it, a fair
   * claim plans over the whole backlog under the store's one write lock (SQLite).
   */
  readonly sharedFairClaims: boolean;
}

/**
 * What a procedure knows of its transaction: its time, how to report changed runs, and the dialect.
 */
export interface Tx {
  /** Time of the transaction, one value for every write in it. */
  readonly now: number;
  /** Marks a run as changed, so change listeners hear about it after the commit. */
  touch(runId: string, signal: ChangeSignal): void;
  readonly dialect: Dialect;
}

export function* one(
  statement: string,
  params: Params = {},
): Generator<Step, Row | undefined, unknown> {
  return (yield { mode: 'one', statement, params }) as Row | undefined;
}

export function* all(statement: string, params: Params = {}): Generator<Step, Row[], unknown> {
  return (yield { mode: 'all', statement, params }) as Row[];
}

/**
 * A statement whose rows the procedure does not need (an insert, an update), yielded directly:
 * `yield run(...)` (no helper generator: the commit path runs several per effect). The driver's
 * answer is the changed-row count.
 */
export function run(statement: string, params: Params = {}): Step {
  return { mode: 'run', statement, params };
}

/**
 * Drives a procedure synchronously (SQLite): each statement runs as it is yielded; an error is
 * thrown back into it.
 */
export function runSync<T>(procedure: Procedure<T>, execute: (step: Step) => unknown): T {
  let next = procedure.next();
  while (next.done !== true) {
    let value: unknown;
    try {
      value = execute(next.value);
    } catch (error) {
      next = procedure.throw(error);
      continue;
    }
    next = procedure.next(value);
  }
  return next.value;
}

/**
 * Drives a procedure with `await` (Postgres): each statement is sent when yielded, the next one
 * after its answer.
 */
export async function runAsync<T>(
  procedure: Procedure<T>,
  execute: (step: Step) => Promise<unknown>,
): Promise<T> {
  let next = procedure.next();
  while (next.done !== true) {
    let value: unknown;
    try {
      value = await execute(next.value);
    } catch (error) {
      next = procedure.throw(error);
      continue;
    }
    next = procedure.next(value);
  }
  return next.value;
}
