// Constructors for the things users write: agents, tools and models. They validate shape eagerly
// so a typo fails at load time, not in the middle of a run.
import type { z } from 'zod';
import {
  RISK_LEVELS,
  ToolPolicy as ToolPolicyShape,
  type ToolPolicy,
} from '../domain/tool-policy.ts';
import type {
  AgentContext,
  AgentDefinition,
  Json,
  McpServerSpec,
  RunSpendEstimate,
  ModelDefinition,
  ToolDefinition,
} from './types.ts';
import { parseMcpServerConfig } from './mcp-server-config.ts';
import { STALL_POLICIES, type StallPolicy } from '../domain/records.ts';
import { DELEGATED_SCOPES, isDelegatedScope } from '../domain/delegation.ts';

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * An effect pool's name: `inline`, `model:<model>`, `sandbox:<profile>`, or a declared name such as
 * `browser`.
 */
export const POOL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

function assertName(what: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new TypeError(`${what} name must match ${NAME_PATTERN}, got ${JSON.stringify(name)}`);
  }
}

/**
 * Declares an agent: a durable function over a journal. With an `input` schema (zod), a run's input
 * is checked when the run is submitted and `run` receives the parsed value, typed by the schema;
 * with an `output` schema, a result that breaks it fails the run (`agent_output_invalid`).
 * @example
 * export const greeter = defineAgent({
 *   name: 'greeter', version: '1',
 *   input: z.object({ name: z.string() }),
 *   output: z.string(),
 *   async run(ctx, input) {
 *     return ctx.step('greet', () => `hello ${input.name}`);
 *   },
 * });
 */
export function defineAgent<I, O extends Json | void>(spec: {
  name: string;
  version: string;
  input?: z.ZodType<I>;
  output?: z.ZodType<O>;
  run(ctx: AgentContext, input: I): Promise<O>;
  blockedAfterMs?: number;
  stallAfterMs?: number;
  onStall?: StallPolicy;
  cancelGraceMs?: number;
  tools?: ReadonlyArray<ToolDefinition<any, any>>;
  policy?: ToolPolicy;
  mcpServers?: ReadonlyArray<McpServerSpec>;
  estimate?: RunSpendEstimate;
  whenOverBudget?: 'park' | 'refuse';
}): AgentDefinition<I, O> {
  assertName('Agent', spec.name);
  if (typeof spec.version !== 'string' || spec.version.length === 0 || spec.version.length > 64) {
    throw new TypeError(`Agent ${spec.name}: version must be a non-empty string`);
  }
  if (typeof spec.run !== 'function')
    throw new TypeError(`Agent ${spec.name}: run must be a function`);
  if (
    spec.blockedAfterMs !== undefined &&
    !(Number.isFinite(spec.blockedAfterMs) && spec.blockedAfterMs >= 50)
  ) {
    throw new TypeError(
      `Agent ${spec.name}: blockedAfterMs must be a number of milliseconds, at least 50`,
    );
  }
  if (
    spec.stallAfterMs !== undefined &&
    !(Number.isFinite(spec.stallAfterMs) && spec.stallAfterMs >= 100)
  )
    throw new TypeError(
      `Agent ${spec.name}: stallAfterMs must be a number of milliseconds, at least 100`,
    );
  if (
    spec.cancelGraceMs !== undefined &&
    !(
      Number.isInteger(spec.cancelGraceMs) &&
      spec.cancelGraceMs >= 0 &&
      spec.cancelGraceMs <= 3_600_000
    )
  )
    throw new TypeError(
      `Agent ${spec.name}: cancelGraceMs must be a whole number of milliseconds, 0 to 3,600,000`,
    );
  if (spec.onStall !== undefined && !STALL_POLICIES.includes(spec.onStall))
    throw new TypeError(`Agent ${spec.name}: onStall must be one of ${STALL_POLICIES.join(', ')}`);
  if (spec.tools !== undefined && !spec.tools.every(isToolDefinition))
    throw new TypeError(`Agent ${spec.name}: tools must be made with defineTool()`);
  const mcpServers = spec.mcpServers?.map((server) => {
    try {
      return parseMcpServerConfig(server);
    } catch (error) {
      throw new TypeError(`Agent ${spec.name}: ${(error as Error).message}`);
    }
  });
  if (spec.estimate !== undefined) checkEstimate(spec.name, spec.estimate);
  if (spec.whenOverBudget !== undefined && !['park', 'refuse'].includes(spec.whenOverBudget))
    throw new TypeError(`Agent ${spec.name}: whenOverBudget must be park or refuse`);
  for (const contract of ['input', 'output'] as const) {
    if (spec[contract] !== undefined && !isZodSchema(spec[contract]))
      throw new TypeError(`Agent ${spec.name}: ${contract} must be a zod schema`);
  }
  return Object.freeze({
    kind: 'keel.agent',
    name: spec.name,
    version: spec.version,
    run: spec.run,
    ...(spec.blockedAfterMs === undefined ? {} : { blockedAfterMs: spec.blockedAfterMs }),
    ...(spec.stallAfterMs === undefined ? {} : { stallAfterMs: spec.stallAfterMs }),
    ...(spec.onStall === undefined ? {} : { onStall: spec.onStall }),
    ...(spec.cancelGraceMs === undefined ? {} : { cancelGraceMs: spec.cancelGraceMs }),
    ...(spec.tools === undefined ? {} : { tools: Object.freeze([...spec.tools]) }),
    ...(mcpServers === undefined ? {} : { mcpServers: Object.freeze(mcpServers) }),
    ...(spec.input === undefined ? {} : { input: spec.input }),
    ...(spec.policy === undefined ? {} : { policy: parsePolicy(spec.name, spec.policy) }),
    ...(spec.output === undefined ? {} : { output: spec.output }),
    ...(spec.estimate === undefined ? {} : { estimate: Object.freeze({ ...spec.estimate }) }),
    ...(spec.whenOverBudget === undefined ? {} : { whenOverBudget: spec.whenOverBudget }),
  });
}

function checkEstimate(agent: string, estimate: RunSpendEstimate): void {
  if (typeof estimate.model !== 'string' || estimate.model.length === 0)
    throw new TypeError(`Agent ${agent}: estimate.model must name a model`);
  for (const field of ['modelCalls', 'inputTokensPerCall', 'outputTokensPerCall'] as const) {
    const value = estimate[field];
    if (!Number.isInteger(value) || value < 0 || value > 1_000_000_000)
      throw new TypeError(`Agent ${agent}: estimate.${field} must be a whole number, 0 to 1e9`);
  }
}

function isZodSchema(value: unknown): boolean {
  return typeof (value as { safeParse?: unknown } | null)?.safeParse === 'function';
}

/**
 * Every tool defined in this thread so far, by name (the first of a name wins): when agent code
 * runs in isolates, the main thread runs its tools and finds them here — defined when the agents
 * module loaded, exported or not. Keyed on the realm's symbol registry, so that two copies of this
 * module (an agents module importing `keel` from dist/ while the runtime runs from src/, or two
 * installed copies) share one list.
 */
const DEFINED_TOOLS_KEY = Symbol.for('keel.definedTools');
const realm = globalThis as { [DEFINED_TOOLS_KEY]?: Map<string, ToolDefinition<unknown, Json>> };
realm[DEFINED_TOOLS_KEY] ??= new Map<string, ToolDefinition<unknown, Json>>();
const definedTools = realm[DEFINED_TOOLS_KEY];

export function toolsDefined(): ReadonlyMap<string, ToolDefinition<unknown, Json>> {
  return definedTools;
}

/** Set while a reloaded agents module evaluates: its tools replace earlier ones of their name. */
const REDEFINING_KEY = Symbol.for('keel.redefiningTools');
const flags = globalThis as { [REDEFINING_KEY]?: boolean };

/**
 * @internal Lets the tools defined until the returned function is called replace earlier
 * definitions of their names (`keel dev --watch` re-evaluating a changed agents module); tools no
 * new definition names (a package's, not re-evaluated) stay.
 */
export function redefineTools(): () => void {
  flags[REDEFINING_KEY] = true;
  return () => {
    flags[REDEFINING_KEY] = false;
  };
}

/**
 * Declares a tool. `effect` says what a retry after a crash may do: `read` re-runs freely,
 * `idempotent` re-runs with the same `executionId`, `side-effect` never re-runs blindly.
 * @example
 * export const add = defineTool({
 *   name: 'add', description: 'Adds two numbers', effect: 'read',
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   run: ({ a, b }) => ({ sum: a + b }),
 * });
 */
/** The agent's tool policy, checked when the module loads: a typo fails at load, not mid-run. */
function parsePolicy(agent: string, policy: unknown): ToolPolicy {
  const parsed = ToolPolicyShape.safeParse(policy);
  if (!parsed.success)
    throw new TypeError(
      `Agent ${agent}: policy is invalid at ${parsed.error.issues[0]?.path.join('.') || '(root)'}: ${parsed.error.issues[0]?.message ?? ''}`,
    );
  return Object.freeze(parsed.data);
}

export function defineTool<I, O extends Json | void>(
  spec: Omit<ToolDefinition<I, O>, 'kind'>,
): ToolDefinition<I, O> {
  assertName('Tool', spec.name);
  if (!['read', 'idempotent', 'side-effect'].includes(spec.effect)) {
    throw new TypeError(`Tool ${spec.name}: effect must be 'read', 'idempotent' or 'side-effect'`);
  }
  if (typeof spec.run !== 'function')
    throw new TypeError(`Tool ${spec.name}: run must be a function`);
  for (const hook of ['query', 'compensate', 'effectOf'] as const) {
    if (spec[hook] !== undefined && typeof spec[hook] !== 'function')
      throw new TypeError(`Tool ${spec.name}: ${hook} must be a function`);
  }
  if (
    spec.pool !== undefined &&
    (typeof spec.pool !== 'string' ||
      !POOL_NAME_PATTERN.test(spec.pool) ||
      spec.pool.startsWith('model:'))
  ) {
    throw new TypeError(
      `Tool ${spec.name}: pool must match ${POOL_NAME_PATTERN} and not name a model pool (model:…), got ${JSON.stringify(spec.pool)}`,
    );
  }
  const attempts = spec.retry?.maxAttempts ?? spec.maxAttempts;
  if (attempts !== undefined && (!Number.isInteger(attempts) || attempts < 1))
    throw new TypeError(`Tool ${spec.name}: maxAttempts must be a positive integer`);
  if (
    spec.maxArgumentBytes !== undefined &&
    (!Number.isInteger(spec.maxArgumentBytes) || spec.maxArgumentBytes < 1)
  )
    throw new TypeError(`Tool ${spec.name}: maxArgumentBytes must be a positive integer`);
  if (spec.input === undefined || !isZodSchema(spec.input)) {
    throw new TypeError(`Tool ${spec.name}: input must be a zod schema`);
  }
  if (spec.risk !== undefined && !(RISK_LEVELS as readonly string[]).includes(spec.risk))
    throw new TypeError(`Tool ${spec.name}: risk must be one of ${RISK_LEVELS.join(', ')}`);
  if (
    spec.cost !== undefined &&
    typeof spec.cost !== 'function' &&
    !(Number.isFinite(spec.cost) && spec.cost >= 0)
  )
    throw new TypeError(`Tool ${spec.name}: cost must be a non-negative number or a function`);
  if (
    spec.delegate !== undefined &&
    (!Array.isArray(spec.delegate) || !spec.delegate.every(isDelegatedScope))
  )
    throw new TypeError(
      `Tool ${spec.name}: delegate must list scopes among ${DELEGATED_SCOPES.join(', ')}`,
    );
  const tool = Object.freeze({ ...spec, kind: 'keel.tool' as const });
  if (flags[REDEFINING_KEY] === true || !definedTools.has(tool.name))
    definedTools.set(tool.name, tool as ToolDefinition<unknown, Json>);
  return tool;
}

/**
 * Declares a named model the gateway can call: `openai` (any OpenAI-compatible endpoint),
 * `anthropic`, or the deterministic `mock`. API keys are named by environment variable
 * (`apiKeyEnv`), never written here.
 * @example
 * export const scripted = defineModel({ name: 'planner', provider: 'mock', options: { latencyMs: 50 } });
 * export const gpt = defineModel({ name: 'gpt', provider: 'openai', providerModel: 'gpt-4o-mini', apiKeyEnv: 'OPENAI_API_KEY' });
 */
export function defineModel(spec: Omit<ModelDefinition, 'kind'>): ModelDefinition {
  assertName('Model', spec.name);
  return Object.freeze({ ...spec, kind: 'keel.model' as const });
}

export function isAgentDefinition(value: unknown): value is AgentDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'keel.agent'
  );
}

export function isToolDefinition(value: unknown): value is ToolDefinition<unknown, Json> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'keel.tool'
  );
}

export function isModelDefinition(value: unknown): value is ModelDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'keel.model'
  );
}
