// Wire schemas (zod) of /v1/schedules: request validation and the OpenAPI document come from these.
import { z } from 'zod';
import { Budget, JsonValue, Priority } from './schemas.ts';

const Instant = z.iso.datetime({ offset: true }).describe('An ISO 8601 instant with an offset, e.g. 2026-03-08T07:00:00Z');
const OverlapPolicy = z.enum(['allow', 'skip', 'buffer_one', 'buffer_all', 'cancel_other']);
export const FireStatusEnum = z.enum(['pending', 'buffered', 'cancelling_other', 'started', 'cancelled_other', 'skipped', 'missed']);

export const RunTemplateBody = z.strictObject({
  agent: z.string().min(1).max(200).describe('Agent name (the newest version when a fire starts), or name@version'),
  input: JsonValue.optional(),
  priority: Priority.optional(),
  budget: Budget.optional(),
  metadata: z.record(z.string(), JsonValue).optional(),
});

const timing = {
  cron: z.string().min(1).max(200).nullable().optional().describe('5 or 6 fields (croner syntax), read in timeZone'),
  intervalMs: z.number().int().min(1_000).max(366 * 24 * 3600_000).nullable().optional().describe('A fixed interval instead of cron'),
  timeZone: z.string().min(1).max(64).describe('IANA time zone name, e.g. Europe/Berlin (required; never the server’s zone)'),
  startAt: Instant.nullable().optional(),
  endAt: Instant.nullable().optional(),
};
const behaviour = {
  name: z.string().min(1).max(200).nullable().optional(),
  catchupWindowMs: z.number().int().min(0).max(366 * 24 * 3600_000).optional().describe('Missed fires younger than this still run; older ones are recorded as missed'),
  overlap: OverlapPolicy.optional().describe('What a fire does while a previous run is still active (default skip)'),
  webhookUrl: z.string().max(2000).nullable().optional().describe('Called once per failed run; its origin must be on the tenant’s allowlist'),
};

export const CreateScheduleBody = z.strictObject({ ...timing, ...behaviour, template: RunTemplateBody });
export const UpdateScheduleBody = z.strictObject({ ...timing, timeZone: timing.timeZone.optional(), ...behaviour, template: RunTemplateBody.optional() });

export const Schedule = z.object({
  id: z.string(),
  name: z.string().nullable(),
  version: z.number().int(),
  cron: z.string().nullable(),
  intervalMs: z.number().nullable(),
  timeZone: z.string(),
  startAt: z.string().nullable(),
  endAt: z.string().nullable(),
  paused: z.boolean(),
  template: z.object({ agent: z.string(), input: z.unknown(), priority: Priority, budget: Budget, metadata: z.record(z.string(), z.unknown()).nullable() }),
  catchupWindowMs: z.number(),
  overlap: OverlapPolicy,
  webhookUrl: z.string().nullable(),
  nextFireAt: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
}).meta({ id: 'Schedule' });

export const Fire = z.object({
  scheduleId: z.string(),
  logicalTime: z.string(),
  kind: z.enum(['scheduled', 'trigger', 'backfill']),
  status: FireStatusEnum.describe('pending, buffered, cancelling_other: waiting; started, cancelled_other: a run was created; skipped, missed: never ran'),
  runId: z.string().nullable(),
  scheduleVersion: z.number().int(),
  firedBy: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
  recordedAt: z.string(),
  startedAt: z.string().nullable(),
}).meta({ id: 'ScheduleFire' });

export const ScheduleIdParams = z.object({ id: z.string().min(1).max(200) });
export const ListSchedulesQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(200).default(50), cursor: z.string().max(512).optional() });
export const ListFiresQuery = z.strictObject({
  status: FireStatusEnum.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(512).optional(),
});
export const ScheduleEvent = z.object({ seq: z.number().int(), type: z.string(), at: z.string(), data: z.unknown() }).meta({ id: 'ScheduleEvent' });
export const ScheduleEventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export const BackfillBody = z.strictObject({ from: Instant, to: Instant });
export const AllowlistBody = z.strictObject({ origins: z.array(z.string().min(1).max(2000)).max(100) });
export const TenantIdParams = z.object({ tenantId: z.string().min(1).max(200) });
