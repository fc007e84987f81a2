// What the API (and so the CLI) can do with schedules: validate and write them, pause, resume,
// trigger, backfill, read their history. Every call is scoped to a tenant: another tenant's
// schedule answers `schedule_not_found`. It never decides a fire: trigger and backfill record
// requested fires that the scheduler decides under its claim.
import { v7 as uuidv7 } from 'uuid';
import { KeelError } from '../domain/keel-error.ts';
import type { AgentRegistry } from '../engine/registry.ts';
import { parseAgentInput } from '../engine/agent-contract.ts';
import type {
  FireFilter,
  FireRecord,
  NewSchedule,
  OverlapPolicy,
  RunTemplate,
  ScheduleEventRecord,
  SchedulePatch,
  ScheduleRecord,
  ScheduleStore,
} from '../store/schedule-store.ts';
import type { Clock } from '../domain/clock.ts';
import { FireTimes } from './fire-times.ts';
import { fireTimesOf } from './schedule-pass.ts';
import { allowlistOrigin, assertWebhookAllowed } from './webhook-allowlist.ts';

/** Most fires one backfill request may ask for. */
export const BACKFILL_FIRES_MAX = 1_000;
export const CATCHUP_WINDOW_MS_DEFAULT = 60 * 60_000;

export interface ScheduleInput {
  name?: string | null;
  cron?: string | null;
  intervalMs?: number | null;
  timeZone: string;
  startAt?: number | null;
  endAt?: number | null;
  template: RunTemplate;
  catchupWindowMs?: number;
  overlap?: OverlapPolicy;
  webhookUrl?: string | null;
}

export type ScheduleEdit = Partial<ScheduleInput>;

export interface BackfillResult {
  /** Fire times in the range. */
  fireTimes: number[];
  /** Those recorded as requested now (the others had fired already). */
  requested: number[];
}

export class ScheduleService {
  readonly #schedules: ScheduleStore;
  readonly #registry: AgentRegistry;
  readonly #clock: Clock;

  constructor(schedules: ScheduleStore, registry: AgentRegistry, clock: Clock) {
    this.#schedules = schedules;
    this.#registry = registry;
    this.#clock = clock;
  }

  get store(): ScheduleStore {
    return this.#schedules;
  }

  async create(tenantId: string, input: ScheduleInput): Promise<ScheduleRecord> {
    const now = this.#clock.now();
    const schedule: NewSchedule = {
      id: `sch_${uuidv7()}`,
      tenantId,
      name: input.name ?? null,
      cron: input.cron ?? null,
      intervalMs: input.intervalMs ?? null,
      timeZone: input.timeZone,
      startAt: input.startAt ?? null,
      endAt: input.endAt ?? null,
      paused: false,
      template: input.template,
      catchupWindowMs: input.catchupWindowMs ?? CATCHUP_WINDOW_MS_DEFAULT,
      overlap: input.overlap ?? 'skip',
      webhookUrl: input.webhookUrl ?? null,
      nextFireAt: null,
    };
    schedule.nextFireAt = this.#validate(schedule, now).next(now);
    await this.#checkWebhook(tenantId, schedule.webhookUrl);
    return this.#schedules.createSchedule(schedule, now);
  }

  async get(tenantId: string, id: string): Promise<ScheduleRecord> {
    const schedule = await this.#schedules.getSchedule(id);
    if (schedule === null || schedule.tenantId !== tenantId)
      throw new KeelError('schedule_not_found', `schedule ${id} not found`);
    return schedule;
  }

  list(tenantId: string, limit: number, afterId?: string): Promise<ScheduleRecord[]> {
    return this.#schedules.listSchedules(tenantId, limit, afterId);
  }

  /**
   * Edits a schedule (version + 1). A timing change moves the next fire to the first one after now.
   */
  async update(tenantId: string, id: string, edit: ScheduleEdit): Promise<ScheduleRecord> {
    const current = await this.get(tenantId, id);
    const now = this.#clock.now();
    const patch: SchedulePatch = stripUndefined(edit);
    // Setting one of cron / intervalMs replaces the other.
    if (edit.cron != null && edit.intervalMs === undefined) patch.intervalMs = null;
    if (edit.intervalMs != null && edit.cron === undefined) patch.cron = null;
    const merged: NewSchedule = { ...current, ...patch };
    const times = this.#validate(merged, current.createdAt);
    if (edit.webhookUrl !== undefined) await this.#checkWebhook(tenantId, merged.webhookUrl);
    const timing = (['cron', 'intervalMs', 'timeZone', 'startAt', 'endAt'] as const).some(
      (k) => k in patch && patch[k] !== current[k],
    );
    // A timing change starts from the next fire after now; fires between the old cursor and now are
    // not recorded.
    if (timing) patch.nextFireAt = times.next(now);
    return this.#schedules.updateSchedule(id, patch, now);
  }

  async remove(tenantId: string, id: string): Promise<void> {
    await this.get(tenantId, id);
    await this.#schedules.deleteSchedule(id, this.#clock.now());
  }

  /**
   * Pausing stops scheduled fires; on resume, those missed meanwhile are caught up within the
   * catch-up window.
   */
  async setPaused(tenantId: string, id: string, paused: boolean): Promise<ScheduleRecord> {
    const current = await this.get(tenantId, id);
    if (current.paused === paused) return current;
    return this.#schedules.updateSchedule(id, { paused }, this.#clock.now());
  }

  /** Requests one fire now (decided by the scheduler, under the schedule's overlap policy). */
  async trigger(tenantId: string, id: string): Promise<FireRecord> {
    await this.get(tenantId, id);
    const now = this.#clock.now();
    // Two triggers within the same millisecond get distinct logical times rather than one
    // swallowing the other.
    for (let t = now; t < now + 1_000; t++) {
      const [recorded] = await this.#schedules.requestFires(
        id,
        [{ logicalTime: t, kind: 'trigger' }],
        now,
      );
      if (recorded !== undefined) return (await this.#schedules.getFire(id, recorded))!;
    }
    throw new KeelError('store_busy', 'could not find a free logical time for the trigger; retry', {
      retryable: true,
      retryAfterMs: 100,
    });
  }

  /**
   * Requests the schedule's fires in [from, to] (oldest first); fires that already ran are left as
   * they are.
   */
  async backfill(tenantId: string, id: string, from: number, to: number): Promise<BackfillResult> {
    const schedule = await this.get(tenantId, id);
    const now = this.#clock.now();
    if (to < from) throw new KeelError('validation_failed', '`to` must not be before `from`');
    if (to > now)
      throw new KeelError(
        'validation_failed',
        'a backfill covers the past only: `to` must not be in the future',
      );
    const fireTimes = fireTimesOf(schedule).between(from - 1, to, BACKFILL_FIRES_MAX + 1);
    if (fireTimes.length > BACKFILL_FIRES_MAX)
      throw new KeelError(
        'backfill_too_large',
        `the range holds more than ${BACKFILL_FIRES_MAX} fires; split it`,
      );
    const requested = await this.#schedules.requestFires(
      id,
      fireTimes.map((t) => ({ logicalTime: t, kind: 'backfill' as const })),
      now,
    );
    return { fireTimes, requested };
  }

  async fires(tenantId: string, id: string, filter: FireFilter): Promise<FireRecord[]> {
    await this.get(tenantId, id);
    return this.#schedules.listFires(id, filter);
  }

  /**
   * What happened to the schedule's fires, in order (missed fires included), after event
   * `afterSeq`.
   */
  async events(
    tenantId: string,
    id: string,
    afterSeq: number,
    limit: number,
  ): Promise<ScheduleEventRecord[]> {
    await this.get(tenantId, id);
    return this.#schedules.listScheduleEvents(id, afterSeq, limit);
  }

  async setWebhookAllowlist(tenantId: string, entries: string[]): Promise<string[]> {
    const origins = [...new Set(entries.map(allowlistOrigin))].sort();
    await this.#schedules.setWebhookAllowlist(tenantId, origins);
    return origins;
  }

  getWebhookAllowlist(tenantId: string): Promise<string[]> {
    return this.#schedules.getWebhookAllowlist(tenantId);
  }

  #validate(s: NewSchedule, anchorAt: number): FireTimes {
    // agent_not_found and agent_input_invalid now rather than at every fire
    parseAgentInput(this.#registry.resolve(s.template.agent), s.template.input);
    return new FireTimes({
      cron: s.cron,
      intervalMs: s.intervalMs,
      timeZone: s.timeZone,
      startAt: s.startAt,
      endAt: s.endAt,
      anchorAt,
    });
  }

  async #checkWebhook(tenantId: string, url: string | null): Promise<void> {
    if (url !== null)
      assertWebhookAllowed(url, await this.#schedules.getWebhookAllowlist(tenantId));
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
