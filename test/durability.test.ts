// Durability levels, proven by what a kill -9 of a real `keel dev` takes away: `memory` loses
// acknowledged commits that were not yet committed (and says so in /readyz first), `os` and `fsync`
// lose nothing. Postgres refuses `replicated` without a synchronous standby and counts commits
// inside the WAL writer's flush window under `os`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { freePort, startKeelProcess } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/dev-agents.ts', import.meta.url));
const KEY = 'durability-test-key';

async function killAfterAcknowledgedWrite(
  durability: string,
): Promise<{ lost: boolean; notDurableBefore: number }> {
  const dir = mkdtempSync(join(tmpdir(), `keel-durability-${durability}-`));
  const port = await freePort();
  // A long group-commit wait: under `memory` the open transaction holds every acknowledged write
  // until then.
  const env = {
    KEEL_DURABILITY: durability,
    KEEL_GROUP_COMMIT_MAX_WAIT_MS: durability === 'memory' ? '10000' : '0',
  };
  let keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    port,
    apiKey: KEY,
    env,
  });
  try {
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const created = await fetch(`${keel.url}/v1/runs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ agent: 'slow', input: { ms: 60_000 } }),
    });
    assert.equal(created.status, 201, 'the write was acknowledged');
    const { id } = (await created.json()) as { id: string };
    const notDurableBefore = (
      (await (await fetch(`${keel.url}/readyz`)).json()) as { notDurableCommits: number }
    ).notDurableCommits;
    await keel.kill('SIGKILL');
    keel = await startKeelProcess({
      agents: AGENTS,
      dataDir: join(dir, 'data'),
      port,
      apiKey: KEY,
      env: { KEEL_DURABILITY: 'fsync' },
    });
    const after = await fetch(`${keel.url}/v1/runs/${id}`, { headers });
    return { lost: after.status === 404, notDurableBefore };
  } finally {
    await keel.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

test('memory: a process crash loses acknowledged commits, and /readyz counted them as not durable first', async () => {
  const { lost, notDurableBefore } = await killAfterAcknowledgedWrite('memory');
  assert.ok(notDurableBefore > 0, `acknowledged-not-durable was ${notDurableBefore}`);
  assert.equal(lost, true, 'the acknowledged run was lost with the process');
});

test("os: an acknowledged commit survives a process crash (it was written, not fsync'd)", async () => {
  assert.equal((await killAfterAcknowledgedWrite('os')).lost, false);
});

test('fsync: an acknowledged commit survives a process crash, and nothing is ever counted as not durable', async () => {
  const { lost, notDurableBefore } = await killAfterAcknowledgedWrite('fsync');
  assert.equal(lost, false);
  assert.equal(notDurableBefore, 0);
});

test('SQLite refuses replicated; os counts written commits until its checkpoint makes them durable', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-durability-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.throws(
    () => new SqliteStore({ path: join(dir, 'r.db'), durability: 'replicated' }),
    (e: any) => e.code === 'durability_unavailable',
  );
  const store = new SqliteStore({ path: join(dir, 'os.db'), durability: 'os' });
  await store.migrate();
  t.after(() => store.close());
  await store.ensureTenant('t', 'hash-os');
  assert.ok(store.notDurableCommits() >= 1);
  const deadline = Date.now() + 5_000;
  while (store.notDurableCommits() > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  assert.equal(store.notDurableCommits(), 0, 'the periodic checkpoint made them durable');
});

test('Postgres: replicated is refused without a synchronous standby; os counts commits in the WAL flush window', {
  skip: !(await postgresAvailable()) && 'PostgreSQL is not reachable',
}, async (t) => {
  const database = await createFreshDatabase();
  t.after(() => database.drop());
  const replicated = new PostgresStore({
    connectionString: database.url,
    durability: 'replicated',
  });
  await assert.rejects(replicated.migrate(), (e: any) => e.code === 'durability_unavailable');
  await replicated.close();
  const os = new PostgresStore({ connectionString: database.url, durability: 'os' });
  t.after(() => os.close());
  await os.migrate();
  await os.ensureTenant('t', 'hash-pg-os');
  assert.ok(os.notDurableCommits() >= 1, 'acknowledged inside the flush window');
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(
    os.notDurableCommits(),
    0,
    'past 3 × wal_writer_delay the WAL writer has flushed it',
  );
});
