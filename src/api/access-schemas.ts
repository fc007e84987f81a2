// Wire schemas of API keys and the audit log (zod; the OpenAPI document is generated from them).
import { z } from 'zod';
import { SCOPES } from '../domain/access.ts';
import { CURSOR_DESCRIPTION } from './cursor.ts';
import { PLAIN_TEXT_RULE, PathId, plainText } from './schemas.ts';

export const Scope = z.enum(SCOPES);

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(Scope),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    lastUsedAt: z
      .string()
      .nullable()
      .describe('Last request made with the key (written at most once a minute)'),
    revokedAt: z.string().nullable(),
    requestsPerMinute: z
      .number()
      .int()
      .nullable()
      .describe(
        'Requests a minute the key may make (all API processes together on Postgres; 429 key_rate_limited past it); null: the process default (KEEL_KEY_REQUESTS_PER_MINUTE)',
      ),
  })
  .meta({ id: 'ApiKey' });

export const CreateKeyBody = z.strictObject({
  name: plainText(100).describe(`What the key is for; ${PLAIN_TEXT_RULE}`),
  scopes: z
    .array(Scope)
    .min(1)
    .describe('What the key may do: submit, read, operate, admin (of the tenant)'),
  expiresAt: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('When the key stops working (ISO 8601, in the future); default never'),
  requestsPerMinute: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe(
      'Requests a minute the key may make through each API process; default: the process default (KEEL_KEY_REQUESTS_PER_MINUTE, unlimited when unset)',
    ),
});

export const CreatedKey = z.object({
  key: ApiKey,
  secret: z.string().describe('The key itself: shown this once, stored only as a hash'),
});

export const KeyIdParams = z.object({ id: PathId });
export const TenantKeyParams = z.object({ id: PathId, keyId: PathId });

export const AuditActor = z.object({
  type: z
    .enum(['key', 'admin', 'delegated', 'system'])
    .describe('delegated: a run’s delegated token (id: the run, name: the tool call)'),
  id: z.string().nullable(),
  name: z.string().nullable(),
});

export const AuditEntry = z
  .object({
    id: z.string(),
    at: z.string(),
    actor: AuditActor,
    action: z.string(),
    resource: z.string().nullable(),
    runId: z.string().nullable(),
    outcome: z.string().describe('ok, or the error code the request was refused with'),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEntry' });

export const AuditQuery = z.strictObject({
  action: plainText(100).optional().describe('Only entries of this action, e.g. run.cancel'),
  resource: plainText(300)
    .optional()
    .describe('Only entries about this resource, e.g. run:run_… or key:key_…'),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Only entries at or after this time (ISO 8601)'),
  until: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Only entries before this time (ISO 8601)'),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(512).optional().describe(CURSOR_DESCRIPTION),
  format: z
    .enum(['json', 'ndjson'])
    .default('json')
    .describe(
      'ndjson: every matching entry, one JSON object a line (application/x-ndjson), no pages',
    ),
});

export const AuditPage = z.object({
  entries: z.array(AuditEntry),
  nextCursor: z.string().nullable(),
});

export const PlatformAuditEntry = z
  .object({
    id: z.string(),
    at: z.string(),
    actor: AuditActor,
    action: z.string(),
    resource: z.string().nullable(),
    tenantId: z
      .string()
      .nullable()
      .describe('The tenant the action concerned; null: platform-wide'),
    outcome: z.string().describe('ok, or the error code the request was refused with'),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'PlatformAuditEntry' });

export const PlatformAuditQuery = AuditQuery.extend({
  tenantId: plainText(100).optional().describe('Only entries about this tenant'),
  actorId: plainText(100).optional().describe('Only entries of this named platform admin (adm_…)'),
});

export const PlatformAuditPage = z.object({
  entries: z.array(PlatformAuditEntry),
  nextCursor: z.string().nullable(),
});
