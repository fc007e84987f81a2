// The store side of fair claiming: backlog rows become planner tenants (capped ones left out, the
// aged head and its class), claimed runs group per tenant in claim order, and both stores' claim
// SQL ages batch runs by a passed parameter.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BATCH_AGING_MS } from '../domain/fair-share.ts';
import { claimedByTenant, toBackloggedTenants } from './fair-claim.ts';
import type { RunRecord } from '../domain/records.ts';

const row = (fields: Record<string, unknown>) => ({
  tenant_id: 't',
  weight: 1,
  vtime: 0,
  max_concurrent_runs: null,
  held: 0,
  head_interactive: null,
  head_batch: null,
  ...fields,
});

describe('fair claim rows', () => {
  it('leaves out tenants at their concurrency cap and gives the others their room', () => {
    const tenants = toBackloggedTenants([
      row({ tenant_id: 'full', max_concurrent_runs: 2, held: 2, head_batch: 1 }),
      row({ tenant_id: 'some', max_concurrent_runs: '5', held: '2', head_batch: 1 }),
      row({ tenant_id: 'free', head_batch: 1 }),
    ]);
    assert.deepEqual(
      tenants.map((t) => [t.tenantId, t.room]),
      [
        ['some', 3],
        ['free', Infinity],
      ],
    );
  });

  it('orders a tenant by its aged head: a batch run counts BATCH_AGING_MS later than it became claimable', () => {
    const [recent, old] = toBackloggedTenants([
      row({ tenant_id: 'recent', head_interactive: 10_000, head_batch: 5_000 }),
      row({ tenant_id: 'old', head_interactive: 2 * BATCH_AGING_MS, head_batch: 1_000 }),
    ]);
    assert.deepEqual([recent!.headKey, recent!.interactiveHead], [10_000, true]);
    assert.deepEqual([old!.headKey, old!.interactiveHead], [1_000 + BATCH_AGING_MS, false]);
  });

  it('groups claimed runs per tenant, interactive first with aging, then oldest', () => {
    const run = (
      id: string,
      tenantId: string,
      priority: 'interactive' | 'batch',
      createdAt: number,
    ) => ({ id, tenantId, priority, createdAt }) as RunRecord;
    const grouped = claimedByTenant([
      run('b1', 'a', 'batch', 0),
      run('i1', 'a', 'interactive', 5),
      run('x', 'b', 'batch', 1),
      run('i2', 'a', 'interactive', BATCH_AGING_MS + 1),
    ]);
    assert.deepEqual(
      grouped.get('a')!.map((r) => r.id),
      ['i1', 'b1', 'i2'],
    );
    assert.deepEqual(
      grouped.get('b')!.map((r) => r.id),
      ['x'],
    );
  });

  it('both stores age batch runs by the :batch_aging_ms parameter in their claim statement, never by a literal', () => {
    for (const file of [
      'sqlite/statements/claim-tenant-runs.sql',
      'postgres/migrations/0054_fair_claim_function.sql',
    ]) {
      const sql = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
      assert.match(sql, /due_at \+ (:|p_)batch_aging_ms(::bigint)? AS k/, file);
      assert.doesNotMatch(sql, new RegExp(`${BATCH_AGING_MS}|60000`), file);
    }
  });
});
