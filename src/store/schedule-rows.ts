// Mapping between schedule rows and schedule records, shared by both backends (JSON as text, times
// as integer ms, Postgres BIGINT arriving as text). No behaviour lives here.
import type { FireStatus } from '../domain/fire-status.ts';
import type { RunStatus } from '../domain/run-status.ts';
import type { Json } from '../domain/json.ts';
import type {
  FireKind,
  FireRecord,
  ScheduleCommit,
  ScheduleEventRecord,
  NewSchedule,
  NotificationRecord,
  OpenFire,
  OverlapPolicy,
  RunTemplate,
  SchedulePatch,
  ScheduleRecord,
} from './schedule-store.ts';

type Row = Record<string, unknown>;

const num = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);
const json = <T>(value: unknown): T | null =>
  value === null || value === undefined ? null : (JSON.parse(value as string) as T);

export function toSchedule(row: Row): ScheduleRecord {
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    name: (row.name as string | null) ?? null,
    version: Number(row.version),
    cron: (row.cron as string | null) ?? null,
    intervalMs: num(row.interval_ms),
    timeZone: row.time_zone as string,
    startAt: num(row.start_at),
    endAt: num(row.end_at),
    paused: Number(row.paused) === 1,
    template: json<RunTemplate>(row.template)!,
    catchupWindowMs: Number(row.catchup_window_ms),
    overlap: row.overlap as OverlapPolicy,
    webhookUrl: (row.webhook_url as string | null) ?? null,
    nextFireAt: num(row.next_fire_at),
    lastSuccessAt: num(row.last_success_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export function toFire(row: Row): FireRecord {
  return {
    scheduleId: row.schedule_id as string,
    tenantId: row.tenant_id as string,
    logicalTime: Number(row.logical_time),
    kind: row.kind as FireKind,
    status: row.status as FireStatus,
    runId: (row.run_id as string | null) ?? null,
    scheduleVersion: Number(row.schedule_version),
    firedBy: (row.fired_by as string | null) ?? null,
    detail: json<Record<string, Json>>(row.detail),
    runSettled: Number(row.run_settled) === 1,
    recordedAt: Number(row.recorded_at),
    startedAt: num(row.started_at),
  };
}

export function toOpenFire(row: Row): OpenFire {
  return { ...toFire(row), runStatus: (row.run_status as RunStatus | null) ?? null };
}

export function toNotification(row: Row): NotificationRecord {
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    scheduleId: row.schedule_id as string,
    runId: row.run_id as string,
    url: row.url as string,
    payload: json<Json>(row.payload),
    status: row.status as NotificationRecord['status'],
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    lastError: (row.last_error as string | null) ?? null,
    claimToken: Number(row.claim_token),
    deliveredAt: num(row.delivered_at),
  };
}

/** The editable columns of a schedule as statement parameters. */
export function scheduleParams(
  s: Omit<NewSchedule, 'id' | 'tenantId'>,
): Record<string, string | number | null> {
  return {
    name: s.name,
    cron: s.cron,
    interval_ms: s.intervalMs,
    time_zone: s.timeZone,
    start_at: s.startAt,
    end_at: s.endAt,
    paused: s.paused ? 1 : 0,
    template: JSON.stringify(s.template),
    catchup_window_ms: s.catchupWindowMs,
    overlap: s.overlap,
    webhook_url: s.webhookUrl,
    next_fire_at: s.nextFireAt,
  };
}

/**
 * The stored schedule with a patch applied (the fields the patch names replace the stored ones).
 */
export function patched(
  current: ScheduleRecord,
  patch: SchedulePatch,
): Omit<NewSchedule, 'id' | 'tenantId'> {
  const pick = <K extends keyof SchedulePatch>(
    key: K,
    fallback: NonNullable<SchedulePatch[K]> | null,
  ) => (key in patch ? patch[key] : fallback) as NonNullable<SchedulePatch[K]>;
  return {
    name: pick('name', current.name),
    cron: pick('cron', current.cron),
    intervalMs: pick('intervalMs', current.intervalMs),
    timeZone: pick('timeZone', current.timeZone),
    startAt: pick('startAt', current.startAt),
    endAt: pick('endAt', current.endAt),
    paused: pick('paused', current.paused),
    template: pick('template', current.template),
    catchupWindowMs: pick('catchupWindowMs', current.catchupWindowMs),
    overlap: pick('overlap', current.overlap),
    webhookUrl: pick('webhookUrl', current.webhookUrl),
    nextFireAt: pick('nextFireAt', current.nextFireAt),
  };
}

/** Parameters of finish-notification.sql for one attempt's outcome. */
export function notificationParams(
  id: string,
  token: number,
  outcome: { delivered: true } | { delivered: false; error: string; retryAt: number | null },
  now: number,
) {
  if (outcome.delivered)
    return {
      id,
      token,
      status: 'delivered',
      next_attempt_at: now,
      last_error: null,
      delivered_at: now,
    };
  return {
    id,
    token,
    status: outcome.retryAt === null ? 'failed' : 'pending',
    next_attempt_at: outcome.retryAt ?? now,
    last_error: outcome.error.slice(0, 2000),
    delivered_at: null,
  };
}

/**
 * An edit bumps the version, except pausing or resuming alone: runs record the version of what they
 * run.
 */
export function versionBump(patch: SchedulePatch): number {
  return Object.keys(patch).every((k) => k === 'paused' || k === 'nextFireAt') ? 0 : 1;
}

export function toScheduleEvent(row: Row): ScheduleEventRecord {
  return {
    scheduleId: row.schedule_id as string,
    seq: Number(row.seq),
    type: row.type as string,
    at: Number(row.at),
    data: json<Json>(row.data),
  };
}

/**
 * The events a pass's commit appends: one per fire it records or moves (in logical-time order), one
 * per notification.
 */
export function commitEvents(c: ScheduleCommit): Array<{ type: string; data: Json }> {
  const iso = (t: number) => new Date(t).toISOString();
  const fires = [
    ...(c.newFires ?? []).map((f) => ({
      t: f.logicalTime,
      type: `fire.${f.status}`,
      data: { logicalTime: iso(f.logicalTime), kind: f.kind, runId: f.runId, detail: f.detail },
    })),
    ...(c.fireUpdates ?? []).map((u) => ({
      t: u.logicalTime,
      type: `fire.${u.to}`,
      data: {
        logicalTime: iso(u.logicalTime),
        from: u.from,
        runId: u.runId ?? null,
        detail: u.detail ?? null,
      },
    })),
  ].sort((a, b) => a.t - b.t);
  return [
    ...fires.map(({ type, data }) => ({ type, data: data as Json })),
    ...(c.notifications ?? []).map((n) => ({
      type: 'notification.queued',
      data: { notificationId: n.id, runId: n.runId },
    })),
  ];
}
