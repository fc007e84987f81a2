// The platform-wide daily cap on Postgres is cluster-wide: two processes (each its own store pool,
// gateway and cap cache) on one database; what a run spends through process one counts against the
// cap process two enforces, so its next call fails `platform_cap_reached` and its runs park.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKeelError } from '../src/domain/keel-error.ts';
import { newRunId } from '../src/domain/ids.ts';
import { defineAgent } from '../src/index.ts';
import { PlatformCaps } from '../src/models/platform-caps.ts';
import { postgresAvailable } from './support/postgres.ts';
import { twoProcessesOnPostgres } from './support/two-processes.ts';

const talker = defineAgent({
  name: 'talker',
  version: '1',
  async run(ctx) {
    const reply = await ctx.model({
      model: 'mock',
      messages: [{ role: 'user', content: 'x'.repeat(400) }],
    });
    return reply.usage.inputTokens + reply.usage.outputTokens;
  },
});

test('Postgres, two processes: the platform token cap counts both processes spend', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const [one, two] = await twoProcessesOnPostgres(t, talker, (gateway, store) =>
    gateway.usePlatformCaps(new PlatformCaps(store, { tokensPerDay: 150 })),
  );
  const tenant = await one.store.createTenant('busy', 'k');
  // Process two reads the platform's usage first (none): its cache must not let it overspend later.
  assert.equal(await two.gateway.tenantBudget(tenant.id), null);
  one.orchestrator.start();
  const newRun = () => ({
    id: newRunId(),
    tenantId: tenant.id,
    agent: 'talker',
    agentVersion: '1',
    input: null,
    priority: 'interactive' as const,
    budget: {},
    metadata: null,
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
  });
  const { run } = await one.store.createRun(newRun());
  const until = async (id: string, predicate: (r: any) => boolean) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const current = await one.store.getRun(id);
      if (current !== null && predicate(current)) return current;
      assert.ok(Date.now() < deadline, JSON.stringify(current));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const spent = await until(run.id, (r) => r.status === 'succeeded');
  assert.ok((spent.result as number) >= 150, `one call spends ${String(spent.result)} tokens`);
  assert.ok((await two.store.platformUsageSince(0)).tokens >= 150);
  // Spend admission's rolling average reads the same committed counters.
  assert.deepEqual(await two.store.agentSpendSample('talker', 20), {
    runs: 1,
    tokens: spent.result,
    costUsd: 0,
  });

  // Process two learns of process one's spend (its cache lasts PLATFORM_USAGE_TTL_MS at most).
  const deadline = Date.now() + 10_000;
  let refused: unknown;
  while (refused === undefined && Date.now() < deadline) {
    await two.gateway
      .call(
        { model: 'mock', messages: [{ role: 'user', content: 'hi' }] },
        { signal: AbortSignal.timeout(5_000) },
      )
      .then(
        () => new Promise((resolve) => setTimeout(resolve, 100)),
        (error: unknown) => {
          refused = error;
        },
      );
  }
  assert.ok(isKeelError(refused) && refused.code === 'platform_cap_reached', String(refused));
  two.orchestrator.start();
  await one.orchestrator.stop();
  const second = (await one.store.createRun(newRun())).run;
  const parked = await until(second.id, (r) => r.status === 'waiting');
  assert.equal(parked.waitingReason, 'platform_cap_reached');
});
