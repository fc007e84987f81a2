// The schedule procedures both stores share: a scheduler pass applied under its claim's fencing
// token (fires, the runs they create, the cancels they request, notifications and events, in one
// transaction with the runs), requested fires, and edits. Each runs inside the run store's write
// transaction, over the schedule area's named statements.
import { KeelError } from '../../domain/keel-error.ts';
import { jsonText } from '../rows.ts';
import {
  commitEvents,
  notificationParams,
  patched,
  scheduleParams,
  toNotification,
  toSchedule,
  versionBump,
} from '../schedule-rows.ts';
import type {
  FireKind,
  NewSchedule,
  NotificationRecord,
  ScheduleClaim,
  ScheduleCommit,
  SchedulePatch,
  ScheduleRecord,
} from '../schedule-store.ts';
import { cancelRunById, insertRun } from './runs.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

type ScheduleEvent = { type: string; data: unknown };

export function* commitSchedule(tx: Tx, c: ScheduleCommit, now: number): Procedure<void> {
  const events = commitEvents(c);
  const guard = yield* one('commit-schedule', {
    event_count: events.length,
    id: c.scheduleId,
    owner: c.owner,
    token: c.token,
    set_next: 'nextFireAt' in c ? 1 : 0,
    next_fire_at: c.nextFireAt ?? null,
    last_success_at: c.lastSuccessAt ?? null,
    release: c.release ? 1 : 0,
    release_until: c.releaseUntil ?? null,
  });
  if (guard === undefined)
    throw new KeelError(
      'stale_write',
      `the claim on schedule ${c.scheduleId} was lost (token ${c.token})`,
    );
  const tenantId = guard.tenant_id as string;
  for (const newRun of c.createRuns ?? []) yield* insertRun(tx, newRun);
  for (const runId of c.cancelRuns ?? [])
    yield* cancelRunById(tx, runId, `schedule ${c.scheduleId}`, true);
  for (const f of c.newFires ?? []) {
    yield run('insert-fire', {
      schedule_id: c.scheduleId,
      logical_time: f.logicalTime,
      tenant_id: tenantId,
      kind: f.kind,
      status: f.status,
      run_id: f.runId,
      schedule_version: c.scheduleVersion,
      fired_by: c.owner,
      detail: jsonText(f.detail),
      run_settled: f.status === 'skipped' || f.status === 'missed' ? 1 : 0,
      now,
      started_at: f.startedAt,
    });
  }
  for (const u of c.fireUpdates ?? []) {
    const moved = yield* one('update-fire', {
      schedule_id: c.scheduleId,
      logical_time: u.logicalTime,
      from_status: u.from,
      to_status: u.to,
      run_id: u.runId ?? null,
      detail: jsonText(u.detail),
      started_at: u.startedAt ?? null,
      schedule_version: c.scheduleVersion,
      fired_by: c.owner,
      run_settled: u.to === 'skipped' || u.to === 'missed' ? 1 : 0,
    });
    if (moved === undefined)
      throw new KeelError(
        'stale_write',
        `fire ${u.logicalTime} of schedule ${c.scheduleId} is no longer ${u.from}`,
      );
  }
  for (const logicalTime of c.settle ?? [])
    yield run('settle-fire', { schedule_id: c.scheduleId, logical_time: logicalTime });
  for (const n of c.notifications ?? []) {
    yield run('insert-notification', {
      id: n.id,
      tenant_id: tenantId,
      schedule_id: c.scheduleId,
      run_id: n.runId,
      url: n.url,
      payload: JSON.stringify(n.payload),
      now,
    });
  }
  yield* insertScheduleEvents(tx, c.scheduleId, Number(guard.first_seq), events, now);
}

/**
 * Records requested fires (trigger, backfill) as `pending`, reopening missed or skipped ones;
 * returns those recorded.
 */
export function* requestFires(
  tx: Tx,
  scheduleId: string,
  fires: ReadonlyArray<{ logicalTime: number; kind: FireKind }>,
  now: number,
): Procedure<number[]> {
  const row = yield* one('get-schedule', { id: scheduleId });
  if (row === undefined)
    throw new KeelError('schedule_not_found', `schedule ${scheduleId} not found`);
  const schedule = toSchedule(row);
  const recorded: number[] = [];
  for (const fire of fires) {
    const done = yield* one('request-fire', {
      schedule_id: scheduleId,
      tenant_id: schedule.tenantId,
      logical_time: fire.logicalTime,
      kind: fire.kind,
      schedule_version: schedule.version,
      now,
    });
    if (done !== undefined) recorded.push(fire.logicalTime);
  }
  const events = recorded.map((t) => ({
    type: 'fire.requested',
    data: {
      logicalTime: new Date(t).toISOString(),
      kind: fires.find((f) => f.logicalTime === t)!.kind,
    },
  }));
  if (events.length > 0) {
    const first = Number(
      (yield* one('allocate-schedule-event-seqs', { id: scheduleId, count: events.length }))!
        .first_seq,
    );
    yield* insertScheduleEvents(tx, scheduleId, first, events, now);
  }
  return recorded;
}

export function* updateSchedule(
  id: string,
  patch: SchedulePatch,
  now: number,
): Procedure<ScheduleRecord> {
  const current = yield* one('lock-schedule', { id });
  if (current === undefined) throw new KeelError('schedule_not_found', `schedule ${id} not found`);
  return toSchedule(
    (yield* one('update-schedule', {
      id,
      now,
      bump: versionBump(patch),
      ...scheduleParams(patched(toSchedule(current), patch)),
    }))!,
  );
}

export function* createSchedule(schedule: NewSchedule, now: number): Procedure<ScheduleRecord> {
  yield run('insert-schedule', {
    id: schedule.id,
    tenant_id: schedule.tenantId,
    ...scheduleParams(schedule),
    now,
  });
  return toSchedule((yield* one('get-schedule', { id: schedule.id }))!);
}

export function* deleteSchedule(id: string, now: number): Procedure<void> {
  if ((yield* one('delete-schedule', { id, now })) === undefined)
    throw new KeelError('schedule_not_found', `schedule ${id} not found`);
}

export function* claimSchedules(
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
): Procedure<ScheduleClaim[]> {
  const rows = yield* all('claim-schedules', {
    owner,
    now,
    lease_expires_at: now + leaseMs,
    limit,
  });
  return rows.map((row) => ({ schedule: toSchedule(row), token: Number(row.claim_token) }));
}

export function* releaseClaim(scheduleId: string, owner: string, token: number): Procedure<void> {
  yield run('release-schedule-claim', { id: scheduleId, owner, token });
}

export function* expireForeignClaims(owner: string): Procedure<number> {
  return (
    (yield* all('expire-foreign-schedule-claims', { owner })).length +
    (yield* all('expire-foreign-notification-claims', { owner })).length
  );
}

export function* claimNotifications(
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
): Procedure<NotificationRecord[]> {
  return (yield* all('claim-notifications', {
    owner,
    now,
    lease_expires_at: now + leaseMs,
    limit,
  })).map(toNotification);
}

export function* finishNotification(
  id: string,
  token: number,
  outcome: { delivered: true } | { delivered: false; error: string; retryAt: number | null },
  now: number,
): Procedure<void> {
  yield run('finish-notification', notificationParams(id, token, outcome, now));
}

export function* setWebhookAllowlist(
  tenantId: string,
  origins: readonly string[],
): Procedure<void> {
  yield run('delete-allowlist', { tenant_id: tenantId });
  for (const origin of origins) yield run('insert-allowlist', { tenant_id: tenantId, origin });
}

function* insertScheduleEvents(
  tx: Tx,
  scheduleId: string,
  firstSeq: number,
  events: readonly ScheduleEvent[],
  now: number,
): Procedure<void> {
  if (events.length === 0) return;
  if (tx.dialect.bulkStatements) {
    yield run('insert-schedule-events', {
      schedule_id: scheduleId,
      first_seq: firstSeq,
      at: now,
      events: JSON.stringify(events.map((e) => ({ type: e.type, data: JSON.stringify(e.data) }))),
    });
    return;
  }
  for (let i = 0; i < events.length; i++) {
    yield run('insert-schedule-event', {
      schedule_id: scheduleId,
      seq: firstSeq + i,
      type: events[i]!.type,
      at: now,
      data: JSON.stringify(events[i]!.data),
    });
  }
}
