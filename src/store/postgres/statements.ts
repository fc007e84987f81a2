// Named SQL statements of the Postgres store: statements/<name>.sql, written with `:name`
// parameters and sent with `$N` placeholders. Binding is strict both ways: a missing or an
// unexpected parameter throws.
import type { QueryResultRow } from 'pg';
import {
  bindByPosition,
  readStatementDirectory,
  readStatementFiles,
  toPositional,
} from '../sql-params.ts';
import { SHARED_STATEMENT_NAMES } from '../statement-names.ts';

const STATEMENTS_DIR = new URL('./statements/', import.meta.url);

export const PG_STATEMENT_NAMES = [
  ...SHARED_STATEMENT_NAMES,
  // Postgres only: bulk statements, the merged effect commit, server settings, shared rate windows,
  // fair claims of several processes (Dialect.sharedFairClaims).
  'insert-events',
  'commit-effects',
  'upsert-journal-entries',
  'read-server-settings',
  'reserve-rate',
  'settle-rate',
  'fair-claim',
  'fair-backlog-unflagged',
  'fair-backlog-weight',
  'claim-fair-refresh',
  'flag-fair-tenants',
] as const;
export type PgStatementName = (typeof PG_STATEMENT_NAMES)[number];

/** Parameter values: scalars, bytes (`:bytes::bytea`), or arrays for Postgres array parameters (`:keys::text[]`). */
export type Params = Record<
  string,
  string | number | null | Uint8Array | ReadonlyArray<string | number | null>
>;

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
    return bindByPosition(`${this.name}.sql`, this.#names, params);
  }
}

export type PgStatements = Record<PgStatementName, PgStatement>;

export function loadPgStatements(): PgStatements {
  const loaded = {} as PgStatements;
  for (const [name, sql] of readStatementFiles(STATEMENTS_DIR, PG_STATEMENT_NAMES)) {
    loaded[name] = new PgStatement(name, sql);
  }
  return loaded;
}

/**
 * Every statement file of a directory (a store area's statements, looked up by name; `prefix` keeps
 * server-side names apart).
 */
export function loadPgStatementDirectory(dir: URL, prefix: string): Map<string, PgStatement> {
  const loaded = new Map<string, PgStatement>();
  for (const [name, sql] of readStatementDirectory(dir)) {
    loaded.set(name, new PgStatement(`${prefix}${name}`, sql));
  }
  return loaded;
}
