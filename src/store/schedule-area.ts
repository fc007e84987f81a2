// The schedule store area, written once for both backends: its writes are the shared schedule
// procedures (procedures/schedules.ts) run inside the run store's write transaction, so a fire, the
// run it creates and the cancels it requests commit together; its reads are single named
// statements. A backend supplies only the port below.
import type { FireStatus } from '../domain/fire-status.ts';
import * as procedures from './procedures/schedules.ts';
import type { Procedure, Row, Step, Tx } from './procedures/transaction.ts';
import {
  toFire,
  toNotification,
  toOpenFire,
  toSchedule,
  toScheduleEvent,
} from './schedule-rows.ts';
import type {
  FireFilter,
  FireKind,
  FireRecord,
  NewSchedule,
  NotificationRecord,
  OpenFire,
  ScheduleClaim,
  ScheduleCommit,
  ScheduleEventRecord,
  SchedulePatch,
  ScheduleRecord,
  ScheduleStore,
} from './schedule-store.ts';

/**
 * What a backend gives the schedule area: its write transactions and single reads, over the area's
 * statements.
 */
export interface ScheduleAreaPort {
  /**
   * Runs a procedure in a write transaction of the run store; `key` keeps writes about one object
   * in order.
   */
  transact<T>(key: string, procedure: (tx: Tx) => Procedure<T>): Promise<T>;
  /** One statement outside any write transaction. */
  read(step: Step): Promise<unknown>;
}

export class ScheduleArea implements ScheduleStore {
  readonly #port: ScheduleAreaPort;

  constructor(port: ScheduleAreaPort) {
    this.#port = port;
  }

  async #one(statement: string, params: Step['params']): Promise<Row | undefined> {
    return (await this.#port.read({ mode: 'one', statement, params })) as Row | undefined;
  }

  async #all(statement: string, params: Step['params']): Promise<Row[]> {
    return (await this.#port.read({ mode: 'all', statement, params })) as Row[];
  }

  createSchedule(schedule: NewSchedule, now: number): Promise<ScheduleRecord> {
    return this.#port.transact(schedule.id, () => procedures.createSchedule(schedule, now));
  }

  async getSchedule(id: string): Promise<ScheduleRecord | null> {
    const row = await this.#one('get-schedule', { id });
    return row === undefined ? null : toSchedule(row);
  }

  async listSchedules(
    tenantId: string,
    limit: number,
    afterId?: string,
  ): Promise<ScheduleRecord[]> {
    return (
      await this.#all('list-schedules', { tenant_id: tenantId, after_id: afterId ?? null, limit })
    ).map(toSchedule);
  }

  updateSchedule(id: string, patch: SchedulePatch, now: number): Promise<ScheduleRecord> {
    return this.#port.transact(id, () => procedures.updateSchedule(id, patch, now));
  }

  deleteSchedule(id: string, now: number): Promise<void> {
    return this.#port.transact(id, () => procedures.deleteSchedule(id, now));
  }

  requestFires(
    scheduleId: string,
    fires: Array<{ logicalTime: number; kind: FireKind }>,
    now: number,
  ): Promise<number[]> {
    return this.#port.transact(scheduleId, (tx) =>
      procedures.requestFires(tx, scheduleId, fires, now),
    );
  }

  async listFires(scheduleId: string, filter: FireFilter): Promise<FireRecord[]> {
    const status: FireStatus | null = filter.status ?? null;
    return (
      await this.#all('list-fires', {
        schedule_id: scheduleId,
        status,
        before: filter.before ?? null,
        limit: filter.limit,
      })
    ).map(toFire);
  }

  async listScheduleEvents(
    scheduleId: string,
    afterSeq: number,
    limit: number,
  ): Promise<ScheduleEventRecord[]> {
    return (
      await this.#all('list-schedule-events', {
        schedule_id: scheduleId,
        after_seq: afterSeq,
        limit,
      })
    ).map(toScheduleEvent);
  }

  async getFire(scheduleId: string, logicalTime: number): Promise<FireRecord | null> {
    const row = await this.#one('get-fire', { schedule_id: scheduleId, logical_time: logicalTime });
    return row === undefined ? null : toFire(row);
  }

  async listOpenFires(scheduleId: string): Promise<OpenFire[]> {
    return (await this.#all('list-open-fires', { schedule_id: scheduleId })).map(toOpenFire);
  }

  async claimSchedules(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<ScheduleClaim[]> {
    // A cheap read first: most ticks find nothing due and need no write transaction.
    if ((await this.#one('any-schedule-due', { now })) === undefined) return [];
    return this.#port.transact('schedules:claim', () =>
      procedures.claimSchedules(owner, now, leaseMs, limit),
    );
  }

  commitSchedule(c: ScheduleCommit, now: number): Promise<void> {
    return this.#port.transact(c.scheduleId, (tx) => procedures.commitSchedule(tx, c, now));
  }

  releaseClaim(scheduleId: string, owner: string, token: number): Promise<void> {
    return this.#port.transact(scheduleId, () => procedures.releaseClaim(scheduleId, owner, token));
  }

  expireForeignClaims(owner: string): Promise<number> {
    return this.#port.transact('schedules:expire', () => procedures.expireForeignClaims(owner));
  }

  setWebhookAllowlist(tenantId: string, origins: string[]): Promise<void> {
    return this.#port.transact(`allowlist:${tenantId}`, () =>
      procedures.setWebhookAllowlist(tenantId, origins),
    );
  }

  async getWebhookAllowlist(tenantId: string): Promise<string[]> {
    return (await this.#all('get-allowlist', { tenant_id: tenantId })).map(
      (r) => r.origin as string,
    );
  }

  async claimNotifications(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<NotificationRecord[]> {
    if ((await this.#one('any-notification-due', { now })) === undefined) return [];
    return this.#port.transact('notifications:claim', () =>
      procedures.claimNotifications(owner, now, leaseMs, limit),
    );
  }

  finishNotification(
    id: string,
    token: number,
    outcome: { delivered: true } | { delivered: false; error: string; retryAt: number | null },
    now: number,
  ): Promise<void> {
    return this.#port.transact(id, () => procedures.finishNotification(id, token, outcome, now));
  }

  async listNotifications(scheduleId: string): Promise<NotificationRecord[]> {
    return (await this.#all('list-notifications', { schedule_id: scheduleId })).map(toNotification);
  }
}

/**
 * A run store that keeps the schedule area in its own database and transactions (both backends do).
 */
export interface HoldsScheduleArea {
  readonly schedules: ScheduleStore;
}

/**
 * The schedule area of a run store opened directly (tests, benches); a process gets it from its
 * StoreBackend.
 */
export function scheduleAreaOf(runs: object): ScheduleStore {
  const area = (runs as Partial<HoldsScheduleArea>).schedules;
  if (area === undefined) throw new TypeError('this run store keeps no schedule area');
  return area;
}
