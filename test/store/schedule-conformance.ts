// Conformance of the schedule store area: every backend must pass it unchanged
// (test/store-conformance.test.ts runs it next to the run store's suite). It pins the contract the
// scheduler relies on: claims with fencing tokens, a pass committed atomically (fire + run +
// cancels + notifications, or nothing), one fire per (schedule, logical time), guarded fire
// transitions, requested fires, and the notification outbox.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KeelError } from '../../src/domain/keel-error.ts';
import { newRunId } from '../../src/domain/ids.ts';
import { scheduleAreaOf } from '../../src/store/schedule-area.ts';
import type { NewRun } from '../../src/domain/records.ts';
import type { NewSchedule, ScheduleCommit, ScheduleStore } from '../../src/store/schedule-store.ts';
import type { Store } from '../../src/store/store.ts';
import type { StoreFactory } from './conformance.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function newSchedule(tenantId: string, overrides: Partial<NewSchedule> = {}): NewSchedule {
  return {
    id: `sch_${Math.random().toString(36).slice(2)}`,
    tenantId,
    name: null,
    cron: '* * * * *',
    intervalMs: null,
    timeZone: 'UTC',
    startAt: null,
    endAt: null,
    paused: false,
    template: { agent: 'agent', input: null, priority: 'interactive', budget: {}, metadata: null },
    catchupWindowMs: 60_000,
    overlap: 'allow',
    webhookUrl: null,
    nextFireAt: T0 + 60_000,
    ...overrides,
  };
}

function newRun(tenantId: string): NewRun {
  return {
    id: newRunId(),
    tenantId,
    agent: 'agent',
    agentVersion: '1',
    input: null,
    priority: 'interactive',
    budget: {},
    metadata: { scheduled: true },
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
  };
}

async function withStores(
  factory: StoreFactory,
  fn: (runs: Store, schedules: ScheduleStore, tenantId: string) => Promise<void>,
): Promise<void> {
  const { store, dispose } = await factory.create();
  try {
    const tenant = await store.createTenant(
      `t-${Math.random().toString(36).slice(2)}`,
      `hash-${Math.random()}`,
    );
    await fn(store, scheduleAreaOf(store), tenant.id);
  } finally {
    await dispose();
  }
}

const isCode = (code: string) => (e: unknown) => e instanceof KeelError && e.code === code;

function startCommit(
  owner: string,
  token: number,
  scheduleId: string,
  run: NewRun,
  logicalTime: number,
): ScheduleCommit {
  return {
    scheduleId,
    owner,
    token,
    scheduleVersion: 1,
    release: true,
    nextFireAt: logicalTime + 60_000,
    createRuns: [run],
    newFires: [
      {
        logicalTime,
        kind: 'scheduled',
        status: 'started',
        runId: run.id,
        detail: null,
        startedAt: logicalTime,
      },
    ],
  };
}

export function scheduleStoreConformance(factory: StoreFactory): void {
  describe(`schedule store conformance: ${factory.name}`, () => {
    test('schedules: create, read, list, edit (version + 1), delete (gone from reads)', () =>
      withStores(factory, async (_runs, schedules, tenantId) => {
        const s = await schedules.createSchedule(
          newSchedule(tenantId, { name: 'a', webhookUrl: 'https://hooks.example' }),
          T0,
        );
        assert.deepEqual(
          [s.version, s.name, s.paused, s.nextFireAt, s.createdAt, s.webhookUrl],
          [1, 'a', false, T0 + 60_000, T0, 'https://hooks.example'],
        );
        assert.deepEqual(await schedules.getSchedule(s.id), s);
        const edited = await schedules.updateSchedule(
          s.id,
          { paused: true, template: { ...s.template, input: { n: 2 } } },
          T0 + 5,
        );
        assert.deepEqual(
          [edited.version, edited.paused, edited.template.input, edited.name, edited.updatedAt],
          [2, true, { n: 2 }, 'a', T0 + 5],
        );
        const other = await schedules.createSchedule(newSchedule(tenantId), T0);
        assert.deepEqual(
          (await schedules.listSchedules(tenantId, 10)).map((x) => x.id).sort(),
          [s.id, other.id].sort(),
        );
        await schedules.deleteSchedule(s.id, T0 + 6);
        assert.equal(await schedules.getSchedule(s.id), null);
        await assert.rejects(
          schedules.updateSchedule(s.id, { paused: false }, T0),
          isCode('schedule_not_found'),
        );
        await assert.rejects(schedules.deleteSchedule(s.id, T0), isCode('schedule_not_found'));
        assert.deepEqual(
          (await schedules.listSchedules(tenantId, 10)).map((x) => x.id),
          [other.id],
        );
      }));

    test('claims: only due schedules; a live claim excludes others; an expired or freed one is taken with a higher token', () =>
      withStores(factory, async (_runs, schedules, tenantId) => {
        const due = await schedules.createSchedule(newSchedule(tenantId), T0);
        await schedules.createSchedule(newSchedule(tenantId, { nextFireAt: T0 + 3_600_000 }), T0);
        await schedules.createSchedule(newSchedule(tenantId, { paused: true }), T0);
        const [a, ...restA] = await schedules.claimSchedules('a', T0 + 60_000, 30_000, 10);
        assert.deepEqual([a?.schedule.id, restA.length], [due.id, 0]);
        assert.deepEqual(await schedules.claimSchedules('b', T0 + 60_000 + 29_999, 30_000, 10), []);
        const [b] = await schedules.claimSchedules('b', T0 + 60_000 + 30_000, 30_000, 10);
        assert.equal(b?.schedule.id, due.id);
        assert.ok(b!.token > a!.token);
        // A store owned by one process frees a dead predecessor's claims at start: b's claim survives
        // only b itself.
        assert.equal(await schedules.expireForeignClaims('b'), 0);
        assert.deepEqual(await schedules.claimSchedules('c', T0 + 90_001, 30_000, 10), []);
        assert.equal(await schedules.expireForeignClaims('c'), 1);
        const [c] = await schedules.claimSchedules('c', T0 + 90_001, 30_000, 10);
        assert.ok(c!.token > b!.token);
        // A failed pass gives its claim up; a stale release (old token) changes nothing.
        await schedules.releaseClaim(due.id, 'c', c!.token - 1);
        assert.deepEqual(await schedules.claimSchedules('d', T0 + 90_002, 30_000, 10), []);
        await schedules.releaseClaim(due.id, 'c', c!.token);
        assert.equal(
          (await schedules.claimSchedules('d', T0 + 90_002, 30_000, 10))[0]?.schedule.id,
          due.id,
        );
      }));

    test('a pass commits fire, run and cursor together; a stale token or a second fire at the same time applies nothing', () =>
      withStores(factory, async (runs, schedules, tenantId) => {
        const s = await schedules.createSchedule(newSchedule(tenantId), T0);
        const [a] = await schedules.claimSchedules('a', T0 + 60_000, 1_000, 10);
        const [b] = await schedules.claimSchedules('b', T0 + 62_000, 1_000, 10);
        const staleRun = newRun(tenantId);
        await assert.rejects(
          schedules.commitSchedule(
            startCommit('a', a!.token, s.id, staleRun, T0 + 60_000),
            T0 + 62_000,
          ),
          isCode('stale_write'),
        );
        assert.equal(await runs.getRun(staleRun.id), null, 'a fenced-off pass creates no run');
        assert.equal(await schedules.getFire(s.id, T0 + 60_000), null);

        const run = newRun(tenantId);
        await schedules.commitSchedule(
          startCommit('b', b!.token, s.id, run, T0 + 60_000),
          T0 + 62_000,
        );
        const fire = await schedules.getFire(s.id, T0 + 60_000);
        assert.deepEqual(
          [fire?.status, fire?.runId, fire?.firedBy, fire?.scheduleVersion],
          ['started', run.id, 'b', 1],
        );
        assert.equal((await runs.getRun(run.id))?.status, 'queued');
        assert.equal((await schedules.getSchedule(s.id))?.nextFireAt, T0 + 120_000);

        // The same logical time again, under a valid claim: the fire's primary key refuses it, and
        // its run with it.
        const [c] = await schedules.claimSchedules('c', T0 + 200_000, 1_000, 10);
        const dupRun = newRun(tenantId);
        await assert.rejects(
          schedules.commitSchedule(
            startCommit('c', c!.token, s.id, dupRun, T0 + 60_000),
            T0 + 200_000,
          ),
        );
        assert.equal(await runs.getRun(dupRun.id), null, 'no second run for one fire');
        assert.equal((await schedules.getFire(s.id, T0 + 60_000))?.runId, run.id);
      }));

    test('open fires carry their run status; settling closes them; fire transitions are guarded; cancels go through the run store', () =>
      withStores(factory, async (runs, schedules, tenantId) => {
        const s = await schedules.createSchedule(newSchedule(tenantId), T0);
        const [a] = await schedules.claimSchedules('a', T0 + 60_000, 30_000, 10);
        const run = newRun(tenantId);
        await schedules.commitSchedule(
          {
            ...startCommit('a', a!.token, s.id, run, T0 + 60_000),
            release: false,
            newFires: [
              {
                logicalTime: T0 + 60_000,
                kind: 'scheduled',
                status: 'started',
                runId: run.id,
                detail: null,
                startedAt: T0 + 60_000,
              },
              {
                logicalTime: T0 + 1,
                kind: 'scheduled',
                status: 'missed',
                runId: null,
                detail: null,
                startedAt: null,
              },
              {
                logicalTime: T0 + 2,
                kind: 'scheduled',
                status: 'buffered',
                runId: null,
                detail: { bufferedAt: 'x' },
                startedAt: null,
              },
            ],
          },
          T0 + 60_000,
        );
        const open = await schedules.listOpenFires(s.id);
        assert.deepEqual(
          open.map((f) => [f.logicalTime - T0, f.status, f.runStatus]),
          [
            [2, 'buffered', null],
            [60_000, 'started', 'queued'],
          ],
        );

        await assert.rejects(
          schedules.commitSchedule(
            {
              scheduleId: s.id,
              owner: 'a',
              token: a!.token,
              scheduleVersion: 1,
              release: false,
              fireUpdates: [{ logicalTime: T0 + 2, from: 'pending', to: 'started' }],
            },
            T0 + 61_000,
          ),
          isCode('stale_write'),
        );
        await schedules.commitSchedule(
          {
            scheduleId: s.id,
            owner: 'a',
            token: a!.token,
            scheduleVersion: 1,
            release: true,
            settle: [T0 + 60_000],
            cancelRuns: [run.id],
            fireUpdates: [{ logicalTime: T0 + 2, from: 'buffered', to: 'skipped' }],
          },
          T0 + 61_000,
        );
        assert.deepEqual(await schedules.listOpenFires(s.id), []);
        assert.equal((await runs.getRun(run.id))?.status, 'cancelling');
        assert.deepEqual(
          (await schedules.listFires(s.id, { limit: 10 })).map((f) => f.logicalTime - T0),
          [60_000, 2, 1],
        );
        assert.deepEqual(
          (await schedules.listFires(s.id, { limit: 10, status: 'missed' })).map(
            (f) => f.logicalTime - T0,
          ),
          [1],
        );
        assert.deepEqual(
          (await schedules.listFires(s.id, { limit: 10, before: T0 + 60_000 })).map(
            (f) => f.logicalTime - T0,
          ),
          [2, 1],
        );
        const events = await schedules.listScheduleEvents(s.id, 0, 100);
        assert.deepEqual(
          events.map((e) => [e.seq, e.type]),
          [
            [1, 'fire.missed'],
            [2, 'fire.buffered'],
            [3, 'fire.started'],
            [4, 'fire.skipped'],
          ],
          'one event per fire recorded or moved, in logical-time order per commit, gapless',
        );
        assert.deepEqual(
          (await schedules.listScheduleEvents(s.id, 3, 100)).map((e) => e.seq),
          [4],
        );
      }));

    test('requested fires: recorded pending, missed or skipped ones reopened, fires that ran left alone; they make the schedule claimable', () =>
      withStores(factory, async (_runs, schedules, tenantId) => {
        const s = await schedules.createSchedule(newSchedule(tenantId, { paused: true }), T0);
        const [a] = await schedules.claimSchedules('a', T0, 30_000, 10);
        assert.equal(a, undefined, 'paused and nothing requested: not claimable');
        await schedules.updateSchedule(s.id, { paused: false }, T0);
        const [b] = await schedules.claimSchedules('b', T0 + 60_000, 30_000, 10);
        const run = newRun(tenantId);
        await schedules.commitSchedule(
          {
            ...startCommit('b', b!.token, s.id, run, T0 + 60_000),
            newFires: [
              {
                logicalTime: T0 + 60_000,
                kind: 'scheduled',
                status: 'started',
                runId: run.id,
                detail: null,
                startedAt: T0,
              },
              {
                logicalTime: T0 + 1,
                kind: 'scheduled',
                status: 'missed',
                runId: null,
                detail: null,
                startedAt: null,
              },
            ],
          },
          T0 + 60_000,
        );
        await schedules.updateSchedule(s.id, { paused: true }, T0);
        const requested = await schedules.requestFires(
          s.id,
          [
            { logicalTime: T0 + 1, kind: 'backfill' },
            { logicalTime: T0 + 60_000, kind: 'backfill' },
            { logicalTime: T0 + 5, kind: 'trigger' },
          ],
          T0,
        );
        assert.deepEqual(
          requested.map((t) => t - T0),
          [1, 5],
        );
        assert.deepEqual((await schedules.getFire(s.id, T0 + 1))?.status, 'pending');
        assert.deepEqual((await schedules.getFire(s.id, T0 + 1))?.kind, 'backfill');
        const [c] = await schedules.claimSchedules('c', T0 + 61_000, 30_000, 10);
        assert.equal(c?.schedule.id, s.id, 'requested fires make even a paused schedule claimable');
        await assert.rejects(
          schedules.requestFires('sch_missing', [{ logicalTime: 1, kind: 'trigger' }], T0),
          isCode('schedule_not_found'),
        );
      }));

    test('notifications: one per run ever; claimed with a token; attempts recorded; retries scheduled; allowlist per tenant', () =>
      withStores(factory, async (runs, schedules, tenantId) => {
        const s = await schedules.createSchedule(newSchedule(tenantId), T0);
        const run = (await runs.createRun(newRun(tenantId))).run;
        for (let i = 0; i < 2; i++) {
          const [claim] = await schedules.claimSchedules(
            `o${i}`,
            T0 + 60_000 + i * 40_000,
            30_000,
            10,
          );
          await schedules.commitSchedule(
            {
              scheduleId: s.id,
              owner: `o${i}`,
              token: claim!.token,
              scheduleVersion: 1,
              release: true,
              notifications: [
                { id: `ntf_${i}`, runId: run.id, url: 'https://hooks.example/x', payload: { i } },
              ],
            },
            T0,
          );
        }
        const [n] = await schedules.claimNotifications('d', T0, 10_000, 10);
        assert.deepEqual([n?.id, n?.payload, n?.attempts], ['ntf_0', { i: 0 }, 0]);
        assert.deepEqual(
          await schedules.claimNotifications('e', T0 + 1, 10_000, 10),
          [],
          'claimed by d',
        );
        await schedules.finishNotification(
          n!.id,
          n!.claimToken,
          { delivered: false, error: 'HTTP 500', retryAt: T0 + 5_000 },
          T0 + 2,
        );
        assert.deepEqual(await schedules.claimNotifications('e', T0 + 4_999, 10_000, 10), []);
        const [again] = await schedules.claimNotifications('e', T0 + 5_000, 10_000, 10);
        await schedules.finishNotification(
          again!.id,
          n!.claimToken,
          { delivered: true },
          T0 + 5_001,
        ); // stale token: ignored
        await schedules.finishNotification(
          again!.id,
          again!.claimToken,
          { delivered: true },
          T0 + 5_002,
        );
        const [stored] = await schedules.listNotifications(s.id);
        assert.deepEqual(
          [stored?.status, stored?.attempts, stored?.lastError, stored?.deliveredAt],
          ['delivered', 2, null, T0 + 5_002],
        );

        await schedules.setWebhookAllowlist(tenantId, ['https://a.example', 'https://b.example']);
        await schedules.setWebhookAllowlist(tenantId, ['https://b.example']);
        assert.deepEqual(await schedules.getWebhookAllowlist(tenantId), ['https://b.example']);
        assert.deepEqual(await schedules.getWebhookAllowlist('ten_other'), []);
      }));
  });
}
