// Runs the store conformance suite against every store implementation, each test on a fresh
// database: a new SQLite file, or a new Postgres schema. Postgres is required under CI=true (its
// absence fails, not skips).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { storeConformance, type StoreFactory } from './store/conformance.ts';
import { scheduleStoreConformance } from './store/schedule-conformance.ts';
import { tenantStoreConformance } from './store/tenant-conformance.ts';
import { preemptionStoreConformance } from './store/preemption-conformance.ts';
import { lineageStoreConformance } from './store/lineage-conformance.ts';
import { processStoreConformance } from './store/process-conformance.ts';
import { nodesStoreConformance } from './store/nodes-conformance.ts';
import { versionStoreConformance } from './store/version-conformance.ts';
import { attemptsStoreConformance } from './store/attempts-conformance.ts';
import { accessStoreConformance } from './store/access-conformance.ts';
import { approvalsStoreConformance } from './store/approvals-conformance.ts';
import { approvalWebhookStoreConformance } from './store/approval-webhook-conformance.ts';
import { platformAuditStoreConformance } from './store/platform-audit-conformance.ts';
import { runOrderStoreConformance } from './store/run-order-conformance.ts';
import { secretsStoreConformance } from './store/secrets-conformance.ts';
import { mcpStoreConformance } from './store/mcp-conformance.ts';
import { messagesStoreConformance } from './store/messages-conformance.ts';
import { sharedSpaceStoreConformance } from './store/shared-space-conformance.ts';
import { progressStoreConformance } from './store/progress-conformance.ts';
import { runTreeStoreConformance } from './store/run-tree-conformance.ts';
import { delegatedChildrenStoreConformance } from './store/delegated-children-conformance.ts';
import { snapshotStoreConformance } from './store/snapshot-conformance.ts';
import { payloadsStoreConformance } from './store/payloads-conformance.ts';
import { archiveStoreConformance } from './store/archive-conformance.ts';
import { poolSlotsStoreConformance } from './store/pool-slots-conformance.ts';
import { TEST_DATABASE_URL, postgresAvailable } from './support/postgres.ts';

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

const postgres: StoreFactory = {
  name: 'postgres',
  async create() {
    const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    const store = new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
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
};

storeConformance(sqlite);
scheduleStoreConformance(sqlite);
tenantStoreConformance(sqlite);
preemptionStoreConformance(sqlite);
lineageStoreConformance(sqlite);
processStoreConformance(sqlite);
nodesStoreConformance(sqlite);
versionStoreConformance(sqlite);
attemptsStoreConformance(sqlite);
accessStoreConformance(sqlite);
approvalsStoreConformance(sqlite);
approvalWebhookStoreConformance(sqlite);
platformAuditStoreConformance(sqlite);
runOrderStoreConformance(sqlite);
secretsStoreConformance(sqlite);
mcpStoreConformance(sqlite);
messagesStoreConformance(sqlite);
sharedSpaceStoreConformance(sqlite);
progressStoreConformance(sqlite);
runTreeStoreConformance(sqlite);
delegatedChildrenStoreConformance(sqlite);
snapshotStoreConformance(sqlite);
payloadsStoreConformance(sqlite);
archiveStoreConformance(sqlite);
poolSlotsStoreConformance(sqlite);
if (await postgresAvailable()) {
  storeConformance(postgres);
  scheduleStoreConformance(postgres);
  tenantStoreConformance(postgres);
  preemptionStoreConformance(postgres);
  lineageStoreConformance(postgres);
  processStoreConformance(postgres);
  nodesStoreConformance(postgres);
  versionStoreConformance(postgres);
  attemptsStoreConformance(postgres);
  accessStoreConformance(postgres);
  approvalsStoreConformance(postgres);
  approvalWebhookStoreConformance(postgres);
  platformAuditStoreConformance(postgres);
  runOrderStoreConformance(postgres);
  secretsStoreConformance(postgres);
  mcpStoreConformance(postgres);
  messagesStoreConformance(postgres);
  sharedSpaceStoreConformance(postgres);
  progressStoreConformance(postgres);
  runTreeStoreConformance(postgres);
  delegatedChildrenStoreConformance(postgres);
  snapshotStoreConformance(postgres);
  payloadsStoreConformance(postgres);
  archiveStoreConformance(postgres);
  poolSlotsStoreConformance(postgres);
}
