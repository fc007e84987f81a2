// Named SQL statements: each lives in statements/<name>.sql with a header giving its parameters and
// result, and is prepared once per connection. Code refers to statements by name only, never by
// inline SQL. Parameters are written `:name` in the files and bound by position: node:sqlite's
// named binding costs about twice as much per call, and the commit path binds ~30 parameters per
// effect. Binding stays strict both ways: a missing parameter and an unexpected one both throw, so
// a typo cannot silently bind NULL.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import {
  bindByPosition,
  readStatementDirectory,
  readStatementFiles,
  toPositional,
} from '../sql-params.ts';
import { SHARED_STATEMENT_NAMES } from '../statement-names.ts';

const STATEMENTS_DIR = new URL('./statements/', import.meta.url);

export const STATEMENT_NAMES = [
  ...SHARED_STATEMENT_NAMES,
  // SQLite only: one row per statement where Postgres sends a JSON array.
  'insert-event',
  'claim-tenant-runs',
  'upsert-journal-entry',
] as const;
export type StatementName = (typeof STATEMENT_NAMES)[number];

export type Params = Record<string, SQLInputValue>;

/** A prepared statement called with named parameters and bound by position. */
export class NamedStatement {
  readonly #statement: StatementSync;
  readonly #names: readonly string[];
  readonly #file: string;

  constructor(db: DatabaseSync, file: string, sql: string) {
    const { text, names } = toPositional(sql, (n) => `?${n}`);
    this.#statement = db.prepare(text);
    this.#names = names;
    this.#file = file;
  }

  run(params: Params = {}): { changes: number | bigint } {
    return this.#statement.run(...this.#bind(params));
  }

  get(params: Params = {}): Record<string, unknown> | undefined {
    return this.#statement.get(...this.#bind(params)) as Record<string, unknown> | undefined;
  }

  all(params: Params = {}): Array<Record<string, unknown>> {
    return this.#statement.all(...this.#bind(params)) as Array<Record<string, unknown>>;
  }

  #bind(params: Params): SQLInputValue[] {
    return bindByPosition(this.#file, this.#names, params);
  }
}

export type Statements = Record<StatementName, NamedStatement>;

export function prepareStatements(db: DatabaseSync): Statements {
  const prepared = {} as Statements;
  for (const [name, sql] of readStatementFiles(STATEMENTS_DIR, STATEMENT_NAMES)) {
    prepared[name] = new NamedStatement(db, `${name}.sql`, sql);
  }
  return prepared;
}

/** Every statement file of a directory, prepared (a store area's statements, looked up by name). */
export function prepareDirectory(db: DatabaseSync, dir: URL): Map<string, NamedStatement> {
  const prepared = new Map<string, NamedStatement>();
  for (const [name, sql] of readStatementDirectory(dir)) {
    prepared.set(name, new NamedStatement(db, `${name}.sql`, sql));
  }
  return prepared;
}
