// The schedule store area on SQLite: its statements live in schedule-statements/ and run on the run store's
// connection and inside its write transactions, so a fire, the run it creates and the cancels it requests commit
// together (one group-commit transaction). It applies the scheduler's decisions; it never makes one.
import { readdirSync, readFileSync } from 'node:fs';
import { KeelError } from '../../domain/keel-error.ts';
import type {
  FireFilter, FireKind, FireRecord, NewSchedule, NotificationRecord, OpenFire, ScheduleClaim, ScheduleCommit, ScheduleEventRecord, SchedulePatch,
  ScheduleRecord, ScheduleStore,
} from '../schedule-store.ts';
import { commitEvents, notificationParams, patched, scheduleParams, toFire, toNotification, toOpenFire, toSchedule, toScheduleEvent, versionBump } from '../schedule-rows.ts';
import { jsonText } from '../rows.ts';
import { NamedStatement } from './statements.ts';
import type { SqliteStore, SqliteTransaction } from './sqlite-store.ts';

const STATEMENTS_DIR = new URL('./schedule-statements/', import.meta.url);

type Row = Record<string, unknown>;

export class SqliteScheduleStore implements ScheduleStore {
  readonly #runs: SqliteStore;
  #prepared: Map<string, NamedStatement> | undefined;

  /** `runs` must be migrated first (its migrations create this area's tables too). */
  constructor(runs: SqliteStore) {
    this.#runs = runs;
  }

  #s(name: string): NamedStatement {
    if (this.#prepared === undefined) {
      this.#prepared = new Map();
      for (const file of readdirSync(STATEMENTS_DIR).filter((f) => f.endsWith('.sql'))) {
        this.#prepared.set(file.slice(0, -4), new NamedStatement(this.#runs.connection, file, readFileSync(new URL(file, STATEMENTS_DIR), 'utf8')));
      }
    }
    const statement = this.#prepared.get(name);
    if (statement === undefined) throw new Error(`missing SQL statement file sqlite/schedule-statements/${name}.sql`);
    return statement;
  }

  createSchedule(schedule: NewSchedule, now: number): Promise<ScheduleRecord> {
    return this.#runs.transact(() => {
      this.#s('insert-schedule').run({ id: schedule.id, tenant_id: schedule.tenantId, ...scheduleParams(schedule), now });
      return toSchedule(this.#s('get-schedule').get({ id: schedule.id })!);
    });
  }

  async getSchedule(id: string): Promise<ScheduleRecord | null> {
    const row = this.#s('get-schedule').get({ id });
    return row === undefined ? null : toSchedule(row);
  }

  async listSchedules(tenantId: string, limit: number, afterId?: string): Promise<ScheduleRecord[]> {
    return this.#s('list-schedules').all({ tenant_id: tenantId, after_id: afterId ?? null, limit }).map(toSchedule);
  }

  updateSchedule(id: string, patch: SchedulePatch, now: number): Promise<ScheduleRecord> {
    return this.#runs.transact(() => {
      const current = this.#s('get-schedule').get({ id });
      if (current === undefined) throw new KeelError('schedule_not_found', `schedule ${id} not found`);
      return toSchedule(this.#s('update-schedule').get({ id, now, bump: versionBump(patch), ...scheduleParams(patched(toSchedule(current), patch)) })!);
    });
  }

  deleteSchedule(id: string, now: number): Promise<void> {
    return this.#runs.transact(() => {
      if (this.#s('delete-schedule').get({ id, now }) === undefined) throw new KeelError('schedule_not_found', `schedule ${id} not found`);
    });
  }

  requestFires(scheduleId: string, fires: Array<{ logicalTime: number; kind: FireKind }>, now: number): Promise<number[]> {
    return this.#runs.transact(() => {
      const row = this.#s('get-schedule').get({ id: scheduleId });
      if (row === undefined) throw new KeelError('schedule_not_found', `schedule ${scheduleId} not found`);
      const schedule = toSchedule(row);
      const recorded: number[] = [];
      for (const fire of fires) {
        const done = this.#s('request-fire').get({
          schedule_id: scheduleId, tenant_id: schedule.tenantId, logical_time: fire.logicalTime, kind: fire.kind, schedule_version: schedule.version, now,
        });
        if (done !== undefined) recorded.push(fire.logicalTime);
      }
      this.#appendEvents(scheduleId, recorded.map((t) => ({ type: 'fire.requested', data: { logicalTime: new Date(t).toISOString(), kind: fires.find((f) => f.logicalTime === t)!.kind } })), now);
      return recorded;
    });
  }

  async listFires(scheduleId: string, filter: FireFilter): Promise<FireRecord[]> {
    return this.#s('list-fires').all({ schedule_id: scheduleId, status: filter.status ?? null, before: filter.before ?? null, limit: filter.limit }).map(toFire);
  }

  async listScheduleEvents(scheduleId: string, afterSeq: number, limit: number): Promise<ScheduleEventRecord[]> {
    return this.#s('list-schedule-events').all({ schedule_id: scheduleId, after_seq: afterSeq, limit }).map(toScheduleEvent);
  }

  #appendEvents(scheduleId: string, events: Array<{ type: string; data: unknown }>, now: number): void {
    if (events.length === 0) return;
    this.#insertEvents(scheduleId, Number(this.#s('allocate-schedule-event-seqs').get({ id: scheduleId, count: events.length })!.first_seq), events, now);
  }

  #insertEvents(scheduleId: string, first: number, events: Array<{ type: string; data: unknown }>, now: number): void {
    events.forEach((e, i) => this.#s('insert-schedule-event').run({ schedule_id: scheduleId, seq: first + i, type: e.type, at: now, data: JSON.stringify(e.data) }));
  }

  async getFire(scheduleId: string, logicalTime: number): Promise<FireRecord | null> {
    const row = this.#s('get-fire').get({ schedule_id: scheduleId, logical_time: logicalTime });
    return row === undefined ? null : toFire(row);
  }

  async listOpenFires(scheduleId: string): Promise<OpenFire[]> {
    return this.#s('list-open-fires').all({ schedule_id: scheduleId }).map(toOpenFire);
  }

  claimSchedules(owner: string, now: number, leaseMs: number, limit: number): Promise<ScheduleClaim[]> {
    if (this.#s('any-schedule-due').get({ now }) === undefined) return Promise.resolve([]);
    return this.#runs.transact(() => this.#s('claim-schedules').all({ owner, now, lease_expires_at: now + leaseMs, limit })
      .map((row) => ({ schedule: toSchedule(row), token: Number(row.claim_token) })));
  }

  commitSchedule(c: ScheduleCommit, now: number): Promise<void> {
    return this.#runs.transact((tx) => this.#applyCommit(c, now, tx));
  }

  releaseClaim(scheduleId: string, owner: string, token: number): Promise<void> {
    return this.#runs.transact(() => {
      this.#s('release-schedule-claim').get({ id: scheduleId, owner, token });
    });
  }

  expireForeignClaims(owner: string): Promise<number> {
    return this.#runs.transact(() => this.#s('expire-foreign-schedule-claims').all({ owner }).length
      + this.#s('expire-foreign-notification-claims').all({ owner }).length);
  }

  #applyCommit(c: ScheduleCommit, now: number, tx: SqliteTransaction): void {
    const events = commitEvents(c);
    const guard = this.#s('commit-schedule').get({ event_count: events.length,
      id: c.scheduleId, owner: c.owner, token: c.token, set_next: 'nextFireAt' in c ? 1 : 0, next_fire_at: c.nextFireAt ?? null,
      last_success_at: c.lastSuccessAt ?? null, release: c.release ? 1 : 0, release_until: c.releaseUntil ?? null,
    });
    if (guard === undefined) throw new KeelError('stale_write', `the claim on schedule ${c.scheduleId} was lost (token ${c.token})`);
    const schedule = { tenantId: guard.tenant_id as string };
    for (const run of c.createRuns ?? []) tx.insertRun(run);
    for (const runId of c.cancelRuns ?? []) tx.requestCancel(runId, `schedule ${c.scheduleId}`);
    for (const f of c.newFires ?? []) {
      this.#s('insert-fire').run({
        schedule_id: c.scheduleId, logical_time: f.logicalTime, tenant_id: schedule.tenantId, kind: f.kind, status: f.status,
        run_id: f.runId, schedule_version: c.scheduleVersion, fired_by: c.owner, detail: jsonText(f.detail),
        run_settled: f.status === 'skipped' || f.status === 'missed' ? 1 : 0, now, started_at: f.startedAt,
      });
    }
    for (const u of c.fireUpdates ?? []) {
      const moved = this.#s('update-fire').get({
        schedule_id: c.scheduleId, logical_time: u.logicalTime, from_status: u.from, to_status: u.to, run_id: u.runId ?? null,
        detail: jsonText(u.detail), started_at: u.startedAt ?? null, schedule_version: c.scheduleVersion, fired_by: c.owner,
        run_settled: u.to === 'skipped' || u.to === 'missed' ? 1 : 0,
      });
      if (moved === undefined) throw new KeelError('stale_write', `fire ${u.logicalTime} of schedule ${c.scheduleId} is no longer ${u.from}`);
    }
    for (const logicalTime of c.settle ?? []) this.#s('settle-fire').run({ schedule_id: c.scheduleId, logical_time: logicalTime });
    for (const n of c.notifications ?? []) {
      this.#s('insert-notification').run({
        id: n.id, tenant_id: schedule.tenantId, schedule_id: c.scheduleId, run_id: n.runId, url: n.url, payload: JSON.stringify(n.payload), now,
      });
    }
    this.#insertEvents(c.scheduleId, Number(guard.first_seq), events, now);
  }

  setWebhookAllowlist(tenantId: string, origins: string[]): Promise<void> {
    return this.#runs.transact(() => {
      this.#s('delete-allowlist').run({ tenant_id: tenantId });
      for (const origin of origins) this.#s('insert-allowlist').run({ tenant_id: tenantId, origin });
    });
  }

  async getWebhookAllowlist(tenantId: string): Promise<string[]> {
    return this.#s('get-allowlist').all({ tenant_id: tenantId }).map((r: Row) => r.origin as string);
  }

  claimNotifications(owner: string, now: number, leaseMs: number, limit: number): Promise<NotificationRecord[]> {
    if (this.#s('any-notification-due').get({ now }) === undefined) return Promise.resolve([]);
    return this.#runs.transact(() => this.#s('claim-notifications').all({ owner, now, lease_expires_at: now + leaseMs, limit }).map(toNotification));
  }

  finishNotification(id: string, token: number, outcome: { delivered: true } | { delivered: false; error: string; retryAt: number | null }, now: number): Promise<void> {
    return this.#runs.transact(() => {
      this.#s('finish-notification').get(notificationParams(id, token, outcome, now));
    });
  }

  async listNotifications(scheduleId: string): Promise<NotificationRecord[]> {
    return this.#s('list-notifications').all({ schedule_id: scheduleId }).map(toNotification);
  }
}
