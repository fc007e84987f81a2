// The API's wire schemas (zod): request validation and the OpenAPI document are both generated from these.
import { z } from 'zod';
import { TENANT_WEIGHT_MAX } from '../domain/fair-share.ts';
import { WAITING_REASONS } from '../domain/waiting-reasons.ts';

/** Deepest nesting accepted in user JSON: journals and events are serialized recursively, so depth is bounded. */
export const JSON_MAX_DEPTH = 64;

/** Iterative depth check (a recursive one would itself overflow on the input it is meant to refuse). */
function withinDepth(value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > JSON_MAX_DEPTH) return false;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return true;
}

// Request bodies are parsed from JSON, so any value in them is JSON already; a recursive `z.json()` would only add a
// schema the OpenAPI document cannot reference. InputBody's `value` must be present, hence the refine.
export const JsonValue = z.unknown().refine(withinDepth, { message: `nested deeper than ${JSON_MAX_DEPTH} levels` }).describe('Any JSON value');

export const ErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
}).meta({ id: 'Error' });

export const Budget = z.strictObject({
  maxSteps: z.number().int().positive().max(1_000_000).optional(),
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  deadlineMs: z.number().int().positive().max(365 * 24 * 3600 * 1000).optional(),
  maxRetries: z.number().int().min(0).max(1_000_000).optional().describe('Retries of failed tool calls and steps the run may spend (default 100)'),
});

export const Priority = z.enum(['interactive', 'batch']);

export const CreateRunBody = z.strictObject({
  agent: z.string().min(1).max(200).describe('Agent name, or name@version to pin a version explicitly'),
  input: JsonValue.optional().describe('The agent input (any JSON)'),
  idempotencyKey: z.string().min(1).max(200).optional(),
  priority: Priority.optional(),
  budget: Budget.optional(),
  metadata: z.record(z.string(), JsonValue).optional(),
});

export const RunStatusEnum = z.enum(['queued', 'running', 'waiting', 'cancelling', 'succeeded', 'failed', 'cancelled']);

export const Run = z.object({
  id: z.string(),
  tenantId: z.string(),
  agent: z.string(),
  agentVersion: z.string(),
  status: RunStatusEnum,
  stateVersion: z.number().int(),
  priority: Priority,
  input: z.unknown(),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }).nullable(),
  outcome: z.enum(['no_side_effects', 'after_partial_work', 'outcome_unknown']).nullable(),
  compensation: z.object({
    compensated: z.array(z.object({ executionId: z.string(), tool: z.string() })),
    failed: z.array(z.object({ executionId: z.string(), tool: z.string(), error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) })),
    unknown: z.array(z.object({ executionId: z.string(), tool: z.string() })),
  }).nullable().describe('What a failed or cancelled run undid (completed executions of tools with a compensate hook), and what it could not'),
  waitingReason: z.string().nullable().describe(`Why a queued or waiting run is not progressing (null otherwise): ${
    Object.entries(WAITING_REASONS).map(([code, meaning]) => `${code} (${meaning})`).join('; ')}`),
  waitingSince: z.string().nullable().describe('Since when the run waits for waitingReason (ISO time); null when it is not waiting'),
  wakeAt: z.string().nullable(),
  budget: Budget,
  counters: z.object({ steps: z.number(), inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() }),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  parentRunId: z.string().nullable(),
  idempotencyKey: z.string().nullable(),
  attempts: z.number().int().describe('How many times a worker claimed the run'),
  leaseLosses: z.number().int().describe('Leases lost in a row without progress (the poison counter; quarantined at KEEL_POISON_LEASE_LOSSES)'),
  preemptions: z.number().int().describe('Times the run was preempted: a batch run sent back to the queue at an effect boundary, journal kept, for interactive runs waiting longer than KEEL_PREEMPT_AFTER_MS'),
  preemptedAt: z.string().nullable().describe('When it was last preempted (a queued preempted run also shows waitingReason `preempted`)'),
  createdAt: z.string(),
  updatedAt: z.string(),
  endedAt: z.string().nullable(),
  deadlineAt: z.string().nullable(),
}).meta({ id: 'Run' });

export const RunList = z.object({ runs: z.array(Run), nextCursor: z.string().nullable() });

export const ListRunsQuery = z.strictObject({
  status: RunStatusEnum.optional(),
  agent: z.string().min(1).max(200).optional(),
  code: z.string().regex(/^[a-z][a-z0-9_]*$/).max(100).optional().describe('Only runs whose error has this code, e.g. poison_run'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
});

export const RunIdParams = z.object({ id: z.string().min(1).max(200) });

export const InputBody = z.strictObject({ key: z.string().min(1).max(256), value: JsonValue }).refine((b) => b.value !== undefined, { message: 'value is required', path: ['value'] });

export const EventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).optional(),
  format: z.enum(['sse', 'json']).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
});

export const RunEvent = z.object({ seq: z.number().int(), type: z.string(), at: z.string(), data: z.unknown() }).meta({ id: 'RunEvent' });

export const Step = z.object({
  seq: z.number().int(),
  kind: z.string(),
  name: z.string(),
  status: z.string(),
  attempts: z.number().int(),
  executionId: z.string().nullable(),
  effectClass: z.string().nullable(),
  fencingToken: z.number().int().describe('Fencing token of the lease under which this state was written'),
  worker: z.string().nullable().describe('The worker (lease owner) that wrote this state'),
  queuedAt: z.string().nullable(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  deadlineAt: z.string().nullable(),
  error: z.unknown().optional(),
}).meta({ id: 'Step' });

// --- tenant quotas (issue 7) ---
/** Pools a tenant may cap, at most this many (pool names are the scheduler's: model:<name>, sandbox:<profile>, inline, …). */
export const TENANT_POOL_CAPS_MAX = 100;
const TenantQuotaFields = {
  weight: z.number().int().min(1).max(TENANT_WEIGHT_MAX).describe('Share of claims while backlogged, relative to other tenants (default 1)'),
  maxConcurrentRuns: z.number().int().min(1).max(1_000_000).nullable().describe('Runs held by workers at once; null: unlimited'),
  maxQueuedRuns: z.number().int().min(1).max(100_000_000).nullable().describe('Queued runs beyond which POST /v1/runs answers 429 tenant_queue_full; null: unlimited'),
  rpm: z.number().int().min(1).max(100_000_000).nullable().describe('Model requests per minute for the tenant (all processes together on Postgres); null: the models file\'s tenantLimits, else unlimited'),
  tpm: z.number().int().min(1).max(1_000_000_000_000).nullable().describe('Model tokens per minute for the tenant (all processes together on Postgres); null: the models file\'s tenantLimits, else unlimited'),
  dailyTokenBudget: z.number().int().min(0).max(1_000_000_000_000_000).nullable()
    .describe('Model tokens (input + output) per UTC day; once spent, model calls wait (tenant_budget_exhausted) until midnight UTC or a raise; null: unlimited'),
  dailyCostBudgetUsd: z.number().min(0).max(1_000_000_000).nullable()
    .describe('Model spend in USD per UTC day; once spent, model calls wait (tenant_budget_exhausted); null: unlimited'),
  poolCaps: z.record(z.string().min(1).max(200).regex(/^[A-Za-z0-9][A-Za-z0-9:._\/@-]*$/), z.number().int().min(1).max(1_000_000))
    .refine((caps) => Object.keys(caps).length <= TENANT_POOL_CAPS_MAX, { message: `at most ${TENANT_POOL_CAPS_MAX} pools` })
    .describe('Pool name → max concurrent effects of the tenant in that pool (e.g. {"sandbox:default": 2}); a patch replaces the whole object'),
};
const QUOTA_NAMES = Object.keys(TenantQuotaFields).join(', ');
/** Every quota, each optional: a create names the ones it sets, a PATCH the ones it changes. */
const TenantQuotaPatch = z.strictObject(TenantQuotaFields).partial();
export const CreateTenantBody = TenantQuotaPatch.extend({ name: z.string().min(1).max(100).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/) });
export const UpdateTenantBody = TenantQuotaPatch.refine((body) => Object.keys(body).length > 0, { message: `name at least one of ${QUOTA_NAMES}` });
export const TenantParams = z.object({ id: z.string().min(1).max(200) });
export const Tenant = z.object({
  id: z.string(), name: z.string(), createdAt: z.string(),
  weight: z.number().int(), maxConcurrentRuns: z.number().int().nullable(), maxQueuedRuns: z.number().int().nullable(),
  rpm: z.number().int().nullable(), tpm: z.number().int().nullable(),
  dailyTokenBudget: z.number().int().nullable(), dailyCostBudgetUsd: z.number().nullable(),
  poolCaps: z.record(z.string(), z.number().int()),
}).meta({ id: 'Tenant' });
// --- end tenant quotas ---

export const ResolveParams = z.object({ id: z.string().min(1).max(200), executionId: z.string().min(1).max(300) });
export const ResolveBody = z.strictObject({
  action: z.enum(['retry', 'succeeded', 'failed']),
  result: JsonValue.optional(),
  error: z.object({ message: z.string().max(10_000) }).optional(),
});
