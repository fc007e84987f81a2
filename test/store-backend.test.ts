// The backend factories: the options pick the database, and what a backend says it can do (its
// capability flags) is what its parts do: the run store's own flags agree, the schedule area shares
// the run store's database and transactions, rate windows exist exactly when shared, and its
// artifact store writes to the same database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { newRunId } from '../src/domain/ids.ts';
import type { StoreOptions } from '../src/store/backend.ts';
import { selectBackend } from '../src/store/open-store.ts';
import { createFreshDatabase, type FreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const pgUp = await postgresAvailable();

async function exercise(
  options: StoreOptions,
  expected: { multiProcess: boolean; sharedRateWindows: boolean },
): Promise<void> {
  const factory = selectBackend(options);
  assert.deepEqual(factory.capabilities, expected);
  const backend = factory.open();
  try {
    assert.deepEqual(backend.capabilities, expected);
    assert.equal(
      backend.runs.capabilities.multiProcess,
      expected.multiProcess,
      'the run store says the same',
    );
    assert.equal(
      backend.rateWindows !== undefined,
      expected.sharedRateWindows,
      'rate windows exactly when shared',
    );
    await backend.runs.migrate();
    const tenant = await backend.runs.createTenant(`t-${newRunId()}`, `hash-${newRunId()}`);
    // A fire's run and the schedule commit land in one transaction of the run store: the run is
    // there to read.
    const schedule = await backend.schedules.createSchedule(
      {
        id: `sch_${newRunId()}`,
        tenantId: tenant.id,
        name: null,
        cron: null,
        intervalMs: 60_000,
        timeZone: 'UTC',
        startAt: null,
        endAt: null,
        paused: false,
        template: {
          agent: 'agent',
          input: null,
          priority: 'interactive',
          budget: {},
          metadata: null,
        },
        catchupWindowMs: 60_000,
        overlap: 'allow',
        webhookUrl: null,
        nextFireAt: T0,
      },
      T0,
    );
    const [claim] = await backend.schedules.claimSchedules('owner', T0, 30_000, 1);
    assert.ok(claim !== undefined, 'the due schedule is claimed');
    const runId = newRunId();
    await backend.schedules.commitSchedule(
      {
        scheduleId: schedule.id,
        owner: 'owner',
        token: claim.token,
        scheduleVersion: schedule.version,
        nextFireAt: T0 + 60_000,
        release: true,
        newFires: [
          {
            logicalTime: T0,
            kind: 'scheduled',
            status: 'started',
            runId,
            detail: null,
            startedAt: T0,
          },
        ],
        createRuns: [
          {
            id: runId,
            tenantId: tenant.id,
            agent: 'agent',
            agentVersion: '1',
            input: null,
            priority: 'interactive',
            budget: {},
            metadata: null,
            parentRunId: null,
            idempotencyKey: null,
            requestHash: null,
          },
        ],
      },
      T0,
    );
    assert.equal(
      (await backend.runs.getRun(runId))?.status,
      'queued',
      'the fire created its run in the run store',
    );
    assert.equal((await backend.schedules.getFire(schedule.id, T0))?.runId, runId);
    if (backend.rateWindows !== undefined) {
      const key = { key: `model:${newRunId()}`, rpm: 1, tpm: undefined };
      const first = await backend.rateWindows.reserve([key], 10);
      assert.equal(first.granted, true);
      if (first.granted) await backend.rateWindows.settle([key.key], first.second, -5);
      const second = await backend.rateWindows.reserve([key], 10);
      assert.equal(second.granted, false, 'one request per minute: the second waits');
    }
    const artifacts = factory.openArtifacts();
    try {
      const sha = await artifacts.put(Buffer.from('bytes'));
      assert.equal((await artifacts.get(sha)).toString(), 'bytes');
    } finally {
      await artifacts.close?.();
    }
  } finally {
    await backend.runs.close();
  }
}

describe('store backends', () => {
  it('sqlite: chosen without a database URL; one process, no shared rate windows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-backend-'));
    try {
      await exercise({ dataDir: dir }, { multiProcess: false, sharedRateWindows: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('postgres: chosen by the database URL; shared by processes, with shared rate windows', {
    skip: !pgUp,
  }, async () => {
    let db: FreshDatabase | undefined;
    try {
      db = await createFreshDatabase();
      await exercise(
        { databaseUrl: db.url, dataDir: tmpdir() },
        { multiProcess: true, sharedRateWindows: true },
      );
    } finally {
      await db?.drop();
    }
  });
});
