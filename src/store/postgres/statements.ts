// Named SQL statements of the Postgres store: statements/<name>.sql, written with `:name`
// parameters and sent with `$N` placeholders. Binding is strict both ways: a missing or an
// unexpected parameter throws.
import { readdirSync, readFileSync } from 'node:fs';
import type { QueryResultRow } from 'pg';
import { toPositional } from '../sql-params.ts';

const STATEMENTS_DIR = new URL('./statements/', import.meta.url);

export const PG_STATEMENT_NAMES = [
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
  'insert-events',
  'allocate-event-seqs',
  'claim-allocation-runs',
  'heartbeat',
  'find-held-runs',
  'release-leases',
  'expire-foreign-leases',
  'commit-run',
  'commit-effect',
  'commit-effects',
  'upsert-journal-entries',
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
  'read-server-settings',
  'reserve-rate',
  'settle-rate',
] as const;
export type PgStatementName = (typeof PG_STATEMENT_NAMES)[number];

/** Parameter values: scalars, or arrays for Postgres array parameters (`:keys::text[]`). */
export type Params = Record<string, string | number | null | ReadonlyArray<string | number | null>>;

/** Anything that runs a query: a pool or a checked-out client. */
export interface Queryable {
  query<R extends QueryResultRow>(config: {
    name?: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: R[]; rowCount: number | null }>;
}

export class PgStatement {
  readonly name: string;
  readonly #text: string;
  readonly #names: readonly string[];

  constructor(name: string, sql: string) {
    const { text, names } = toPositional(sql, (n) => `$${n}`);
    this.name = name;
    this.#text = text;
    this.#names = names;
  }

  async rows(db: Queryable, params: Params = {}): Promise<Array<Record<string, unknown>>> {
    // A named query is prepared once per connection by the server.
    const result = await db.query<Record<string, unknown>>({
      name: `keel-${this.name}`,
      text: this.#text,
      values: this.#bind(params),
    });
    return result.rows;
  }

  async row(db: Queryable, params: Params = {}): Promise<Record<string, unknown> | undefined> {
    return (await this.rows(db, params))[0];
  }

  async run(db: Queryable, params: Params = {}): Promise<number> {
    const result = await db.query({
      name: `keel-${this.name}`,
      text: this.#text,
      values: this.#bind(params),
    });
    return result.rowCount ?? 0;
  }

  #bind(params: Params): unknown[] {
    const values = this.#names.map((name) => {
      const value = params[name];
      if (value === undefined) throw new Error(`${this.name}.sql: missing parameter :${name}`);
      return value;
    });
    if (Object.keys(params).length !== this.#names.length) {
      const unexpected = Object.keys(params).filter((k) => !this.#names.includes(k));
      throw new Error(
        `${this.name}.sql: unexpected parameter(s) ${unexpected.map((k) => `:${k}`).join(', ')}`,
      );
    }
    return values;
  }
}

export type PgStatements = Record<PgStatementName, PgStatement>;

export function loadPgStatements(): PgStatements {
  const files = new Set(
    readdirSync(STATEMENTS_DIR)
      .filter((f) => f.endsWith('.sql'))
      .map((f) => f.slice(0, -4)),
  );
  const loaded = {} as PgStatements;
  for (const name of PG_STATEMENT_NAMES) {
    if (!files.has(name))
      throw new Error(`missing SQL statement file postgres/statements/${name}.sql`);
    loaded[name] = new PgStatement(
      name,
      readFileSync(new URL(`${name}.sql`, STATEMENTS_DIR), 'utf8'),
    );
    files.delete(name);
  }
  if (files.size > 0) throw new Error(`unregistered SQL statement files: ${[...files].join(', ')}`);
  return loaded;
}

/**
 * Every statement file of a directory (a store area's statements, looked up by name; `prefix` keeps
 * server-side names apart).
 */
export function loadPgStatementDirectory(dir: URL, prefix: string): Map<string, PgStatement> {
  const loaded = new Map<string, PgStatement>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    const name = file.slice(0, -4);
    loaded.set(name, new PgStatement(`${prefix}${name}`, readFileSync(new URL(file, dir), 'utf8')));
  }
  return loaded;
}
