// Named SQL statements of the Postgres store: statements/<name>.sql, written with `:name` parameters and sent with
// `$N` placeholders. Binding is strict both ways: a missing or an unexpected parameter throws.
import { readdirSync, readFileSync } from 'node:fs';
import type { QueryResultRow } from 'pg';
import { toPositional } from '../sql-params.ts';

const STATEMENTS_DIR = new URL('./statements/', import.meta.url);

export const PG_STATEMENT_NAMES = [
  'insert-tenant', 'find-tenant-by-name', 'insert-api-key', 'find-tenant-by-key',
  'insert-run', 'find-run-by-idempotency-key', 'get-run', 'list-runs',
  'insert-events', 'allocate-event-seqs', 'claim-runs', 'heartbeat', 'release-leases', 'expire-foreign-leases',
  'commit-run', 'commit-effects', 'upsert-journal', 'load-journal', 'list-events', 'request-cancel',
  'insert-input', 'get-input', 'consume-input', 'wake-on-input', 'wake-run', 'wake-if-ready', 'insert-audit',
  'find-execution', 'resolve-execution', 'find-held-runs', 'readmit-run', 'claim-probation-runs',
  'tenant-usage', // model gateway (issue 5)
  'live-run-counts', 'run-queue', 'count-unknown-executions', // live metrics (issue 9)
  'summarize-runs', 'count-ended-runs', 'summarize-tenants', // dashboard (issue 9)
  'update-tenant', 'get-tenant', 'list-tenants', 'count-queued-runs', 'count-held-runs', // tenant quotas (issue 7)
  'fair-backlog', 'read-fair-clock', 'save-tenant-vtimes', 'save-fair-clock', // fair claiming (issue 7)
  'starved-interactive', 'mark-preempted', // preemption (issue 7)
  'tenant-usage-since', 'wake-budget-waiting-runs', // tenant daily budgets (issue 7)
] as const;
export type PgStatementName = (typeof PG_STATEMENT_NAMES)[number];

export type Params = Record<string, string | number | null>;

/** Anything that runs a query: a pool or a checked-out client. */
export interface Queryable {
  query<R extends QueryResultRow>(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: R[]; rowCount: number | null }>;
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
    const result = await db.query<Record<string, unknown>>({ name: `keel-${this.name}`, text: this.#text, values: this.#bind(params) });
    return result.rows;
  }

  async row(db: Queryable, params: Params = {}): Promise<Record<string, unknown> | undefined> {
    return (await this.rows(db, params))[0];
  }

  async run(db: Queryable, params: Params = {}): Promise<number> {
    const result = await db.query({ name: `keel-${this.name}`, text: this.#text, values: this.#bind(params) });
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
      throw new Error(`${this.name}.sql: unexpected parameter(s) ${unexpected.map((k) => `:${k}`).join(', ')}`);
    }
    return values;
  }
}

export type PgStatements = Record<PgStatementName, PgStatement>;

export function loadPgStatements(): PgStatements {
  const files = new Set(readdirSync(STATEMENTS_DIR).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4)));
  const loaded = {} as PgStatements;
  for (const name of PG_STATEMENT_NAMES) {
    if (!files.has(name)) throw new Error(`missing SQL statement file postgres/statements/${name}.sql`);
    loaded[name] = new PgStatement(name, readFileSync(new URL(`${name}.sql`, STATEMENTS_DIR), 'utf8'));
    files.delete(name);
  }
  if (files.size > 0) throw new Error(`unregistered SQL statement files: ${[...files].join(', ')}`);
  return loaded;
}
