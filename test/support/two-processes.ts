// Two Keel processes' worth of engine in one test process on one Postgres schema of their own: each
// has its own store pool, model gateway (set up by the caller: the caches under test) and
// orchestrator, as two `keel worker`s would. Stopped, closed and the schema dropped after the test.
import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { Orchestrator } from '../../src/engine/orchestrator.ts';
import { AgentRegistry } from '../../src/engine/registry.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import type { AgentDefinition } from '../../src/sdk/types.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { TEST_DATABASE_URL } from './postgres.ts';

export interface EngineProcess {
  store: PostgresStore;
  gateway: ModelGateway;
  orchestrator: Orchestrator;
}

/** The two processes, with the schema migrated; neither orchestrator started. */
export async function twoProcessesOnPostgres(
  t: TestContext,
  agent: AgentDefinition,
  setUpGateway: (gateway: ModelGateway, store: PostgresStore) => void,
): Promise<[EngineProcess, EngineProcess]> {
  const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const processes = [0, 1].map(() => {
    const store = new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
    const registry = new AgentRegistry();
    registry.register(agent);
    const gateway = new ModelGateway([]);
    setUpGateway(gateway, store);
    return {
      store,
      gateway,
      orchestrator: new Orchestrator({ store, registry, gateway, pollIntervalMs: 50 }),
    };
  }) as [EngineProcess, EngineProcess];
  t.after(async () => {
    for (const p of processes) await p.orchestrator.stop();
    for (const p of processes) await p.store.close();
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  await processes[0].store.migrate();
  return processes;
}
