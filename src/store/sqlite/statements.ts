// Named SQL statements: each lives in statements/<name>.sql with a header giving its parameters and result,
// and is prepared once per connection. Code refers to statements by name only, never by inline SQL.
import { readdirSync, readFileSync } from 'node:fs';
import type { DatabaseSync, StatementSync } from 'node:sqlite';

const STATEMENTS_DIR = new URL('./statements/', import.meta.url);

export const STATEMENT_NAMES = [
  'insert-tenant', 'find-tenant-by-name', 'insert-api-key', 'find-tenant-by-key',
  'insert-run', 'find-run-by-idempotency-key', 'get-run', 'list-runs',
  'insert-event', 'allocate-event-seqs', 'claim-runs', 'heartbeat', 'release-leases', 'expire-foreign-leases',
  'commit-run', 'upsert-journal', 'load-journal', 'list-events', 'request-cancel',
  'insert-input', 'get-input', 'consume-input', 'wake-on-input', 'wake-run', 'wake-if-ready', 'insert-audit',
  'find-execution', 'resolve-execution',
] as const;
export type StatementName = (typeof STATEMENT_NAMES)[number];

export type Statements = Record<StatementName, StatementSync>;

export function prepareStatements(db: DatabaseSync): Statements {
  const files = new Set(readdirSync(STATEMENTS_DIR).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4)));
  const prepared = {} as Statements;
  for (const name of STATEMENT_NAMES) {
    if (!files.has(name)) throw new Error(`missing SQL statement file statements/${name}.sql`);
    prepared[name] = db.prepare(readFileSync(new URL(`${name}.sql`, STATEMENTS_DIR), 'utf8'));
    files.delete(name);
  }
  if (files.size > 0) throw new Error(`unregistered SQL statement files: ${[...files].join(', ')}`);
  return prepared;
}
