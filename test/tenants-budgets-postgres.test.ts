// Daily tenant budgets with two processes on one Postgres database: each has its own gateway and
// tenant policy cache. A run parked on a spent budget (tenant_budget_exhausted) is woken by a raise
// made through the other process and resumes there or here — never refused again from a stale
// cache.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { newRunId } from '../src/domain/ids.ts';
import { Orchestrator } from '../src/engine/orchestrator.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { defineAgent } from '../src/index.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { TenantPolicy } from '../src/models/tenant-policy.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { TEST_DATABASE_URL, postgresAvailable } from './support/postgres.ts';

const talker = defineAgent({
  name: 'talker',
  version: '1',
  async run(ctx) {
    await ctx.model({ model: 'mock', messages: [{ role: 'user', content: 'first call' }] });
    await ctx.model({ model: 'mock', messages: [{ role: 'user', content: 'second call' }] });
    return 'done';
  },
});

test('Postgres, two processes: a spent daily budget parks the run durably; a raise through the other process wakes it', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const processes = [0, 1].map(() => {
    const store = new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
    const registry = new AgentRegistry();
    registry.register(talker);
    const gateway = new ModelGateway([]);
    gateway.useTenantPolicy(new TenantPolicy(store));
    return {
      store,
      orchestrator: new Orchestrator({ store, registry, gateway, pollIntervalMs: 50 }),
    };
  });
  t.after(async () => {
    for (const p of processes) await p.orchestrator.stop();
    for (const p of processes) await p.store.close();
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  const [one, two] = processes as [(typeof processes)[0], (typeof processes)[0]];
  await one.store.migrate();
  const tenant = await one.store.createTenant('frugal', 'k', { dailyTokenBudget: 1 });
  for (const p of processes) p.orchestrator.start();
  const { run } = await one.store.createRun({
    id: newRunId(),
    tenantId: tenant.id,
    agent: 'talker',
    agentVersion: '1',
    input: null,
    priority: 'interactive',
    budget: {},
    metadata: null,
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
  });
  const until = async (
    what: string,
    predicate: (r: NonNullable<Awaited<ReturnType<PostgresStore['getRun']>>>) => boolean,
  ) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const current = await one.store.getRun(run.id);
      if (current !== null && predicate(current)) return current;
      assert.ok(Date.now() < deadline, `${what}; last: ${JSON.stringify(current)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const parked = await until('the run parks on the spent budget', (r) => r.status === 'waiting');
  assert.equal(parked.waitingReason, 'tenant_budget_exhausted');
  assert.equal(parked.wakeAt, Math.floor(Date.now() / 86_400_000) * 86_400_000 + 86_400_000);
  assert.ok(parked.waitingSince !== null);
  assert.deepEqual(await one.store.tenantUsageSince(tenant.id, 0), {
    tokens: parked.counters.inputTokens + parked.counters.outputTokens,
    costUsd: 0,
  });
  // Both processes have the old budget cached; the raise goes through process two.
  await two.store.updateTenant(tenant.id, { dailyTokenBudget: 1_000_000 });
  const done = await until('the run resumes and finishes', (r) => r.status === 'succeeded');
  assert.deepEqual([done.waitingReason, done.waitingSince, done.counters.steps], [null, null, 2]);
  const types = (await one.store.listEvents(run.id, 0, 1_000)).map((e) => e.type);
  assert.ok(types.indexOf('run.waiting') < types.indexOf('run.resumed'), types.join(' '));
});
