// The shared space's compare-and-set across processes on Postgres (issue 21): two stores on one
// database (as two Keel servers are) race writes of one file with the same expected version, round
// after round; each round exactly one write wins and every other is told the winner's version.
// (One store's races are in the conformance suite; SQLite has one process per data directory.)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { TEST_DATABASE_URL, postgresAvailable } from './support/postgres.ts';
import { newRun } from './store/conformance.ts';

const ROUNDS = 20;
const WRITERS_PER_STORE = 4;

test('shared space (postgres, two stores): racing writers with one expected version, exactly one wins', async (t) => {
  if (!(await postgresAvailable())) return t.skip('no Postgres');
  const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const open = () =>
    new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
  const first = open();
  await first.migrate();
  const second = open();
  t.after(async () => {
    await first.close();
    await second.close();
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  const tenant = await first.createTenant('shared', 'hash-shared');
  const root = (await first.createRun(newRun(tenant.id))).run.id;
  for (let round = 0; round < ROUNDS; round++) {
    const writes = [first, second].flatMap((store, s) =>
      Array.from({ length: WRITERS_PER_STORE }, (_, w) =>
        store.writeSharedFile({
          rootRunId: root,
          tenantId: tenant.id,
          path: 'race.txt',
          content: `round ${round} store ${s} writer ${w}`,
          expectedVersion: round,
          writtenByRun: `run_${s}_${w}`,
          writeId: `run_${s}_${w}.${round + 1}`,
        }),
      ),
    );
    const outcomes = await Promise.all(writes);
    assert.equal(outcomes.filter((o) => o.ok).length, 1, `round ${round}: one winner`);
    for (const o of outcomes)
      assert.equal(o.ok ? o.version : o.currentVersion, round + 1, `round ${round}`);
  }
  const file = await second.readSharedFile(root, 'race.txt');
  assert.equal(file?.version, ROUNDS);
});
