// A fresh PostgreSQL database for one test: CREATE DATABASE keel_t_<random> through the admin
// connection (TEST_DATABASE_URL), a small pool for the test's own reads, and drop() with WITH
// (FORCE), so connections left by killed or paused Keel processes cannot keep the database alive or
// leak into the next test.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL } from './postgres.ts';

export interface FreshDatabase {
  name: string;
  /** Connection string of the fresh database (what Keel processes get as KEEL_DATABASE_URL). */
  url: string;
  query<R extends pg.QueryResultRow = Record<string, any>>(
    text: string,
    values?: unknown[],
  ): Promise<R[]>;
  /** Drops the database, terminating whatever is still connected to it. Safe to call twice. */
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL,
    connectionTimeoutMillis: 5_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export async function createFreshDatabase(): Promise<FreshDatabase> {
  const name = `keel_t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.href, max: 3, connectionTimeoutMillis: 5_000 });
  // An idle connection dropped by the server (a Postgres restart test) must not crash the test
  // process.
  pool.on('error', () => {});
  let dropped = false;
  return {
    name,
    url: url.href,
    async query(text, values) {
      return (await pool.query(text, values)).rows;
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end().catch(() => {});
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
