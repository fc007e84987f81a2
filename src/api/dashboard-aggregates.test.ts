import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunSummaryRow } from '../store/run-summaries.ts';
import {
  queueRows,
  throughputSeries,
  usageByAgent,
  usageByTenant,
} from './dashboard-aggregates.ts';

const row = (
  agent: string,
  status: string,
  runs: number,
  costUsd = 0,
  extra: Partial<RunSummaryRow> = {},
): RunSummaryRow => ({
  agent,
  status,
  runs,
  steps: runs,
  inputTokens: 0,
  outputTokens: 0,
  costUsd,
  oldestClaimableAt: null,
  oldestWaitingSince: null,
  ...extra,
});

test('cost per success divides all spend, failures included, by successes; null before the first success', () => {
  const { totals, usage } = usageByAgent([
    row('a', 'succeeded', 2, 1),
    row('a', 'failed', 3, 3),
    row('b', 'failed', 1, 0.5),
  ]);
  assert.equal(usage.find((u) => u.agent === 'a')?.costPerSuccessUsd, 2);
  assert.equal(usage.find((u) => u.agent === 'b')?.costPerSuccessUsd, null);
  assert.equal(totals.costPerSuccessUsd, 4.5 / 2);
  assert.deepEqual(totals.byStatus, { succeeded: 2, failed: 4 });
  assert.equal(totals.runs, 6);
});

test('queue rows keep live statuses only and turn oldest times into ages', () => {
  const rows = queueRows(
    [
      row('a', 'queued', 4, 0, { oldestClaimableAt: 1_000 }),
      row('a', 'waiting', 1, 0, { oldestWaitingSince: 500 }),
      row('a', 'succeeded', 9),
    ],
    3_000,
  );
  assert.deepEqual(rows, [
    {
      agent: 'a',
      queued: 4,
      running: 0,
      waiting: 1,
      cancelling: 0,
      oldestQueuedAgeMs: 2_000,
      oldestWaitingAgeMs: 2_500,
    },
  ]);
  assert.equal(
    queueRows([row('a', 'queued', 1, 0, { oldestClaimableAt: 5_000 })], 3_000)[0]
      ?.oldestQueuedAgeMs,
    0,
    'a future claim time is age 0',
  );
});

test('throughput series has every bucket, zeros included', () => {
  const series = throughputSeries(
    [
      { bucketStart: 60_000, status: 'succeeded', runs: 3 },
      { bucketStart: 120_000, status: 'failed', runs: 1 },
    ],
    30_000,
    180_000,
    60_000,
  );
  assert.deepEqual(
    series.map((s) => [s.succeeded, s.failed]),
    [
      [0, 0],
      [3, 0],
      [0, 1],
      [0, 0],
    ],
  );
});

test('usage per tenant includes tenants without runs, busiest first', () => {
  const base = {
    steps: 0,
    inputTokens: 0,
    outputTokens: 0,
    tenantCreatedAt: 0,
    oldestClaimableAt: null,
  };
  const tenants = usageByTenant(
    [
      { ...base, tenantId: 't1', tenantName: 'quiet', status: null, runs: 0, costUsd: 0 },
      { ...base, tenantId: 't2', tenantName: 'busy', status: 'succeeded', runs: 4, costUsd: 2 },
      { ...base, tenantId: 't2', tenantName: 'busy', status: 'failed', runs: 1, costUsd: 1 },
      {
        ...base,
        tenantId: 't2',
        tenantName: 'busy',
        status: 'queued',
        runs: 2,
        costUsd: 0,
        oldestClaimableAt: 1_000,
      },
    ],
    4_000,
  );
  assert.deepEqual(
    tenants.map((t) => [t.name, t.runs, t.costPerSuccessUsd, t.oldestQueuedAgeMs]),
    [
      ['busy', 7, 0.75, 3_000],
      ['quiet', 0, null, null],
    ],
  );
});
