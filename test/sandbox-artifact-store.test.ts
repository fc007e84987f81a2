// One conformance suite for every artifact store: the directory store, SQLite (in the same file as
// the runs, beside the main store) and Postgres (a fresh database). Content addressing, dedupe,
// references, corruption and refusal of references to missing blobs behave the same everywhere; a
// workspace snapshot restores through each of them.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FileArtifactStore } from '../src/sandbox/file-artifact-store.ts';
import { restoreWorkspace, snapshotWorkspace } from '../src/sandbox/manifest.ts';
import { sha256Hex, type ArtifactStore } from '../src/store/artifact-store.ts';
import { PostgresArtifactStore } from '../src/store/postgres/postgres-artifact-store.ts';
import { SqliteArtifactStore } from '../src/store/sqlite/sqlite-artifact-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';

interface Backend {
  name: string;
  open(): Promise<{ store: ArtifactStore; close(): Promise<void> }>;
  skip?: string | undefined;
}

const pgUp = await postgresAvailable();
const BACKENDS: Backend[] = [
  {
    name: 'directory',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'keel-art-'));
      return {
        store: new FileArtifactStore(dir),
        close: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'keel-art-'));
      // Beside the main store, in the same database file: both run the same migrations.
      const main = new SqliteStore({ path: join(dir, 'keel.db') });
      await main.migrate();
      const store = new SqliteArtifactStore({ path: join(dir, 'keel.db') });
      return {
        store,
        close: async () => {
          await store.close();
          await main.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'postgres',
    skip: pgUp ? undefined : 'PostgreSQL is not answering',
    async open() {
      const db = await createFreshDatabase();
      const store = new PostgresArtifactStore({ connectionString: db.url });
      return {
        store,
        close: async () => {
          await store.close();
          await db.drop();
        },
      };
    },
  },
];

for (const backend of BACKENDS) {
  describe(`artifact store conformance: ${backend.name}`, { skip: backend.skip }, () => {
    test('a blob is named by its sha256, stored once, and read back verified', async (t) => {
      const { store, close } = await backend.open();
      t.after(close);
      const bytes = Buffer.from('hello workspace\u0000\u00ff', 'latin1');
      const sha = await store.put(bytes);
      assert.equal(sha, sha256Hex(bytes));
      assert.equal(
        await store.put(Buffer.from(bytes)),
        sha,
        'storing the same content again is a no-op with the same name',
      );
      assert.deepEqual(await store.get(sha), bytes);
      assert.equal(await store.has(sha), true);
      assert.equal(await store.has(sha256Hex('absent')), false);
      await assert.rejects(store.get(sha256Hex('absent')));
      await assert.rejects(store.get('not-a-sha'), TypeError);
      const empty = await store.put(Buffer.alloc(0));
      assert.deepEqual(await store.get(empty), Buffer.alloc(0));
    });

    test('references: last write wins, unknown names are undefined, a missing blob cannot be referenced', async (t) => {
      const { store, close } = await backend.open();
      t.after(close);
      const a = await store.put(Buffer.from('a'));
      const b = await store.put(Buffer.from('b'));
      assert.equal(await store.getRef('run/r1/workspace'), undefined);
      await store.setRef('run/r1/workspace', a);
      await store.setRef('run/r1/workspace', b);
      assert.equal(await store.getRef('run/r1/workspace'), b);
      await assert.rejects(store.setRef('run/r2/workspace', sha256Hex('never stored')));
      assert.equal(await store.getRef('run/r2/workspace'), undefined);
    });

    test('a workspace snapshot restores through this store', async (t) => {
      const { store, close } = await backend.open();
      const dir = mkdtempSync(join(tmpdir(), 'keel-art-ws-'));
      t.after(async () => {
        await close();
        rmSync(dir, { recursive: true, force: true });
      });
      mkdirSync(join(dir, 'a/b'), { recursive: true });
      writeFileSync(join(dir, 'a/b/file.txt'), 'round 1');
      const { manifestSha256 } = await snapshotWorkspace(dir, store, {
        fileBytes: 1 << 20,
        workspaceBytes: 1 << 22,
      });
      const target = join(dir, '..', `${dir.split('/').pop()}-restored`);
      mkdirSync(target);
      t.after(() => rmSync(target, { recursive: true, force: true }));
      await restoreWorkspace(target, store, manifestSha256, process.getuid!());
      assert.equal(readFileSync(join(target, 'a/b/file.txt'), 'utf8'), 'round 1');
    });
  });
}
