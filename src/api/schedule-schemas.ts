// Wire schemas (zod) of /v1/schedules: request validation and the OpenAPI document come from these.
// A rule JSON Schema cannot express (exactly one of cron / intervalMs, endAt after startAt) is a
// refinement here and is stated in the schema's description, so the document and the validation
// cannot drift apart.
import { z } from 'zod';
import { CURSOR_DESCRIPTION } from './cursor.ts';
import { Budget, JsonValue, PLAIN_TEXT_RULE, PathId, Priority, plainText } from './schemas.ts';

const Instant = z.iso
  .datetime({ offset: true })
  .describe('An ISO 8601 instant with an offset, e.g. 2026-03-08T07:00:00Z');
const OverlapPolicy = z.enum(['allow', 'skip', 'buffer_one', 'buffer_all', 'cancel_other']);
export const FireStatusEnum = z.enum([
  'pending',
  'buffered',
  'cancelling_other',
  'started',
  'cancelled_other',
  'skipped',
  'missed',
]);

export const RunTemplateBody = z.strictObject({
  agent: plainText(200).describe(
    'Agent name (the newest version when a fire starts), or name@version',
  ),
  input: JsonValue.optional(),
  priority: Priority.optional(),
  budget: Budget.optional(),
  metadata: z.record(z.string(), JsonValue).optional(),
});

const timing = {
  cron: z
    .string()
    .min(1)
    .max(200)
    .nullable()
    .optional()
    .describe(
      '5 or 6 fields (croner syntax), read in timeZone; exactly one of cron and intervalMs (400 invalid_cron if it does not parse or never fires)',
    ),
  intervalMs: z
    .number()
    .int()
    .min(1_000)
    .max(366 * 24 * 3600_000)
    .nullable()
    .optional()
    .describe('A fixed interval instead of cron; exactly one of cron and intervalMs'),
  timeZone: z
    .string()
    .min(1)
    .max(64)
    .describe(
      'IANA time zone name, e.g. Europe/Berlin (required; never the server’s zone; 400 invalid_time_zone otherwise)',
    ),
  startAt: Instant.nullable()
    .optional()
    .describe('No fire before this instant (ISO 8601 with an offset)'),
  endAt: Instant.nullable()
    .optional()
    .describe('No fire after this instant; must be after startAt'),
};
const behaviour = {
  name: plainText(200).nullable().optional().describe(`A label; ${PLAIN_TEXT_RULE}`),
  catchupWindowMs: z
    .number()
    .int()
    .min(0)
    .max(366 * 24 * 3600_000)
    .optional()
    .describe('Missed fires younger than this still run; older ones are recorded as missed'),
  overlap: OverlapPolicy.optional().describe(
    'What a fire does while a previous run is still active (default skip)',
  ),
  webhookUrl: plainText(2000)
    .nullable()
    .optional()
    .describe(
      'Called once per failed run; an http(s) URL without credentials whose origin is on the tenant’s webhook allowlist (400 webhook_not_allowed otherwise)',
    ),
};

/**
 * The rules of a schedule body that JSON Schema does not carry; stated in the OpenAPI document with
 * the body.
 */
export const SCHEDULE_BODY_RULES =
  'Exactly one of cron and intervalMs; endAt after startAt when both are set. ' +
  'Breaking either is 400 validation_failed.';
const exactlyOneTiming = (b: {
  cron?: string | null | undefined;
  intervalMs?: number | null | undefined;
}) => (b.cron == null) !== (b.intervalMs == null);
const endAfterStart = (b: {
  startAt?: string | null | undefined;
  endAt?: string | null | undefined;
}) => b.startAt == null || b.endAt == null || Date.parse(b.endAt) > Date.parse(b.startAt);
const endAfterStartRule = { message: 'endAt must be after startAt', path: ['endAt'] };

export const CreateScheduleBody = z
  .strictObject({ ...timing, ...behaviour, template: RunTemplateBody })
  .refine(exactlyOneTiming, {
    message: 'a schedule needs exactly one of cron and intervalMs',
    path: ['cron'],
  })
  .refine(endAfterStart, endAfterStartRule)
  .describe(`A new schedule. ${SCHEDULE_BODY_RULES}`);

/**
 * The rules of an edit: checked against the schedule as edited (setting cron clears intervalMs and
 * vice versa).
 */
export const SCHEDULE_EDIT_RULES =
  'At least one field (an empty body is 400 validation_failed). Setting cron clears intervalMs and ' +
  'the reverse; the edited schedule must still have exactly one of them, and endAt after startAt (400 validation_failed).';
export const UpdateScheduleBody = z
  .strictObject({
    ...timing,
    timeZone: timing.timeZone.optional(),
    ...behaviour,
    template: RunTemplateBody.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'name at least one field to change' })
  .refine((b) => b.cron == null || b.intervalMs == null, {
    message: 'set cron or intervalMs, not both',
    path: ['cron'],
  })
  .refine(endAfterStart, endAfterStartRule)
  .describe(`An edit: only the fields given change. ${SCHEDULE_EDIT_RULES}`);

export const Schedule = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    version: z.number().int(),
    cron: z.string().nullable(),
    intervalMs: z.number().nullable(),
    timeZone: z.string(),
    startAt: z.string().nullable(),
    endAt: z.string().nullable(),
    paused: z.boolean(),
    template: z.object({
      agent: z.string(),
      input: z.unknown(),
      priority: Priority,
      budget: Budget,
      metadata: z.record(z.string(), z.unknown()).nullable(),
    }),
    catchupWindowMs: z.number(),
    overlap: OverlapPolicy,
    webhookUrl: z.string().nullable(),
    nextFireAt: z.string().nullable(),
    lastSuccessAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Schedule' });

export const Fire = z
  .object({
    scheduleId: z.string(),
    logicalTime: z.string(),
    kind: z.enum(['scheduled', 'trigger', 'backfill']),
    status: FireStatusEnum.describe(
      'pending, buffered, cancelling_other: waiting; started, cancelled_other: a run was created; skipped, missed: never ran',
    ),
    runId: z.string().nullable(),
    scheduleVersion: z.number().int(),
    firedBy: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()).nullable(),
    recordedAt: z.string(),
    startedAt: z.string().nullable(),
  })
  .meta({ id: 'ScheduleFire' });

export const ScheduleIdParams = z.object({ id: PathId });
const Cursor = z.string().max(512).optional().describe(CURSOR_DESCRIPTION);
export const ListSchedulesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: Cursor,
});
export const ListFiresQuery = z.strictObject({
  status: FireStatusEnum.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: Cursor,
});
export const ScheduleEvent = z
  .object({ seq: z.number().int(), type: z.string(), at: z.string(), data: z.unknown() })
  .meta({ id: 'ScheduleEvent' });
export const ScheduleEventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export const BACKFILL_RULES =
  '`to` must not be before `from`, nor in the future (400 validation_failed); a range holding more fires than one ' +
  'request may ask for is 400 backfill_too_large.';
export const BackfillBody = z
  .strictObject({ from: Instant, to: Instant })
  .refine((b) => Date.parse(b.to) >= Date.parse(b.from), {
    message: '`to` must not be before `from`',
    path: ['to'],
  })
  .describe(`A past range of logical times, both ends included. ${BACKFILL_RULES}`);
export const ALLOWLIST_RULES =
  'Each entry is an origin: http or https, a host and an optional port (scheme://host[:port]), without credentials, ' +
  'path, query or fragment; anything else is 400 validation_failed (or webhook_not_allowed for a non-http scheme or credentials). ' +
  'Entries are normalised to their origin, deduplicated and sorted; the list replaces the previous one.';
export const AllowlistBody = z
  .strictObject({
    origins: z
      .array(
        plainText(2000).describe(
          'An origin, e.g. https://hooks.example.com or http://10.0.0.5:8080',
        ),
      )
      .max(100),
  })
  .describe(`The tenant’s whole webhook allowlist. ${ALLOWLIST_RULES}`);
export const TenantIdParams = z.object({ tenantId: PathId });
