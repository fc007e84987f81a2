// The scenario file `keel plan` reads: its zod schema, and the one parse that turns outside input
// into a typed Scenario or a ScenarioError naming every bad field and why. Objects are strict (a
// misspelt field fails instead of being silently ignored), rates and durations are nonnegative,
// probabilities lie in [0, 1], and the failure shares of a recovery attempt sum to 1. Never
// computes anything from a scenario.
import { z } from 'zod';
import { KeelError } from '../domain/keel-error.ts';

/**
 * How far the failure shares of one recovery attempt may stray from 1 (rounding in hand-written
 * decimals).
 */
export const SHARE_SUM_TOLERANCE = 1e-6;
/**
 * Attempts in one recovery tree, and its depth: bounds the path table and keeps parsing off the
 * stack limit.
 */
export const RECOVERY_TREE_MAX_ATTEMPTS = 256;
export const RECOVERY_TREE_MAX_DEPTH = 32;
/** Items in any list (lead times, batch sizes, replicas). */
export const LIST_MAX_ITEMS = 1_000;
export const NAME_MAX_CHARS = 200;

const number = () =>
  z.number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a number') });
const nonnegative = () =>
  number().min(0, 'must be ≥ 0 (rates, durations, sizes and costs cannot be negative)');
const positive = () => number().gt(0, 'must be > 0 (a limit of zero admits nothing)');
const probability = () =>
  number()
    .min(0, 'is a probability: must be in [0, 1]')
    .max(1, 'is a probability: must be in [0, 1]');
const wholeNumber = (min: number) =>
  number().int('must be a whole number').min(min, `must be ≥ ${min}`);
const name = () =>
  z
    .string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
    .min(1, 'must not be empty')
    .max(NAME_MAX_CHARS);
const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .min(1, 'must list at least one item')
    .max(LIST_MAX_ITEMS, `must list at most ${LIST_MAX_ITEMS} items`);

export const ENV_POLICIES = ['resident', 'rebuild', 'pause'] as const;
export type EnvPolicy = (typeof ENV_POLICIES)[number];

const EnvSchema = z.strictObject({
  memoryGiB: nonnegative(),
  policy: z.enum(ENV_POLICIES, {
    error: `must be one of ${ENV_POLICIES.map((p) => `'${p}'`).join(', ')}`,
  }),
  prepSeconds: nonnegative(),
  prepCpuSeconds: nonnegative(),
  pauseSecondsPerGiB: nonnegative(),
  resumeSecondsPerGiB: nonnegative(),
});

const WorkloadSchema = z.strictObject({
  arrivalPerSec: nonnegative(),
  roundsPerTask: nonnegative(),
  modelSecondsPerRound: nonnegative(),
  toolSecondsPerRound: nonnegative(),
  env: EnvSchema,
});

const CapacitySchema = z.strictObject({
  cpuCores: positive(),
  memoryGiB: positive(),
  modelSlots: positive(),
});

const PauseSchema = z.strictObject({
  memoryGiB: nonnegative(),
  idleSeconds: nonnegative(),
  pauseSecondsPerGiB: nonnegative(),
  resumeSecondsPerGiB: nonnegative(),
  pricePerGiBSecond: nonnegative(),
  transitionCost: nonnegative(),
});

const PrewarmSchema = z.strictObject({
  prepSeconds: nonnegative(),
  leadSeconds: list(nonnegative()),
  hitRate: probability(),
  memoryGiB: nonnegative(),
});

const CommitsSchema = z.strictObject({
  requests: wholeNumber(0),
  workMs: nonnegative(),
  commitFixedMs: nonnegative(),
  perRecordMs: nonnegative(),
  batchSizes: list(wholeNumber(1)),
});

/** One attempt of a recovery tree; a failure share without `next` gives up. */
export interface Attempt {
  name: string;
  cost: number;
  seconds: number;
  successProbability: number;
  onFailure?: FailureBranch[] | undefined;
}
export interface FailureBranch {
  share: number;
  next?: Attempt | undefined;
}

const FailureBranchSchema: z.ZodType<FailureBranch> = z.strictObject({
  share: probability(),
  get next() {
    return AttemptSchema.optional();
  },
});

const AttemptSchema: z.ZodType<Attempt> = z
  .strictObject({
    name: name(),
    cost: nonnegative(),
    seconds: nonnegative(),
    successProbability: probability(),
    onFailure: z.array(FailureBranchSchema).max(LIST_MAX_ITEMS).optional(),
  })
  .superRefine((attempt, ctx) => {
    const branches = attempt.onFailure ?? [];
    if (branches.length === 0) return; // no branches: every failure gives up
    const total = branches.reduce((s, b) => s + b.share, 0);
    if (Math.abs(total - 1) > SHARE_SUM_TOLERANCE) {
      ctx.addIssue({
        code: 'custom',
        path: ['onFailure'],
        message: `shares sum to ${total}; they must sum to 1 (±${SHARE_SUM_TOLERANCE.toExponential()}); a share that gives up has no "next"`,
      });
    }
  });

const RecoveryTreeSchema = z.strictObject({ deadlineSeconds: nonnegative(), root: AttemptSchema });

const RestartSchema = z.strictObject({
  arrivalPerSec: nonnegative(),
  serviceRatePerSec: nonnegative(),
  startupSeconds: nonnegative(),
});

const ReplicaSchema = z.strictObject({
  name: name(),
  queueMs: nonnegative(),
  cacheHit: probability(),
  prefillHitMs: nonnegative(),
  prefillMissMs: nonnegative(),
});

const RoutingSchema = z.strictObject({
  networkMs: nonnegative(),
  replicas: list(ReplicaSchema).superRefine((replicas, ctx) => {
    const seen = new Set<string>();
    replicas.forEach((r, i) => {
      if (seen.has(r.name))
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          message: `repeats the replica name '${r.name}'`,
        });
      seen.add(r.name);
    });
  }),
});

const BurstSchema = z.strictObject({
  calls: wholeNumber(0),
  secondsPerCall: nonnegative(),
  cores: wholeNumber(1),
});

const QuotaSchema = z.strictObject({
  activeRuns: wholeNumber(0),
  windowSeconds: positive(),
  callsPerRun: nonnegative(),
  secondsPerCall: nonnegative(),
  tokensPerCall: nonnegative(),
  rpmLimit: positive(),
  tpmLimit: positive(),
  concurrencyLimit: positive(),
});

/** The whole scenario: `workload` is required, every other section is optional and independent. */
export const ScenarioSchema = z.strictObject({
  description: z
    .string()
    .max(10 * NAME_MAX_CHARS)
    .optional(),
  workload: WorkloadSchema,
  capacity: CapacitySchema.optional(),
  pause: PauseSchema.optional(),
  prewarm: PrewarmSchema.optional(),
  commits: CommitsSchema.optional(),
  recoveryTree: RecoveryTreeSchema.optional(),
  restart: RestartSchema.optional(),
  routing: RoutingSchema.optional(),
  burst: BurstSchema.optional(),
  quota: QuotaSchema.optional(),
});

export type Scenario = z.infer<typeof ScenarioSchema>;
export type Workload = Scenario['workload'];
export type Capacity = z.infer<typeof CapacitySchema>;
export type PauseInput = z.infer<typeof PauseSchema>;
export type PrewarmInput = z.infer<typeof PrewarmSchema>;
export type CommitsInput = z.infer<typeof CommitsSchema>;
export type RecoveryTreeInput = z.infer<typeof RecoveryTreeSchema>;
export type RestartInput = z.infer<typeof RestartSchema>;
export type RoutingInput = z.infer<typeof RoutingSchema>;
export type Replica = z.infer<typeof ReplicaSchema>;
export type BurstInput = z.infer<typeof BurstSchema>;
export type QuotaInput = z.infer<typeof QuotaSchema>;

/**
 * One problem with a scenario: where (`workload.env.policy`, `routing.replicas[1].name`) and why.
 */
export interface ScenarioIssue {
  path: string;
  reason: string;
}

/** A scenario that does not match the schema; `issues` names each field and reason. */
export class ScenarioError extends KeelError {
  readonly issues: readonly ScenarioIssue[];

  constructor(issues: readonly ScenarioIssue[]) {
    super(
      'validation_failed',
      `invalid scenario:\n  ${issues.map((i) => `${i.path}: ${i.reason}`).join('\n  ')}`,
      { details: { issues } },
    );
    this.issues = issues;
  }
}

/**
 * Validates outside input as a scenario.
 * @throws ScenarioError naming every bad field, e.g. `workload.arrivalPerSec: must be ≥ 0 (…)`.
 * @example
 * const scenario = parseScenario(JSON.parse(await readFile('scenario.json', 'utf8')));
 */
export function parseScenario(input: unknown): Scenario {
  const tooDeep = recoveryTreeSizeIssue(input);
  if (tooDeep !== undefined) throw new ScenarioError([tooDeep]);
  const parsed = ScenarioSchema.safeParse(input, { error: defaultReason });
  if (parsed.success) return parsed.data;
  throw new ScenarioError(parsed.error.issues.flatMap(toScenarioIssues));
}

/** Reasons for the issues no field schema words itself (zod's defaults name types, not fixes). */
function defaultReason(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'is required';
  if (issue.expected === 'object') return 'must be an object';
  if (issue.expected === 'array') return 'must be a list';
  return undefined;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path)
    text += typeof key === 'number' ? `[${key}]` : `${text === '' ? '' : '.'}${String(key)}`;
  return text === '' ? '(scenario)' : text;
}

function toScenarioIssues(issue: z.core.$ZodIssue): ScenarioIssue[] {
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedFields(issue.path);
    const hint = allowed.length > 0 ? `; known fields here: ${allowed.join(', ')}` : '';
    return issue.keys.map((key) => ({
      path: formatPath([...issue.path, key]),
      reason: `unknown field${hint}`,
    }));
  }
  return [{ path: formatPath(issue.path), reason: issue.message }];
}

/** The field names the schema allows at `path`, for a fix-it hint after an unknown field. */
function allowedFields(path: readonly PropertyKey[]): string[] {
  let schema: z.ZodType = ScenarioSchema;
  for (const key of path) {
    schema = unwrap(schema);
    if (schema instanceof z.ZodObject && typeof key === 'string')
      schema = (schema.shape as Record<string, z.ZodType>)[key] ?? z.never();
    else if (schema instanceof z.ZodArray && typeof key === 'number')
      schema = schema.element as z.ZodType;
    else return [];
  }
  schema = unwrap(schema);
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional ? unwrap(schema.unwrap() as z.ZodType) : schema;
}

/**
 * Walks `recoveryTree.root` without recursion before zod does (recursively): a hostile nesting
 * depth would otherwise overflow the stack instead of failing with a field and a reason.
 */
function recoveryTreeSizeIssue(input: unknown): ScenarioIssue | undefined {
  const root = field(field(input, 'recoveryTree'), 'root');
  if (root === undefined) return undefined;
  const pending: Array<{ node: unknown; path: PropertyKey[] }> = [
    { node: root, path: ['recoveryTree', 'root'] },
  ];
  let attempts = 0;
  while (pending.length > 0) {
    const { node, path } = pending.pop()!;
    attempts += 1;
    const depth = path.filter((k) => k === 'next').length + 1;
    if (depth > RECOVERY_TREE_MAX_DEPTH)
      return {
        path: 'recoveryTree.root',
        reason: `nests attempts deeper than ${RECOVERY_TREE_MAX_DEPTH} levels`,
      };
    if (attempts > RECOVERY_TREE_MAX_ATTEMPTS)
      return {
        path: 'recoveryTree',
        reason: `the recovery tree has more than ${RECOVERY_TREE_MAX_ATTEMPTS} attempts`,
      };
    const branches = field(node, 'onFailure');
    if (!Array.isArray(branches)) continue;
    branches.slice(0, LIST_MAX_ITEMS).forEach((branch, i) => {
      const next = field(branch, 'next');
      if (next !== undefined) pending.push({ node: next, path: [...path, 'onFailure', i, 'next'] });
    });
  }
  return undefined;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}
