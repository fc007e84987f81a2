// Forward-only migrations for the Postgres store: migrations/NNNN_name.sql in order, under an
// advisory lock so concurrent processes starting together migrate once; each migration's ledger row
// is inserted first, in the migration's own transaction.
import { readdirSync, readFileSync } from 'node:fs';
import type { Pool } from 'pg';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
/** Advisory lock key for migrations ("keel" in ASCII). */
const MIGRATION_LOCK_KEY = 0x6b65656c;

export async function migratePostgres(pool: Pool): Promise<number[]> {
  const client = await pool.connect();
  // A checked-out client whose connection dies emits 'error'; unheard, that would crash the
  // process. The failing query reports the loss instead.
  const ignore = () => {};
  client.on('error', ignore);
  const applied: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS keel_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
    );
    const done = new Set(
      (await client.query<{ version: number }>('SELECT version FROM keel_migrations')).rows.map(
        (r) => r.version,
      ),
    );
    const files = readdirSync(MIGRATIONS_DIR)
      .filter((f) => /^\d{4}_.+\.sql$/.test(f))
      .sort();
    for (const file of files) {
      const version = Number(file.slice(0, 4));
      if (done.has(version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(
          'INSERT INTO keel_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
          [version, file, Date.now()],
        );
        await client.query(readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'));
        await client.query('COMMIT');
        applied.push(version);
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    client.removeListener('error', ignore);
    client.release();
  }
  return applied;
}
