// Named SQL statements: each lives in statements/<name>.sql with a header giving its parameters and
// result, and is prepared once per connection. Code refers to statements by name only, never by
// inline SQL. Parameters are written `:name` in the files and bound by position: node:sqlite's
// named binding costs about twice as much per call, and the commit path binds ~30 parameters per
// effect. Binding stays strict both ways: a missing parameter and an unexpected one both throw, so
// a typo cannot silently bind NULL.
import { readdirSync, readFileSync } from 'node:fs';
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { toPositional } from '../sql-params.ts';

const STATEMENTS_DIR = new URL('./statements/', import.meta.url);

export const STATEMENT_NAMES = [
  'insert-tenant',
  'find-tenant-by-name',
  'insert-api-key',
  'find-tenant-by-key',
  'insert-run',
  'find-run-by-idempotency-key',
  'get-run',
  'lock-run',
  'lock-key',
  'list-runs',
  'insert-event',
  'allocate-event-seqs',
  'claim-tenant-runs',
  'heartbeat',
  'find-held-runs',
  'release-leases',
  'expire-foreign-leases',
  'commit-run',
  'commit-effect',
  'upsert-journal-entry',
  'load-journal',
  'list-events',
  'request-cancel',
  'insert-input',
  'get-input',
  'consume-input',
  'wake-on-input',
  'wake-run',
  'wake-if-ready',
  'insert-audit',
  'find-execution',
  'resolve-execution',
  'readmit-run',
  'claim-probation-runs',
  'tenant-usage',
  'tenant-usage-since',
  'live-run-counts',
  'run-queue',
  'count-unknown-executions',
  'summarize-runs',
  'count-ended-runs',
  'summarize-tenants',
  'update-tenant',
  'get-tenant',
  'list-tenants',
  'count-queued-runs',
  'count-held-runs',
  'wake-budget-waiting-runs',
  'fair-backlog',
  'read-fair-clock',
  'save-tenant-vtimes',
  'save-fair-clock',
  'starved-interactive',
  'mark-preempted',
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
    const values = this.#names.map((name) => {
      const value = params[name];
      if (value === undefined) throw new Error(`${this.#file}: missing parameter :${name}`);
      return value;
    });
    if (Object.keys(params).length !== this.#names.length) {
      const unexpected = Object.keys(params).filter((k) => !this.#names.includes(k));
      throw new Error(
        `${this.#file}: unexpected parameter(s) ${unexpected.map((k) => `:${k}`).join(', ')}`,
      );
    }
    return values;
  }
}

export type Statements = Record<StatementName, NamedStatement>;

export function prepareStatements(db: DatabaseSync): Statements {
  const files = new Set(
    readdirSync(STATEMENTS_DIR)
      .filter((f) => f.endsWith('.sql'))
      .map((f) => f.slice(0, -4)),
  );
  const prepared = {} as Statements;
  for (const name of STATEMENT_NAMES) {
    if (!files.has(name)) throw new Error(`missing SQL statement file statements/${name}.sql`);
    prepared[name] = new NamedStatement(
      db,
      `${name}.sql`,
      readFileSync(new URL(`${name}.sql`, STATEMENTS_DIR), 'utf8'),
    );
    files.delete(name);
  }
  if (files.size > 0) throw new Error(`unregistered SQL statement files: ${[...files].join(', ')}`);
  return prepared;
}

/** Every statement file of a directory, prepared (a store area's statements, looked up by name). */
export function prepareDirectory(db: DatabaseSync, dir: URL): Map<string, NamedStatement> {
  const prepared = new Map<string, NamedStatement>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    prepared.set(
      file.slice(0, -4),
      new NamedStatement(db, file, readFileSync(new URL(file, dir), 'utf8')),
    );
  }
  return prepared;
}
