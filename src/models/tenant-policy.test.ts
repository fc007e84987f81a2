import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { ManualClock } from '../domain/clock.ts';
import {
  startOfUtcDay,
  TENANT_POLICY_TTL_MS,
  TENANT_USAGE_TTL_MS,
  TenantPolicy,
} from './tenant-policy.ts';

const DAY_MS = 86_400_000;

describe('TenantPolicy over a real store', () => {
  let dir: string;
  let store: SqliteStore;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-tenant-policy-'));
    store = new SqliteStore({ path: join(dir, 'keel.db') });
    await store.migrate();
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Commits a successful model effect of `tokens` (input + output) and `costUsd` for a new run of
   * the tenant.
   */
  async function spend(tenantId: string, tokens: number, costUsd: number): Promise<void> {
    await store.createRun({
      id: `run_${Math.random().toString(36).slice(2)}`,
      tenantId,
      agent: 'a',
      agentVersion: '1',
      input: null,
      priority: 'interactive',
      budget: {},
      metadata: null,
      parentRunId: null,
      idempotencyKey: null,
      requestHash: null,
    });
    const [run] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 60_000, served: ['a@1'] });
    assert.ok(run);
    await store.commit({
      runId: run.id,
      leaseToken: run.leaseToken,
      expectedStateVersion: run.stateVersion,
      journal: [
        {
          seq: 1,
          kind: 'model',
          name: 'mock',
          status: 'succeeded',
          endedAt: Date.now(),
          result: { usage: { inputTokens: tokens, outputTokens: 0, costUsd } },
        },
      ],
    });
  }

  it("limits: the record's RPM/TPM (null fields left out), cached for the TTL, read again at once after invalidate", async () => {
    const clock = new ManualClock(Date.now());
    const policy = new TenantPolicy(store, { clock });
    const tenant = await store.createTenant('limits', 'k1', { rpm: 10 });
    assert.deepEqual(await policy.limits(tenant.id), { rpm: 10 });
    await store.updateTenant(tenant.id, { rpm: 20, tpm: 500 });
    assert.deepEqual(await policy.limits(tenant.id), { rpm: 10 }, 'cached');
    clock.advance(TENANT_POLICY_TTL_MS);
    assert.deepEqual(
      await policy.limits(tenant.id),
      { rpm: 20, tpm: 500 },
      'read again after the TTL',
    );
    await store.updateTenant(tenant.id, { rpm: null });
    policy.invalidate(tenant.id);
    assert.deepEqual(await policy.limits(tenant.id), { tpm: 500 }, 'read again after invalidate');
    assert.deepEqual(await policy.limits('ten_missing'), {});
  });

  it('calls that find the cache expired at once share one read of the record and one of the usage', async () => {
    const tenant = await store.createTenant('busy', 'k-busy', { dailyTokenBudget: 1_000_000 });
    const reads = { records: 0, usage: 0 };
    const counting = {
      getTenant: (id: string) => {
        reads.records++;
        return store.getTenant(id);
      },
      tenantUsageSince: (id: string, since: number) => {
        reads.usage++;
        return store.tenantUsageSince(id, since);
      },
    };
    const policy = new TenantPolicy(counting);
    const verdicts = await Promise.all(
      Array.from({ length: 50 }, () => policy.budgetExhausted(tenant.id)),
    );
    assert.ok(verdicts.every((v) => v === null));
    assert.deepEqual(reads, { records: 1, usage: 1 });
  });

  it("budgets: exhausted once today's usage reaches a budget, until the next midnight UTC; a raise is seen without waiting for the TTL", async () => {
    const clock = new ManualClock(Date.now());
    const policy = new TenantPolicy(store, { clock });
    const tenant = await store.createTenant('budgets', 'k2', { dailyTokenBudget: 100 });
    assert.equal(await policy.budgetExhausted(tenant.id), null);
    await spend(tenant.id, 60, 0);
    policy.charge(tenant.id, 60, 0); // this process's own spend counts at once
    assert.equal(await policy.budgetExhausted(tenant.id), null);
    await spend(tenant.id, 50, 0);
    policy.charge(tenant.id, 50, 0);
    const verdict = await policy.budgetExhausted(tenant.id);
    assert.deepEqual(verdict && [verdict.budget, verdict.used, verdict.limit, verdict.until], [
      'dailyTokenBudget',
      110,
      100,
      startOfUtcDay(clock.now()) + DAY_MS,
    ]);
    // Raised in the store by another process: the cached record still says 100, but an exhausted
    // verdict is confirmed fresh.
    await store.updateTenant(tenant.id, { dailyTokenBudget: 1_000 });
    assert.equal(await policy.budgetExhausted(tenant.id), null);
    // Another process's spend shows up after the usage TTL.
    await spend(tenant.id, 900, 0);
    assert.equal(await policy.budgetExhausted(tenant.id), null, 'cached usage');
    clock.advance(TENANT_USAGE_TTL_MS);
    assert.equal((await policy.budgetExhausted(tenant.id))?.used, 1_010);
  });

  it('budgets: the cost budget, and a new UTC day starts from nothing', async () => {
    const start = startOfUtcDay(Date.now()) + DAY_MS - 1_000; // one second before midnight UTC
    const clock = new ManualClock(start);
    const policy = new TenantPolicy(store, { clock });
    const tenant = await store.createTenant('costs', 'k3', { dailyCostBudgetUsd: 0.5 });
    await spend(tenant.id, 1, 0.75); // committed now (wall clock): before the fake clock's midnight
    assert.equal((await policy.budgetExhausted(tenant.id))?.budget, 'dailyCostBudgetUsd');
    clock.advance(2_000);
    // The day the fake clock is in now began after every committed effect: nothing spent yet.
    const next = await policy.budgetExhausted(tenant.id);
    assert.equal(next, null);
  });
});
