// Group commit's knobs work on both stores: writes submitted within the max wait share one
// transaction, a lone write waits no longer than the max wait, and a full batch goes at once
// without waiting.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { GroupCommit, Store } from '../src/store/store.ts';
import { TEST_DATABASE_URL, postgresAvailable } from './support/postgres.ts';

// Wide enough that the writes spaced below fit inside it even on a loaded machine, whose timers
// fire late: the test is about which writes share a transaction, not about speed.
const MAX_WAIT_MS = 1_500;
const SPACING_MS = 20;
const WRITES = 5;
/** Slack for a loaded machine: a write must not wait more than this beyond the max wait. */
const SLACK_MS = 3_000;

type Opened = {
  store: Store & { readonly writeStats: { transactions: number } };
  dispose(): Promise<void>;
};

const backends: Array<{ name: string; open(groupCommit: GroupCommit): Promise<Opened> }> = [
  {
    name: 'sqlite',
    async open(groupCommit) {
      const dir = mkdtempSync(join(tmpdir(), 'keel-group-commit-'));
      const store = new SqliteStore({ path: join(dir, 'keel.db'), groupCommit });
      await store.migrate();
      return {
        store,
        async dispose() {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
if (await postgresAvailable()) {
  backends.push({
    name: 'postgres',
    async open(groupCommit) {
      const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
      const store = new PostgresStore({
        connectionString: TEST_DATABASE_URL,
        schema,
        poolSize: 4,
        groupCommit,
      });
      await store.migrate();
      return {
        store,
        async dispose() {
          await store.close();
          const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
          await admin.connect();
          await admin.query(`DROP SCHEMA ${schema} CASCADE`);
          await admin.end();
        },
      };
    },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const createTenant = (store: Store) =>
  store.createTenant(`t-${randomUUID()}`, `hash-${randomUUID()}`);

for (const backend of backends) {
  describe(`group commit: ${backend.name}`, () => {
    it('writes submitted within the max wait share one transaction; the first waits about the max wait, not longer', async () => {
      const { store, dispose } = await backend.open({ maxBatch: 64, maxWaitMs: MAX_WAIT_MS });
      try {
        const before = store.writeStats.transactions;
        const started = Date.now();
        const writes: Array<Promise<unknown>> = [];
        const firstDone = createTenant(store).then(() => Date.now() - started);
        for (let i = 1; i < WRITES; i++) {
          await sleep(SPACING_MS);
          writes.push(createTenant(store));
        }
        const waited = await firstDone;
        await Promise.all(writes);
        assert.equal(
          store.writeStats.transactions - before,
          1,
          `${WRITES} writes within ${MAX_WAIT_MS} ms: one transaction`,
        );
        assert.ok(waited >= MAX_WAIT_MS - 50, `the first write waited for others (${waited} ms)`);
        assert.ok(
          waited < MAX_WAIT_MS + SLACK_MS,
          `the first write waited no longer than the max wait (${waited} ms)`,
        );
      } finally {
        await dispose();
      }
    });

    it('a full batch goes at once, without waiting out the max wait', async () => {
      const longWaitMs = 60_000;
      const { store, dispose } = await backend.open({ maxBatch: 4, maxWaitMs: longWaitMs });
      try {
        const started = Date.now();
        await Promise.all(Array.from({ length: 4 }, () => createTenant(store)));
        assert.ok(
          Date.now() - started < SLACK_MS,
          `a full batch was written in ${Date.now() - started} ms`,
        );
      } finally {
        await dispose();
      }
    });
  });
}
