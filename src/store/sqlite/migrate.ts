// Forward-only schema migrations for the SQLite store: migrations/NNNN_name.sql applied in order,
// each in its own transaction that first inserts its ledger row, so two processes migrating at once
// collide on the ledger's primary key instead of applying a migration twice.
import { readdirSync, readFileSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export function migrate(db: DatabaseSync): number[] {
  db.exec(
    `CREATE TABLE IF NOT EXISTS keel_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
  );
  const applied = new Set(
    (db.prepare('SELECT version FROM keel_migrations').all() as Array<{ version: number }>).map(
      (r) => r.version,
    ),
  );
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort();
  const done: number[] = [];
  for (const file of files) {
    const version = Number(file.slice(0, 4));
    if (applied.has(version)) continue;
    const sql = readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8');
    db.exec('BEGIN IMMEDIATE');
    try {
      db.prepare('INSERT INTO keel_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        version,
        file,
        Date.now(),
      );
      db.exec(sql);
      db.exec('COMMIT');
      done.push(version);
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }
  return done;
}
