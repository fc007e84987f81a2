// The schedule store area on Postgres: its statements live in schedule-statements/ and its writes run inside the
// run store's group-commit transactions, so a fire, the run it creates and the cancels it requests commit together.
// The claim's fencing token guards every pass; the fires' primary key is the backstop against a second run per fire.
import { readdirSync, readFileSync } from 'node:fs';
import { KeelError } from '../../domain/keel-error.ts';
import type {
  FireFilter, FireKind, FireRecord, NewSchedule, NotificationRecord, OpenFire, ScheduleClaim, ScheduleCommit, ScheduleEventRecord, SchedulePatch,
  ScheduleRecord, ScheduleStore,
} from '../schedule-store.ts';
import { commitEvents, notificationParams, patched, scheduleParams, toFire, toNotification, toOpenFire, toSchedule, toScheduleEvent, versionBump } from '../schedule-rows.ts';
import { jsonText } from '../rows.ts';
import type { PgTransaction, PostgresStore } from './postgres-store.ts';
import { PgStatement } from './statements.ts';

const STATEMENTS_DIR = new URL('./schedule-statements/', import.meta.url);

function loadStatements(): Map<string, PgStatement> {
  const statements = new Map<string, PgStatement>();
  for (const file of readdirSync(STATEMENTS_DIR).filter((f) => f.endsWith('.sql'))) {
    const name = file.slice(0, -4);
    statements.set(name, new PgStatement(`schedule-${name}`, readFileSync(new URL(file, STATEMENTS_DIR), 'utf8')));
  }
  return statements;
}

export class PostgresScheduleStore implements ScheduleStore {
  readonly #runs: PostgresStore;
  readonly #statements = loadStatements();

  constructor(runs: PostgresStore) {
    this.#runs = runs;
  }

  #s(name: string): PgStatement {
    const statement = this.#statements.get(name);
    if (statement === undefined) throw new Error(`missing SQL statement file postgres/schedule-statements/${name}.sql`);
    return statement;
  }

  createSchedule(schedule: NewSchedule, now: number): Promise<ScheduleRecord> {
    return this.#runs.transact(schedule.id, async ({ client }) => {
      await this.#s('insert-schedule').run(client, { id: schedule.id, tenant_id: schedule.tenantId, ...scheduleParams(schedule), now });
      return toSchedule((await this.#s('get-schedule').row(client, { id: schedule.id }))!);
    });
  }

  async getSchedule(id: string): Promise<ScheduleRecord | null> {
    const row = await this.#s('get-schedule').row(this.#runs.pool, { id });
    return row === undefined ? null : toSchedule(row);
  }

  async listSchedules(tenantId: string, limit: number, afterId?: string): Promise<ScheduleRecord[]> {
    return (await this.#s('list-schedules').rows(this.#runs.pool, { tenant_id: tenantId, after_id: afterId ?? null, limit })).map(toSchedule);
  }

  updateSchedule(id: string, patch: SchedulePatch, now: number): Promise<ScheduleRecord> {
    return this.#runs.transact(id, async ({ client }) => {
      const { rows } = await client.query<Record<string, unknown>>('SELECT * FROM schedules WHERE id = $1 AND deleted_at IS NULL FOR UPDATE', [id]);
      if (rows[0] === undefined) throw new KeelError('schedule_not_found', `schedule ${id} not found`);
      return toSchedule((await this.#s('update-schedule').row(client, { id, now, bump: versionBump(patch), ...scheduleParams(patched(toSchedule(rows[0]), patch)) }))!);
    });
  }

  deleteSchedule(id: string, now: number): Promise<void> {
    return this.#runs.transact(id, async ({ client }) => {
      if ((await this.#s('delete-schedule').row(client, { id, now })) === undefined) throw new KeelError('schedule_not_found', `schedule ${id} not found`);
    });
  }

  requestFires(scheduleId: string, fires: Array<{ logicalTime: number; kind: FireKind }>, now: number): Promise<number[]> {
    return this.#runs.transact(scheduleId, async ({ client }) => {
      const row = await this.#s('get-schedule').row(client, { id: scheduleId });
      if (row === undefined) throw new KeelError('schedule_not_found', `schedule ${scheduleId} not found`);
      const schedule = toSchedule(row);
      const recorded: number[] = [];
      for (const fire of fires) {
        const done = await this.#s('request-fire').row(client, {
          schedule_id: scheduleId, tenant_id: schedule.tenantId, logical_time: fire.logicalTime, kind: fire.kind, schedule_version: schedule.version, now,
        });
        if (done !== undefined) recorded.push(fire.logicalTime);
      }
      await this.#appendEvents(client, scheduleId, recorded.map((t) => ({ type: 'fire.requested', data: { logicalTime: new Date(t).toISOString(), kind: fires.find((f) => f.logicalTime === t)!.kind } })), now);
      return recorded;
    });
  }

  async listFires(scheduleId: string, filter: FireFilter): Promise<FireRecord[]> {
    const rows = await this.#s('list-fires').rows(this.#runs.pool, { schedule_id: scheduleId, status: filter.status ?? null, before: filter.before ?? null, limit: filter.limit });
    return rows.map(toFire);
  }

  async listScheduleEvents(scheduleId: string, afterSeq: number, limit: number): Promise<ScheduleEventRecord[]> {
    return (await this.#s('list-schedule-events').rows(this.#runs.pool, { schedule_id: scheduleId, after_seq: afterSeq, limit })).map(toScheduleEvent);
  }

  async #appendEvents(client: PgTransaction['client'], scheduleId: string, events: Array<{ type: string; data: unknown }>, now: number): Promise<void> {
    if (events.length === 0) return;
    const first = Number((await this.#s('allocate-schedule-event-seqs').row(client, { id: scheduleId, count: events.length }))!.first_seq);
    await this.#insertEvents(client, scheduleId, first, events, now);
  }

  async #insertEvents(client: PgTransaction['client'], scheduleId: string, first: number, events: Array<{ type: string; data: unknown }>, now: number): Promise<void> {
    if (events.length === 0) return;
    await this.#s('insert-schedule-events').run(client, {
      schedule_id: scheduleId, first_seq: first, at: now, events: JSON.stringify(events.map((e) => ({ type: e.type, data: JSON.stringify(e.data) }))),
    });
  }

  async getFire(scheduleId: string, logicalTime: number): Promise<FireRecord | null> {
    const row = await this.#s('get-fire').row(this.#runs.pool, { schedule_id: scheduleId, logical_time: logicalTime });
    return row === undefined ? null : toFire(row);
  }

  async listOpenFires(scheduleId: string): Promise<OpenFire[]> {
    return (await this.#s('list-open-fires').rows(this.#runs.pool, { schedule_id: scheduleId })).map(toOpenFire);
  }

  async claimSchedules(owner: string, now: number, leaseMs: number, limit: number): Promise<ScheduleClaim[]> {
    if ((await this.#s('any-schedule-due').row(this.#runs.pool, { now })) === undefined) return [];
    return this.#runs.transact('schedules:claim', async ({ client }) => {
      const rows = await this.#s('claim-schedules').rows(client, { owner, now, lease_expires_at: now + leaseMs, limit });
      return rows.map((row) => ({ schedule: toSchedule(row), token: Number(row.claim_token) }));
    });
  }

  commitSchedule(c: ScheduleCommit, now: number): Promise<void> {
    return this.#runs.transact(c.scheduleId, (tx) => this.#applyCommit(c, now, tx));
  }

  releaseClaim(scheduleId: string, owner: string, token: number): Promise<void> {
    return this.#runs.transact(scheduleId, async ({ client }) => {
      await this.#s('release-schedule-claim').run(client, { id: scheduleId, owner, token });
    });
  }

  expireForeignClaims(owner: string): Promise<number> {
    return this.#runs.transact('schedules:expire', async ({ client }) =>
      (await this.#s('expire-foreign-schedule-claims').rows(client, { owner })).length
      + (await this.#s('expire-foreign-notification-claims').rows(client, { owner })).length);
  }

  async #applyCommit(c: ScheduleCommit, now: number, tx: PgTransaction): Promise<void> {
    const { client } = tx;
    const events = commitEvents(c);
    const guard = await this.#s('commit-schedule').row(client, { event_count: events.length,
      id: c.scheduleId, owner: c.owner, token: c.token, set_next: 'nextFireAt' in c ? 1 : 0, next_fire_at: c.nextFireAt ?? null,
      last_success_at: c.lastSuccessAt ?? null, release: c.release ? 1 : 0, release_until: c.releaseUntil ?? null,
    });
    if (guard === undefined) throw new KeelError('stale_write', `the claim on schedule ${c.scheduleId} was lost (token ${c.token})`);
    const schedule = { tenantId: guard.tenant_id as string };
    for (const run of c.createRuns ?? []) await tx.insertRun(run);
    for (const runId of c.cancelRuns ?? []) await tx.requestCancel(runId, `schedule ${c.scheduleId}`);
    for (const f of c.newFires ?? []) {
      await this.#s('insert-fire').run(client, {
        schedule_id: c.scheduleId, logical_time: f.logicalTime, tenant_id: schedule.tenantId, kind: f.kind, status: f.status,
        run_id: f.runId, schedule_version: c.scheduleVersion, fired_by: c.owner, detail: jsonText(f.detail),
        run_settled: f.status === 'skipped' || f.status === 'missed' ? 1 : 0, now, started_at: f.startedAt,
      });
    }
    for (const u of c.fireUpdates ?? []) {
      const moved = await this.#s('update-fire').row(client, {
        schedule_id: c.scheduleId, logical_time: u.logicalTime, from_status: u.from, to_status: u.to, run_id: u.runId ?? null,
        detail: jsonText(u.detail), started_at: u.startedAt ?? null, schedule_version: c.scheduleVersion, fired_by: c.owner,
        run_settled: u.to === 'skipped' || u.to === 'missed' ? 1 : 0,
      });
      if (moved === undefined) throw new KeelError('stale_write', `fire ${u.logicalTime} of schedule ${c.scheduleId} is no longer ${u.from}`);
    }
    for (const logicalTime of c.settle ?? []) await this.#s('settle-fire').run(client, { schedule_id: c.scheduleId, logical_time: logicalTime });
    for (const n of c.notifications ?? []) {
      await this.#s('insert-notification').run(client, {
        id: n.id, tenant_id: schedule.tenantId, schedule_id: c.scheduleId, run_id: n.runId, url: n.url, payload: JSON.stringify(n.payload), now,
      });
    }
    await this.#insertEvents(client, c.scheduleId, Number(guard.first_seq), events, now);
  }

  setWebhookAllowlist(tenantId: string, origins: string[]): Promise<void> {
    return this.#runs.transact(`allowlist:${tenantId}`, async ({ client }) => {
      await this.#s('delete-allowlist').run(client, { tenant_id: tenantId });
      for (const origin of origins) await this.#s('insert-allowlist').run(client, { tenant_id: tenantId, origin });
    });
  }

  async getWebhookAllowlist(tenantId: string): Promise<string[]> {
    return (await this.#s('get-allowlist').rows(this.#runs.pool, { tenant_id: tenantId })).map((r) => r.origin as string);
  }

  async claimNotifications(owner: string, now: number, leaseMs: number, limit: number): Promise<NotificationRecord[]> {
    if ((await this.#s('any-notification-due').row(this.#runs.pool, { now })) === undefined) return [];
    return this.#runs.transact('notifications:claim', async ({ client }) =>
      (await this.#s('claim-notifications').rows(client, { owner, now, lease_expires_at: now + leaseMs, limit })).map(toNotification));
  }

  finishNotification(id: string, token: number, outcome: { delivered: true } | { delivered: false; error: string; retryAt: number | null }, now: number): Promise<void> {
    return this.#runs.transact(id, async ({ client }) => {
      await this.#s('finish-notification').run(client, notificationParams(id, token, outcome, now));
    });
  }

  async listNotifications(scheduleId: string): Promise<NotificationRecord[]> {
    return (await this.#s('list-notifications').rows(this.#runs.pool, { schedule_id: scheduleId })).map(toNotification);
  }
}
