// Daily tenant budgets with two processes on one Postgres database: each has its own gateway and
// tenant policy cache. A run parked on a spent budget (tenant_budget_exhausted) is woken by a raise
// made through the other process and resumes there or here — never refused again from a stale
// cache.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newRunId } from '../src/domain/ids.ts';
import { defineAgent } from '../src/index.ts';
import { TenantPolicy } from '../src/models/tenant-policy.ts';
import { postgresAvailable } from './support/postgres.ts';
import { twoProcessesOnPostgres } from './support/two-processes.ts';

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
  const [one, two] = await twoProcessesOnPostgres(t, talker, (gateway, store) =>
    gateway.useTenantPolicy(new TenantPolicy(store)),
  );
  const tenant = await one.store.createTenant('frugal', 'k', { dailyTokenBudget: 1 });
  for (const p of [one, two]) p.orchestrator.start();
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
    predicate: (r: NonNullable<Awaited<ReturnType<typeof one.store.getRun>>>) => boolean,
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
