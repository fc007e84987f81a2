// Where tests find PostgreSQL, and whether it is there. Under CI=true a missing Postgres is an
// error, not a skip.
import pg from 'pg';

export const TEST_DATABASE_URL =
  process.env.KEEL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL,
    connectionTimeoutMillis: 3_000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    if (process.env.CI === 'true')
      throw new Error(
        `PostgreSQL is required under CI=true and is not answering at ${TEST_DATABASE_URL}: ${String(error)}`,
      );
    process.stderr.write(
      `note: PostgreSQL is not answering at ${TEST_DATABASE_URL}; its tests are not run (set CI=true to make this an error)\n`,
    );
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
