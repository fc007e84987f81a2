// Runs the store conformance suite against every store implementation (each test gets a fresh database).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { storeConformance, type StoreFactory } from './store/conformance.ts';

const sqlite: StoreFactory = {
  name: 'sqlite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'keel-store-'));
    const store = new SqliteStore({ path: join(dir, 'keel.db') });
    await store.migrate();
    return {
      store,
      async dispose() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

for (const factory of [sqlite]) storeConformance(factory);
