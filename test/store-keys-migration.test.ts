// Migration 0021 on a database made before it, on SQLite and Postgres: a tenant's single key keeps
// working as a key named `default` with every scope, and the audit records written before it
// (stale commits, resolutions, …) join the run's tenant's audit log as the system's.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import pg from 'pg';
import { SCOPES } from '../src/domain/access.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import { TEST_DATABASE_URL, postgresAvailable } from './support/postgres.ts';

/** The migrations before 0021, in order: [version, file, sql]. */
function migrationsBefore0021(dialect: 'sqlite' | 'postgres'): Array<[number, string, string]> {
  const dir = new URL(`../src/store/${dialect}/migrations/`, import.meta.url);
  return readdirSync(dir)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f) && Number(f.slice(0, 4)) < 21)
    .sort()
    .map((f) => [Number(f.slice(0, 4)), f, readFileSync(new URL(f, dir), 'utf8')]);
}

/** What a database of the old schema held: a tenant, its one key, a run and an audit record. */
const OLD_ROWS = [
  "INSERT INTO tenants (id, name, created_at) VALUES ('ten_old', 'old', 1)",
  "INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES ('old-hash', 'ten_old', 1)",
  `INSERT INTO runs (id, tenant_id, agent, agent_version, agent_key, input, status, state_version, priority,
     priority_rank, budget, created_at, updated_at)
   VALUES ('run_old', 'ten_old', 'a', '1', 'a@1', 'null', 'failed', 1, 'interactive', 0, '{}', 1, 1)`,
  `INSERT INTO audit (run_id, at, kind, data) VALUES ('run_old', 5, 'stale_commit', '{"leaseToken":1}')`,
];

async function checkMigrated(store: Store): Promise<void> {
  const found = await store.findApiKey('old-hash');
  assert.ok(found !== null, 'the old key still authenticates');
  assert.equal(found.tenant.id, 'ten_old');
  assert.deepEqual(found.key.scopes, [...SCOPES]);
  assert.equal(found.key.name, 'default');
  assert.match(found.key.id, /^key_/);
  assert.deepEqual([found.key.revokedAt, found.key.expiresAt], [null, null]);
  const entries = await store.listAudit('ten_old', { limit: 10 });
  assert.deepEqual(
    entries.map((e) => [e.action, e.runId, e.resource, e.actor.type, e.outcome, e.at, e.data]),
    [['stale_commit', 'run_old', 'run:run_old', 'system', 'ok', 5, { leaseToken: 1 }]],
  );
  // A new record still lands, under the tenant.
  await store.appendAudit({
    tenantId: 'ten_old',
    actor: { type: 'system', id: null, name: null },
    action: 'after',
    resource: null,
    outcome: 'ok',
    data: {},
  });
  assert.equal((await store.listAudit('ten_old', { limit: 10 }))[0]!.action, 'after');
}

test('0021 on SQLite: the old key has every scope, old audit records join the tenant’s log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-0021-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'keel.db');
  const db = new DatabaseSync(path);
  db.exec(
    'CREATE TABLE keel_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
  );
  for (const [version, file, sql] of migrationsBefore0021('sqlite')) {
    db.exec(sql);
    db.prepare('INSERT INTO keel_migrations VALUES (?, ?, 0)').run(version, file);
  }
  for (const sql of OLD_ROWS) db.exec(sql);
  db.close();
  const store = new SqliteStore({ path });
  t.after(() => store.close());
  await store.migrate();
  await checkMigrated(store);
});

test('0021 on Postgres: the old key has every scope, old audit records join the tenant’s log', async (t) => {
  if (!(await postgresAvailable())) return t.skip('no Postgres');
  const schema = `keel_0021_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  t.after(async () => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`SET search_path TO ${schema}`);
  await client.query(
    'CREATE TABLE keel_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
  );
  for (const [version, file, sql] of migrationsBefore0021('postgres')) {
    await client.query(sql);
    await client.query('INSERT INTO keel_migrations VALUES ($1, $2, 0)', [version, file]);
  }
  for (const sql of OLD_ROWS) await client.query(sql);
  const store = new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
  try {
    await store.migrate();
    await checkMigrated(store);
  } finally {
    await store.close();
  }
});
