// The API's wire schemas (zod): request validation and the OpenAPI document are both generated from
// these.
import { z } from 'zod';
import { CANCEL_GRACE_MS_MAX } from '../config/defaults.ts';
import { TENANT_WEIGHT_MAX } from '../domain/fair-share.ts';
import { WHEN_LATE } from '../domain/admission.ts';
import { CURSOR_DESCRIPTION } from './cursor.ts';
import { WAITING_REASONS } from '../domain/waiting-reasons.ts';
import { STALL_POLICIES } from '../domain/records.ts';
import {
  EGRESS_SCOPE_DESTINATIONS_MAX,
  EgressDestinationSchema,
  EgressScopeSchema,
} from '../domain/egress-scope.ts';
import {
  isChannelName,
  MESSAGE_CHANNEL_FORBIDDEN,
  MESSAGE_CHANNEL_MAX_CHARS,
  MESSAGE_ID_MAX_CHARS,
  MESSAGE_KEY_PREFIX,
  MESSAGE_TTL_MAX_MS,
  isMessageKey,
} from '../domain/messages.ts';

/**
 * Deepest nesting accepted in user JSON: journals and events are serialized recursively, so depth
 * is bounded.
 */
export const JSON_MAX_DEPTH = 64;

/**
 * Iterative depth check (a recursive one would itself overflow on the input it is meant to refuse).
 */
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

/**
 * What an identifier, key or name sent to the API may not hold; stated in the document on every
 * such field.
 */
export const PLAIN_TEXT_RULE =
  'no control characters (U+0000–U+001F, U+007F) and no unpaired UTF-16 surrogates';

/**
 * Strings the stores keep as text columns or compare with them (ids, keys, names, filters).
 * Postgres refuses U+0000 in text (a 500 before this check) and an unpaired surrogate would be
 * stored as U+FFFD, silently another string (two idempotency keys colliding); control characters
 * have no place in any of them.
 */
export function isPlainText(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this check's whole job.
  return value.isWellFormed() && !/[\u0000-\u001f\u007f]/.test(value);
}

/** A non-empty plain-text string of at most `maxLength` characters. */
export function plainText(maxLength: number) {
  return z
    .string()
    .min(1)
    .max(maxLength)
    .refine(isPlainText, { message: `must have ${PLAIN_TEXT_RULE}` });
}

// Request bodies are parsed from JSON, so any value in them is JSON already; a recursive `z.json()`
// would only add a schema the OpenAPI document cannot reference. InputBody's `value` must be
// present, hence the refine.
export const JsonValue = z
  .unknown()
  .refine(withinDepth, { message: `nested deeper than ${JSON_MAX_DEPTH} levels` })
  .describe('Any JSON value');

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: 'Error' });

/**
 * An error response with its own description (the rules behind it), still referencing the one Error
 * schema.
 */
export function errorResponse(description: string) {
  return { description, content: { 'application/json': { schema: ErrorBody } } };
}

export const Budget = z.strictObject({
  maxSteps: z.number().int().positive().max(1_000_000).optional(),
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  deadlineMs: z
    .number()
    .int()
    .positive()
    .max(365 * 24 * 3600 * 1000)
    .optional(),
  maxRetries: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .describe('Retries of failed tool calls and steps the run may spend (default 100)'),
});

export const Priority = z.enum(['interactive', 'batch']);

export const CreateRunBody = z.strictObject({
  agent: plainText(200).describe(
    `Agent name, or name@version to pin a version explicitly; ${PLAIN_TEXT_RULE}`,
  ),
  input: JsonValue.optional().describe('The agent input (any JSON)'),
  idempotencyKey: plainText(200)
    .optional()
    .describe(
      `Submitting again with the same key returns the first run (409 idempotency_conflict if the body differs); ${PLAIN_TEXT_RULE}`,
    ),
  priority: Priority.optional(),
  budget: Budget.optional(),
  metadata: z.record(z.string(), JsonValue).optional(),
  egressAllow: z
    .array(EgressDestinationSchema)
    .max(EGRESS_SCOPE_DESTINATIONS_MAX)
    .optional()
    .describe(
      `Destinations ({host, port}; host a name, *.suffix or an IP) this run's sandboxes may reach: narrows the sandbox profile's network.allow and the tenant's egressAllow, never widens them ([]: no network). Stored with the run; its child runs and copies keep it. At most ${EGRESS_SCOPE_DESTINATIONS_MAX}.`,
    ),
  onParentEnd: z
    .enum(['cancel', 'detach', 'wait'])
    .optional()
    .describe(
      "Only with a delegated token (the new run is a child of the token's run): cancel (default) cancels this run when its parent ends, in the parent's end commit, as for a ctx.child child; detach lets it run on. wait is refused (400 on_parent_end_refused): only the parent's own code could wait for a child, and a tool's child is unknown to it",
    ),
  whenLate: z
    .enum(WHEN_LATE)
    .optional()
    .describe(
      'With budget.deadlineMs, what to do when the run is expected to finish after its deadline: accept (default; expectedFinishAt shows the estimate), refuse (429 deadline_unmeetable, no run is created) or batch (admitted with priority batch)',
    ),
});

export const RunStatusEnum = z.enum([
  'queued',
  'running',
  'waiting',
  'cancelling',
  'succeeded',
  'failed',
  'cancelled',
]);

/** A pending request for a human decision on one tool call (GET /v1/runs/:id, GET /v1/approvals). */
export const PendingApproval = z
  .object({
    runId: z.string(),
    executionId: z
      .string()
      .describe('The call’s stable execution id: the decision applies to it alone'),
    seq: z.number().int(),
    agent: z.string(),
    tool: z.string(),
    args: z.unknown().describe('The call’s arguments (under the tenant’s redaction policy)'),
    argsHash: z.string().describe('sha256 of the canonical arguments the decision is bound to'),
    risk: z.enum(['low', 'medium', 'high', 'critical']),
    rule: z.string().describe('The policy rule that asked for approval'),
    reason: z.string(),
    status: z.enum(['pending', 'approved', 'denied', 'expired']),
    requestedAt: z.string(),
    expiresAt: z.string(),
    decidedBy: z.string().nullable().describe('The deciding key’s id (or platform-admin)'),
    decidedAt: z.string().nullable(),
    note: z.string().nullable(),
  })
  .meta({ id: 'Approval' });

export const Run = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    agent: z.string(),
    agentVersion: z.string(),
    status: RunStatusEnum,
    stateVersion: z.number().int(),
    priority: Priority,
    input: z.unknown(),
    result: z.unknown().optional(),
    error: z
      .object({ code: z.string(), message: z.string(), details: z.unknown().optional() })
      .nullable(),
    outcome: z.enum(['no_side_effects', 'after_partial_work', 'outcome_unknown']).nullable(),
    compensation: z
      .object({
        compensated: z.array(z.object({ executionId: z.string(), tool: z.string() })),
        failed: z.array(
          z.object({
            executionId: z.string(),
            tool: z.string(),
            error: z.object({
              code: z.string(),
              message: z.string(),
              details: z.unknown().optional(),
            }),
          }),
        ),
        unknown: z.array(z.object({ executionId: z.string(), tool: z.string() })),
      })
      .nullable()
      .describe(
        'What a failed or cancelled run undid (completed executions of tools with a compensate hook), and what it could not',
      ),
    waitingReason: z
      .string()
      .nullable()
      .describe(
        `Why a queued or waiting run is not progressing (null otherwise): ${Object.entries(
          WAITING_REASONS,
        )
          .map(([code, meaning]) => `${code} (${meaning})`)
          .join('; ')}`,
      ),
    waitingSince: z
      .string()
      .nullable()
      .describe(
        'Since when the run waits for waitingReason (ISO time); null when it is not waiting',
      ),
    wakeAt: z.string().nullable(),
    progress: z
      .object({ state: z.unknown(), at: z.string() })
      .nullable()
      .describe(
        "The agent's last ctx.progress(state), with when it reported it (ISO time); null when it never did",
      ),
    stalled: z
      .object({
        since: z.string(),
        effect: z
          .object({ seq: z.number(), kind: z.string(), name: z.string(), attempt: z.number() })
          .nullable(),
        policy: z.enum(STALL_POLICIES),
      })
      .nullable()
      .describe(
        "Set while a running run has not moved (no ctx.progress, no effect started or ended) for its agent's stallAfterMs: since when (ISO time), the tool call in flight (null when none), and the agent's onStall policy. Cleared when it moves again or ends",
      ),
    budget: Budget,
    counters: z.object({
      steps: z.number(),
      inputTokens: z.number(),
      outputTokens: z.number(),
      costUsd: z.number(),
    }),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    egressAllow: z
      .array(z.object({ host: z.string(), port: z.number().int() }))
      .nullable()
      .describe(
        "The run's egress list (given at creation): narrows its sandboxes' network; null: none",
      ),
    parentRunId: z.string().nullable(),
    idempotencyKey: z.string().nullable(),
    attempts: z
      .number()
      .int()
      .describe(
        'Attempts: claims that took the run’s lease (a recovery after a crash is one more; effect retries are not). GET /v1/runs/:id/attempts lists them',
      ),
    leaseLosses: z
      .number()
      .int()
      .describe(
        'Leases lost in a row without progress (the poison counter; quarantined at KEEL_POISON_LEASE_LOSSES): reset by each commit, so 0 on a run that recovered and went on',
      ),
    leaseExpiries: z
      .number()
      .int()
      .describe(
        'Every lease of the run that expired unreleased (its worker died or stalled; each one a recovery), never reset: unlike leaseLosses',
      ),
    preemptions: z
      .number()
      .int()
      .describe(
        'Times the run was preempted: a batch run sent back to the queue at an effect boundary, journal kept, for interactive runs waiting longer than KEEL_PREEMPT_AFTER_MS',
      ),
    preemptedAt: z
      .string()
      .nullable()
      .describe(
        'When it was last preempted (a queued preempted run also shows waitingReason `preempted`)',
      ),
    createdAt: z.string(),
    updatedAt: z.string(),
    endedAt: z.string().nullable(),
    deadlineAt: z.string().nullable(),
    expectedFinishAt: z
      .string()
      .nullable()
      .describe(
        'For a run submitted with a deadline: when it was expected to finish at admission (ISO time), from its agent’s measured completion rate and the runs due before it; null when there was nothing to measure',
      ),
    rerunOf: z
      .string()
      .nullable()
      .describe('The run this one reruns (POST /v1/runs/:id/rerun, or a fork without a position)'),
    resetFrom: z
      .object({ runId: z.string(), position: z.number().int() })
      .nullable()
      .describe(
        'The run whose journal this one reused through `position` (POST /v1/runs/:id/reset, or a fork from a position): those effects were replayed, not executed again',
      ),
    pendingApprovals: z
      .array(PendingApproval)
      .optional()
      .describe(
        'GET /v1/runs/:id only: the tool calls the run waits on a human decision for (POST /v1/runs/:id/approvals/:executionId)',
      ),
    archived: z
      .literal(true)
      .optional()
      .describe(
        'Present when retention archived the run: its journal and events are read back from the archive (KEEL_RETENTION_DAYS, KEEL_RETENTION_RUNS)',
      ),
    archiveComplete: z
      .boolean()
      .optional()
      .describe(
        'With `archived`: false when a chunk of the archive is missing (a gap the archiver re-sends); the positions past the gap are still read live',
      ),
  })
  .meta({ id: 'Run' });

export const RunList = z.object({ runs: z.array(Run), nextCursor: z.string().nullable() });

export const ListRunsQuery = z.strictObject({
  status: RunStatusEnum.optional(),
  agent: plainText(200).optional().describe(`Only runs of this agent; ${PLAIN_TEXT_RULE}`),
  code: z
    .string()
    .regex(/^[a-z][a-z0-9_]*$/)
    .max(100)
    .optional()
    .describe('Only runs whose error has this code, e.g. poison_run'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional().describe(CURSOR_DESCRIPTION),
  rerunOf: plainText(200).optional().describe(`Only the reruns of this run; ${PLAIN_TEXT_RULE}`),
});

/** What GET /v1/runs/:id/tree answers when no limit is given. */
export const RUN_TREE_LIMIT_DEFAULT = 200;

export const RunTreeQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(RUN_TREE_LIMIT_DEFAULT)
    .describe('At most this many runs, the root first, then breadth first (depth, then id)'),
});

export const RunTreeNode = z.object({
  id: z.string(),
  agent: z.string(),
  agentVersion: z.string(),
  status: RunStatusEnum,
  waitingReason: z.string().nullable(),
  parentRunId: z.string().nullable(),
  depth: z.number().int().describe('0 for the run asked for, 1 for its children, and so on'),
  onParentEnd: z
    .enum(['cancel', 'detach', 'wait'])
    .nullable()
    .describe(
      "What the run does when its parent ends (ctx.child's onParentEnd); null for the run asked for when it has no parent in the tree",
    ),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
});

export const RunTree = z.object({
  rootId: z.string(),
  runs: z.array(RunTreeNode),
  truncated: z.boolean().describe('More descendants exist than the limit let through'),
});

/** A path id: any plain text (an unknown id is a 404 of its kind; control characters are a 400). */
export const PathId = plainText(200).describe(`An id; ${PLAIN_TEXT_RULE}`);
export const RunIdParams = z.object({ id: PathId });

export const CancelBody = z.strictObject({
  graceMs: z
    .number()
    .int()
    .min(0)
    .max(CANCEL_GRACE_MS_MAX)
    .optional()
    .describe(
      'How long (ms) tool calls in flight get after the graceful signal (a sandboxed program: SIGTERM) before they are aborted; replaces the agent’s `cancelGraceMs` and the node’s KEEL_CANCEL_GRACE_MS for this cancel. 0: at once. A run already cancelling keeps the grace it was given',
    ),
});

export const InputBody = z
  .strictObject({
    key: plainText(256)
      .refine((key) => !isMessageKey(key), {
        message: `keys starting with ${MESSAGE_KEY_PREFIX} are reserved for messages`,
      })
      .describe(`The key the run waits for; ${PLAIN_TEXT_RULE}`),
    value: JsonValue,
  })
  .refine((b) => b.value !== undefined, { message: 'value is required', path: ['value'] });

export const MessageBody = z
  .strictObject({
    channel: plainText(MESSAGE_CHANNEL_MAX_CHARS)
      .refine(isChannelName, { message: `a channel may not contain ${MESSAGE_CHANNEL_FORBIDDEN}` })
      .describe(
        `The channel the run receives on (ctx.receive(channel)), without ${MESSAGE_CHANNEL_FORBIDDEN}; ${PLAIN_TEXT_RULE}`,
      ),
    id: plainText(MESSAGE_ID_MAX_CHARS).describe(
      'The message id: a second post with the same id delivers nothing (duplicate: true)',
    ),
    payload: JsonValue,
    correlationId: plainText(MESSAGE_ID_MAX_CHARS).optional(),
    ttlMs: z
      .number()
      .int()
      .min(1)
      .max(MESSAGE_TTL_MAX_MS)
      .optional()
      .describe('The message expires if no receive has taken it within this many ms'),
  })
  .refine((b) => b.payload !== undefined, { message: 'payload is required', path: ['payload'] })
  .meta({ id: 'MessageBody' });

export const MessageDelivery = z
  .object({
    id: z.string(),
    channel: z.string(),
    index: z.number().int().describe('Its place on the channel: receives take messages in order'),
    duplicate: z.boolean().describe('The id had been delivered before: nothing was delivered now'),
  })
  .meta({ id: 'MessageDelivery' });

export const EventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).optional(),
  format: z.enum(['sse', 'json']).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).optional(),
});

export const RunEvent = z
  .object({ seq: z.number().int(), type: z.string(), at: z.string(), data: z.unknown() })
  .meta({ id: 'RunEvent' });

/** A step's input and output (issue 17): what it received and returned, redacted, cut when large. */
const StepIoFields = {
  input: z
    .unknown()
    .optional()
    .describe(
      'What the step received (absent when it has none or with ?io=false): tool arguments; a model call’s { model, messages, tools?, maxOutputTokens?, temperature? }; a sleep’s { ms }; a child’s { childRunId }. In a list, a preview when inputTruncated',
    ),
  output: z
    .unknown()
    .optional()
    .describe(
      'What the step returned (absent until it succeeds): the step’s or tool’s result (exec: { exitCode, signal, limit, stdout, stderr, truncated, usage, workspace }); a model call’s { content, toolCalls?, usage, model }; the value a waitForInput received. In a list, a preview when outputTruncated',
    ),
  inputTruncated: z
    .boolean()
    .optional()
    .describe(
      'The list shows a preview of the input (its JSON is over STEP_IO_PREVIEW_MAX_BYTES): GET /v1/runs/:id/steps/:seq has the whole (absent with ?io=false)',
    ),
  outputTruncated: z
    .boolean()
    .optional()
    .describe('As inputTruncated, for the output (absent with ?io=false)'),
};

export const StepsQuery = z.strictObject({
  io: z
    .enum(['true', 'false'])
    .default('true')
    .describe('false: leave inputs and outputs out (a lighter timeline)'),
});
export const StepParams = z.object({
  id: PathId,
  seq: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe('The step’s position'),
});

export const Step = z
  .object({
    seq: z.number().int(),
    kind: z.string(),
    name: z.string(),
    status: z.string(),
    attempts: z.number().int(),
    executionId: z.string().nullable(),
    effectClass: z.string().nullable(),
    fencingToken: z
      .number()
      .int()
      .describe('Fencing token of the lease under which this state was written'),
    worker: z.string().nullable().describe('The worker (lease owner) that wrote this state'),
    queuedAt: z.string().nullable(),
    startedAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    deadlineAt: z.string().nullable(),
    error: z.unknown().optional(),
    ...StepIoFields,
  })
  .meta({ id: 'Step' });

/**
 * Pools a tenant may cap, at most this many (pool names are the scheduler's: model:<name>,
 * sandbox:<profile>, inline, …).
 */
export const TENANT_POOL_CAPS_MAX = 100;
/**
 * The largest tokens-per-minute limit: Postgres keeps it in an INTEGER column, so a larger one was
 * a 500 there.
 */
export const TENANT_TPM_MAX = 2_147_483_647;
const POOL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9:._/@-]*$/;
/** poolCaps' key rules: OpenAPI 3.0 has no propertyNames, so the document states them in words. */
export const POOL_CAPS_RULES =
  `Keys are pool names (1–200 characters matching ${POOL_NAME_PATTERN.source}, e.g. model:gpt-4o, sandbox:default, inline), ` +
  `at most ${TENANT_POOL_CAPS_MAX} of them; values are integers 1–1,000,000. Anything else is 400 validation_failed.`;
/** Field names, tools, and paths per tool a redaction policy may list, at most this many each. */
export const REDACT_RULES_MAX = 100;
const REDACT_PATH = /^(input|output|args|result)(\.[^.]+)*$/;
export const REDACT_PATH_RULES =
  'A tool path starts with input or output (args and result are accepted as their journal names), then dot-separated keys or array indexes; * matches any one (input.headers.*); input alone redacts the whole input.';
const RedactPath = z
  .string()
  .max(500)
  .regex(REDACT_PATH, 'must start with input, output, args or result, then .key segments');
const TenantQuotaFields = {
  weight: z
    .number()
    .int()
    .min(1)
    .max(TENANT_WEIGHT_MAX)
    .describe('Share of claims while backlogged, relative to other tenants (default 1)'),
  maxConcurrentRuns: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullable()
    .describe('Runs held by workers at once; null: unlimited'),
  maxQueuedRuns: z
    .number()
    .int()
    .min(1)
    .max(100_000_000)
    .nullable()
    .describe(
      'Queued runs beyond which POST /v1/runs answers 429 tenant_queue_full; null: unlimited',
    ),
  rpm: z
    .number()
    .int()
    .min(1)
    .max(100_000_000)
    .nullable()
    .describe(
      "Model requests per minute for the tenant (all processes together on Postgres); null: the models file's tenantLimits, else unlimited",
    ),
  tpm: z
    .number()
    .int()
    .min(1)
    .max(TENANT_TPM_MAX)
    .nullable()
    .describe(
      "Model tokens per minute for the tenant (all processes together on Postgres); null: the models file's tenantLimits, else unlimited",
    ),
  dailyTokenBudget: z
    .number()
    .int()
    .min(0)
    .max(1_000_000_000_000_000)
    .nullable()
    .describe(
      'Model tokens (input + output) per UTC day; once spent, model calls wait (tenant_budget_exhausted) until midnight UTC or a raise; null: unlimited',
    ),
  dailyCostBudgetUsd: z
    .number()
    .min(0)
    .max(1_000_000_000)
    .nullable()
    .describe(
      'Model spend in USD per UTC day; once spent, model calls wait (tenant_budget_exhausted); null: unlimited',
    ),
  poolCaps: z
    .record(
      z.string().min(1).max(200).regex(POOL_NAME_PATTERN),
      z.number().int().min(1).max(1_000_000),
    )
    .refine((caps) => Object.keys(caps).length <= TENANT_POOL_CAPS_MAX, {
      message: `at most ${TENANT_POOL_CAPS_MAX} pools`,
    })
    .describe(
      `Pool name → max concurrent effects of the tenant in that pool (e.g. {"sandbox:default": 2}); a patch replaces the whole object. ${POOL_CAPS_RULES}`,
    ),
  redact: z
    .strictObject({
      fields: z
        .array(z.string().min(1).max(200))
        .max(REDACT_RULES_MAX)
        .default([])
        .describe(
          'Object keys (case-insensitive) whose values show as "[redacted]" anywhere in run inputs, results and step inputs/outputs',
        ),
      tools: z
        .record(z.string().min(1).max(200), z.array(RedactPath).max(REDACT_RULES_MAX))
        .refine((tools) => Object.keys(tools).length <= REDACT_RULES_MAX, {
          message: `at most ${REDACT_RULES_MAX} tools`,
        })
        .default({})
        .describe(
          'Tool name → paths in its steps to show as "[redacted]", e.g. {"send_email": ["input.body"]}',
        ),
    })
    .describe(
      `What the API and CLI show as "[redacted]" in the tenant’s runs (the journal keeps every value for replay); a patch replaces the whole policy. ${REDACT_PATH_RULES}`,
    ),
  egressAllow: EgressScopeSchema.describe(
    `Destinations ({host, port}; host a name, *.suffix or an IP) the tenant's sandboxes may reach: narrows every sandbox profile's network.allow (a connection must match both), never widens it; a run's own egressAllow narrows further. null: no narrowing (default); []: no network at all. A patch replaces the whole list. At most ${EGRESS_SCOPE_DESTINATIONS_MAX}.`,
  ),
};
const QUOTA_NAMES = Object.keys(TenantQuotaFields).join(', ');
/** Every quota, each optional: a create names the ones it sets, a PATCH the ones it changes. */
const TenantQuotaPatch = z.strictObject(TenantQuotaFields).partial();
export const CreateTenantBody = TenantQuotaPatch.extend({
  name: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
    .describe('Unique among tenants: a name in use is 409 tenant_name_taken'),
});
/** The rule of PATCH /v1/admin/tenants/:id that JSON Schema does not show. */
export const TENANT_PATCH_RULES = `Name at least one of ${QUOTA_NAMES}: an empty body is 400 validation_failed.`;
export const UpdateTenantBody = TenantQuotaPatch.refine((body) => Object.keys(body).length > 0, {
  message: `name at least one of ${QUOTA_NAMES}`,
}).describe(`The quotas to change; the others stay. ${TENANT_PATCH_RULES}`);
export const TenantParams = z.object({ id: PathId });
export const Tenant = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: z.string(),
    weight: z.number().int(),
    maxConcurrentRuns: z.number().int().nullable(),
    maxQueuedRuns: z.number().int().nullable(),
    rpm: z.number().int().nullable(),
    tpm: z.number().int().nullable(),
    dailyTokenBudget: z.number().int().nullable(),
    dailyCostBudgetUsd: z.number().nullable(),
    poolCaps: z.record(z.string(), z.number().int()),
    redact: z.object({
      fields: z.array(z.string()),
      tools: z.record(z.string(), z.array(z.string())),
    }),
    egressAllow: z.array(z.object({ host: z.string(), port: z.number().int() })).nullable(),
  })
  .meta({ id: 'Tenant' });

export const ResolveParams = z.object({
  id: PathId,
  executionId: plainText(300).describe(`An execution id; ${PLAIN_TEXT_RULE}`),
});
export const ResolveBody = z.strictObject({
  action: z.enum(['retry', 'succeeded', 'failed']),
  result: JsonValue.optional(),
  error: z.object({ message: z.string().max(10_000) }).optional(),
});

// Runs made from runs (routes/run-lineage.ts).
const RESET_POSITION_MAX = 1_000_000_000;
const CopyIdempotencyKey = plainText(200)
  .optional()
  .describe(
    `Asking again with the same key returns the first new run (409 idempotency_conflict if the body differs); ${PLAIN_TEXT_RULE}`,
  );
const ResetPosition = z
  .number()
  .int()
  .min(0)
  .max(RESET_POSITION_MAX)
  .describe(
    'The last journal position (`seq`) to reuse: effects through it are replayed from the source’s journal, later ones run anew',
  );
export const RerunBody = z.strictObject({ idempotencyKey: CopyIdempotencyKey });
export const ResetBody = z.strictObject({
  position: ResetPosition,
  idempotencyKey: CopyIdempotencyKey,
});
export const ForkBody = z.strictObject({
  position: ResetPosition.optional(),
  input: JsonValue.optional().describe('The new run’s input (default: the source’s)'),
  agentVersion: plainText(100)
    .optional()
    .describe(
      `Agent version for the new run (default: the source’s if served, else the newest); ${PLAIN_TEXT_RULE}`,
    ),
  idempotencyKey: CopyIdempotencyKey,
});
