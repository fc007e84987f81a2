// Durable function tools for the OpenAI Agents SDK: `durableTool` takes what the SDK's `tool()`
// takes (plus Keel's effect class and retry options) and gives back an SDK function tool whose
// execution is a journaled `ctx.tool` effect of the current Keel run. The function itself becomes a
// Keel tool, defined when the agents module loads, so the thread that runs tools finds it by name.
// Agents live at module level and are shared by runs, so the tool finds its run's ctx through the
// async context `runAgent` opens, never through a module variable.
import { AsyncLocalStorage } from 'node:async_hooks';
import { RunContext, tool, type FunctionTool, type ToolOptions } from '@openai/agents';
import { z } from 'zod';
import { defineTool } from '../../sdk/define.ts';
import type {
  AgentContext,
  Json,
  RetryPolicy,
  ToolDefinition,
  ToolEffect,
} from '../../sdk/types.ts';

const current = new AsyncLocalStorage<AgentContext>();

/** Runs `fn` with `ctx` as the run whose effects durable tools called inside it belong to. */
export function withRun<T>(ctx: AgentContext, fn: () => T): T {
  return current.run(ctx, fn);
}

/** Keel's options of a durable tool, next to the SDK's own. */
export interface KeelToolOptions {
  /** What a retry after a crash may do (see `defineTool`); default `side-effect`. */
  effect?: ToolEffect;
  retry?: RetryPolicy;
  maxAttempts?: number;
  pool?: string;
  query?: ToolDefinition<Json, Json>['query'];
  compensate?: ToolDefinition<Json, Json>['compensate'];
}

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own tool() options, of any parameters and context.
type AnyToolOptions = ToolOptions<any, any, any>;

/**
 * A function tool of the Agents SDK whose executions are journaled Keel tool effects: a completed
 * call is never run again on replay, and a crash during a call follows `effect`. Define it at the
 * top level of the agents module, and run agents that use it with `runAgent`.
 * @example
 * const sendEmail = durableTool({
 *   name: 'send_email', description: 'Sends an email',
 *   parameters: z.object({ to: z.string(), body: z.string() }),
 *   execute: ({ to, body }) => mailer.send(to, body),
 *   effect: 'side-effect',
 * });
 */
export function durableTool<Options extends AnyToolOptions>(
  options: Options & KeelToolOptions,
): FunctionTool {
  // timeoutMs is Keel's alone: an SDK timeout would end the wait while the journaled call runs on,
  // and a replay (the call settled) would not time out the same way.
  const { effect, retry, maxAttempts, pool, query, compensate, timeoutMs, ...sdkOptions } = options;
  // The name the SDK gives the tool (it replaces what a function name cannot hold), journaled as is.
  const name = (sdkOptions.name ?? sdkOptions.execute.name).replace(/[^a-zA-Z0-9]/g, '_');
  const execute = sdkOptions.execute as (input: unknown, context?: RunContext) => unknown;
  const definition = defineTool<Json, Json>({
    name,
    description: sdkOptions.description,
    effect: effect ?? 'side-effect',
    // The SDK parsed and validated the arguments against the tool's parameters before this runs.
    input: z.json(),
    // The thread running Keel tools has no SDK run: the tool gets a fresh RunContext.
    run: async (args) => toJournal(await execute(args, new RunContext())),
    ...(retry === undefined ? {} : { retry }),
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(pool === undefined ? {} : { pool }),
    ...(query === undefined ? {} : { query }),
    ...(compensate === undefined ? {} : { compensate }),
  });
  return tool({
    ...sdkOptions,
    name,
    execute: (input: unknown) => {
      const ctx = current.getStore();
      if (ctx === undefined)
        throw new Error(
          `keel/openai-agents: the durable tool ${name} ran outside runAgent(ctx, …): start agents that use it with runAgent`,
        );
      return ctx.tool(definition, input as Json);
    },
  } as AnyToolOptions) as FunctionTool;
}

function toJournal(value: unknown): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}
