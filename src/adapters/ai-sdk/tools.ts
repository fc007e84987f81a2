// Makes AI SDK tools (`tool({ description, inputSchema, execute })`) durable: each one becomes a Keel
// tool (defined when the agents module loads, so the thread that runs tools finds it by name), and
// binding the set to a run's ctx gives the SDK the same tools with an `execute` that is a journaled
// `ctx.tool` effect. A completed call is never run again on replay; a crash during a call follows
// the tool's effect class (side-effect by default: never re-run blindly).
import type { Tool, ToolSet } from 'ai';
import { z } from 'zod';
import { defineTool } from '../../sdk/define.ts';
import type {
  AgentContext,
  Json,
  ToolContext,
  ToolDefinition,
  ToolEffect,
  RetryPolicy,
} from '../../sdk/types.ts';

/** What Keel needs to know about one tool beyond what the AI SDK says. */
export interface DurableToolOptions {
  /** What a retry after a crash may do (see `defineTool`); default `side-effect`. */
  effect?: ToolEffect;
  /** The Keel tool's name; default `<prefix><key>`. */
  name?: string;
  retry?: RetryPolicy;
  maxAttempts?: number;
  timeoutMs?: number;
  pool?: string;
  /** Asks the downstream system whether an execution whose outcome is unknown happened. */
  query?: ToolDefinition<Json, Json>['query'];
  /** Undoes a completed execution when the run later fails or is cancelled. */
  compensate?: ToolDefinition<Json, Json>['compensate'];
}

export interface DurableToolsOptions<T extends ToolSet> {
  /** Prepended to every Keel tool name (tools of two agents may share a key). */
  prefix?: string;
  /** Per tool (by its key in the set). */
  tools?: { [K in keyof T]?: DurableToolOptions };
}

/** A tool set whose executions are Keel effects once bound to a run. */
export interface DurableToolSet<T extends ToolSet> {
  /** The Keel tools, by the key of the AI SDK tool they run. */
  readonly definitions: { readonly [K in keyof T]: ToolDefinition<Json, Json> };
  /** The AI SDK tools for one run: pass them as `tools` to `generateText`/`streamText`. */
  bind(ctx: AgentContext): T;
}

/**
 * Wraps AI SDK tools so that each execution is a journaled Keel tool effect. Call it where the
 * agents module loads (top level), never inside `run`: the runtime finds tools by name in the
 * module it loaded.
 * @example
 * const tools = durableTools(
 *   { get_weather: tool({ description: 'Weather of a city', inputSchema: z.object({ city: z.string() }), execute: getWeather }) },
 *   { tools: { get_weather: { effect: 'read' } } },
 * );
 * // in run(ctx, input):
 * await generateText({ model: keel.model('assistant'), tools: tools.bind(ctx), stopWhen: stepCountIs(5), prompt });
 */
export function durableTools<T extends ToolSet>(
  tools: T,
  options: DurableToolsOptions<T> = {},
): DurableToolSet<T> {
  const definitions: Record<string, ToolDefinition<Json, Json>> = {};
  for (const [key, tool] of Object.entries(tools)) {
    const own: DurableToolOptions = options.tools?.[key as keyof T] ?? {};
    if (typeof tool.execute !== 'function')
      throw new TypeError(
        `keel/ai-sdk: tool ${key} has no execute function (nothing to make durable); leave it out of durableTools`,
      );
    definitions[key] = defineKeelTool(key, tool, own, options.prefix ?? '');
  }
  return Object.freeze({
    definitions: Object.freeze(definitions) as DurableToolSet<T>['definitions'],
    bind(ctx: AgentContext): T {
      const bound: ToolSet = {};
      for (const [key, tool] of Object.entries(tools)) {
        const definition = definitions[key]!;
        bound[key] = { ...tool, execute: (input: unknown) => ctx.tool(definition, input as Json) };
      }
      return bound as T;
    },
  });
}

function defineKeelTool(
  key: string,
  tool: Tool,
  own: DurableToolOptions,
  prefix: string,
): ToolDefinition<Json, Json> {
  const execute = tool.execute!;
  return defineTool<Json, Json>({
    name: own.name ?? `${prefix}${key}`,
    description: tool.description ?? key,
    effect: own.effect ?? 'side-effect',
    // The AI SDK validated the input against the tool's own schema before calling execute.
    input: z.json(),
    run: async (args: Json, ctx: ToolContext) =>
      finalOutput(
        await execute(args, {
          // The execution id stays the same across retries and recoveries: a better idempotency
          // key than the model's call id, which Keel's tool thread does not see.
          toolCallId: ctx.executionId,
          messages: [],
          abortSignal: ctx.signal,
        }),
      ),
    ...(own.retry === undefined ? {} : { retry: own.retry }),
    ...(own.maxAttempts === undefined ? {} : { maxAttempts: own.maxAttempts }),
    ...(own.timeoutMs === undefined ? {} : { timeoutMs: own.timeoutMs }),
    ...(own.pool === undefined ? {} : { pool: own.pool }),
    ...(own.query === undefined ? {} : { query: own.query }),
    ...(own.compensate === undefined ? {} : { compensate: own.compensate }),
  });
}

/**
 * An execute result as a journal value: a streaming tool (an async iterable of preliminary
 * results) ends with its last value, as in the AI SDK; `undefined` becomes `null`.
 */
async function finalOutput(result: unknown): Promise<Json> {
  let value = result;
  if (typeof value === 'object' && value !== null && Symbol.asyncIterator in value) {
    let last: unknown = null;
    for await (const item of value as AsyncIterable<unknown>) last = item;
    value = last;
  }
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}
