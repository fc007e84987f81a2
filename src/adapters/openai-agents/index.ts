// `keel/openai-agents`: agents written with the OpenAI Agents SDK (`@openai/agents`) made durable
// inside a Keel agent. `runAgent` runs the SDK's loop (tools, handoffs, guardrails) with every model
// call a journaled `ctx.model` effect through Keel's gateway, and tools made with `durableTool` as
// journaled `ctx.tool` effects. Importing it turns the SDK's trace export off: its default
// exporter posts to api.openai.com, which a Keel worker must not reach on its own; the run's
// OpenTelemetry spans come from Keel.
import {
  Runner,
  setTracingDisabled,
  type Agent,
  type AgentInputItem,
  type NonStreamRunOptions,
  type RunConfig,
  type RunResult,
} from '@openai/agents';
import type { AgentContext } from '../../sdk/types.ts';
import { KeelModelProvider } from './model.ts';
import { withRun } from './tools.ts';

export { KeelAgentsModel, KeelModelProvider } from './model.ts';
export { durableTool } from './tools.ts';
export type { KeelToolOptions } from './tools.ts';

setTracingDisabled(true);

export interface RunAgentOptions<TContext> {
  /** The gateway model for agents that name none (an agent's own `model` is a gateway model name). */
  model: string;
  /** The SDK's run options (context, maxTurns, …); streaming is not offered here. */
  run?: NonStreamRunOptions<TContext>;
  /** More Runner configuration; the model provider and tracing are Keel's. */
  config?: Omit<Partial<RunConfig>, 'modelProvider' | 'tracingDisabled' | 'model'>;
}

/**
 * Runs an Agents SDK agent (and the agents it hands off to) as part of a Keel run: each model call
 * and each durable tool call is an effect of `ctx`, so a crash resumes where the journal ends.
 * @example
 * export const travel = defineAgent({
 *   name: 'travel', version: '1',
 *   async run(ctx, input: { prompt: string }) {
 *     const result = await runAgent(ctx, triage, input.prompt, { model: 'gpt' });
 *     return { answer: String(result.finalOutput), agent: result.lastAgent?.name ?? null };
 *   },
 * });
 */
// biome-ignore lint/suspicious/noExplicitAny: an agent of any output type, as the SDK's own run() takes.
export function runAgent<TContext, TAgent extends Agent<TContext, any>>(
  ctx: AgentContext,
  agent: TAgent,
  input: string | AgentInputItem[],
  options: RunAgentOptions<TContext>,
): Promise<RunResult<TContext, TAgent>> {
  const runner = new Runner({
    ...options.config,
    modelProvider: new KeelModelProvider(ctx, options.model),
    model: options.model,
    tracingDisabled: true,
  });
  return withRun(ctx, () => runner.run(agent, input, { ...options.run, stream: false }));
}
