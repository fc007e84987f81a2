// The models file (JSON, named by KEEL_MODELS_FILE or `--models`): named models with provider,
// URLs, the *names* of API-key variables, prices, limits, replicas and fallbacks, plus gateway-wide
// retry-budget, breaker and per-tenant limits. Validated with zod; an unknown or misspelt field
// fails loudly with its path. It never holds a key itself.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { KeelError } from '../domain/keel-error.ts';
import type { ModelDefinition } from '../sdk/types.ts';
import type { ModelGatewayOptions } from './gateway.ts';
import { TIERING_HINTS, type TieringRule } from './tiering.ts';
import { MockSimulationSchema } from './providers/mock-latency.ts';

const positiveInt = z.number().int().positive();
const nonNegative = z.number().nonnegative();
const envName = z
  .string()
  .regex(
    /^[A-Z_][A-Z0-9_]{0,127}$/,
    'must be the NAME of an environment variable (keys are never written in the file)',
  );
const name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/);

const Limits = z.strictObject({
  rpm: positiveInt.optional(),
  tpm: positiveInt.optional(),
  maxConcurrency: positiveInt.optional(),
});

const Replica = z.strictObject({
  name,
  baseUrl: z.string().url(),
  apiKeyEnv: envName.optional(),
  maxConcurrency: positiveInt.optional(),
  estimates: z
    .strictObject({
      networkMs: nonNegative.optional(),
      prefillMsPerKTok: nonNegative.optional(),
      cachedPrefillMsPerKTok: nonNegative.optional(),
    })
    .optional(),
});

const Model = z.strictObject({
  name,
  provider: z.enum(['mock', 'openai', 'anthropic']),
  providerModel: z.string().min(1).optional(),
  version: z.string().min(1).max(64).optional(),
  baseUrl: z.string().url().optional(),
  apiKeyEnv: envName.optional(),
  replicas: z.array(Replica).min(1).optional(),
  fallbacks: z.array(name).optional(),
  price: z
    .strictObject({
      inputPerMTok: nonNegative,
      outputPerMTok: nonNegative,
      cachedInputPerMTok: nonNegative.optional(),
    })
    .optional(),
  maxConcurrency: positiveInt.optional(),
  maxAttempts: z.number().int().min(1).max(10).optional(),
  limits: Limits.optional(),
  account: name.optional(),
  timeouts: z
    .strictObject({ attemptMs: positiveInt.optional(), callMs: positiveInt.optional() })
    .optional(),
  maxOutputTokens: positiveInt.optional(),
  stream: z.boolean().optional(),
  options: MockSimulationSchema.extend({
    latencyMs: nonNegative.optional(),
    failureRate: z.number().min(0).max(1).optional(),
  })
    .strict()
    .optional(),
});

const Route = z.strictObject({ from: name, to: name });
/**
 * One tiering rule (tiering.ts): exactly one condition under `when`; `route` for the budget and
 * backlog conditions, `escalate` for a hint. Checked field by field, so an error names the field.
 */
const TieringRuleSchema = z
  .strictObject({
    when: z.strictObject({
      budgetRemainingBelow: z.number().gt(0).max(1).optional(),
      poolBacklogAbove: z
        .strictObject({
          pool: z
            .string()
            .regex(/^[a-z][a-z0-9-]*:[A-Za-z0-9._/-]+$/, 'must be a pool name like model:large'),
          queued: z.number().int().nonnegative(),
        })
        .optional(),
      hint: z.enum(TIERING_HINTS).optional(),
    }),
    route: Route.optional(),
    escalate: z.strictObject({ to: name }).optional(),
  })
  .superRefine((rule, ctx) => {
    const conditions = Object.keys(rule.when).filter(
      (key) => rule.when[key as keyof typeof rule.when] !== undefined,
    );
    if (conditions.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['when'],
        message: 'must hold exactly one of budgetRemainingBelow, poolBacklogAbove, hint',
      });
      return;
    }
    const wantsEscalate = rule.when.hint !== undefined;
    if (wantsEscalate && (rule.escalate === undefined || rule.route !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['escalate'],
        message: 'a hint rule escalates: give escalate: { to } and no route',
      });
    if (!wantsEscalate && (rule.route === undefined || rule.escalate !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['route'],
        message: 'a budget or backlog rule routes: give route: { from, to } and no escalate',
      });
  })
  .transform((rule) => rule as unknown as TieringRule);

export const ModelsFile = z.strictObject({
  models: z.array(Model),
  retryBudget: z
    .strictObject({
      ratio: nonNegative.optional(),
      minRetriesPerWindow: z.number().int().nonnegative().optional(),
      windowMs: positiveInt.optional(),
      perRun: z.number().int().nonnegative().optional(),
    })
    .optional(),
  breaker: z
    .strictObject({
      consecutiveFailures: positiveInt.optional(),
      failureRatio: z.number().gt(0).max(1).optional(),
      windowCalls: positiveInt.optional(),
      minCalls: positiveInt.optional(),
      openMs: positiveInt.optional(),
    })
    .optional(),
  tenantLimits: z
    .strictObject({ default: Limits.optional(), tenants: z.record(z.string(), Limits).optional() })
    .optional(),
  /** Limits shared by every model naming the account (a provider organisation's RPM/TPM). */
  accounts: z.record(name, Limits).optional(),
  /**
   * Ordered tiering rules (tiering.ts): route calls to cheaper models on a low budget or a long
   * backlog, escalate hinted calls; the first that applies decides.
   */
  tiering: z.array(TieringRuleSchema).max(100).optional(),
});
export type ModelsFile = z.infer<typeof ModelsFile>;

export interface LoadedModels {
  models: ModelDefinition[];
  options: Pick<
    ModelGatewayOptions,
    'retryBudget' | 'breaker' | 'tenantLimits' | 'accounts' | 'tiering'
  >;
}

/**
 * Parses a models file's content; throws `config_invalid` naming each bad field by its path.
 * @example
 * parseModelsFile({ models: [{ name: 'gpt', provider: 'openai', providerModel: 'gpt-4o-mini', apiKeyEnv: 'OPENAI_API_KEY' }] });
 */
export function parseModelsFile(raw: unknown, source = 'models file'): LoadedModels {
  const parsed = ModelsFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    throw new KeelError('config_invalid', `${source} is invalid:\n  ${problems.join('\n  ')}`);
  }
  const { models, ...options } = parsed.data;
  return {
    models: models.map(
      (model) => Object.freeze({ ...model, kind: 'keel.model' as const }) as ModelDefinition,
    ),
    options: stripUndefined(options),
  };
}

export function loadModelsFile(path: string): LoadedModels {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new KeelError(
      'config_invalid',
      `cannot read the models file ${path}: ${(error as Error).message}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new KeelError(
      'config_invalid',
      `the models file ${path} is not JSON: ${(error as Error).message}`,
    );
  }
  return parseModelsFile(raw, `the models file ${path}`);
}

function stripUndefined<T extends object>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
