// `keel/ai-sdk`: agents written with the Vercel AI SDK (`ai`) made durable inside a Keel agent. The
// model calls of `generateText`/`streamText` become journaled `ctx.model` effects through Keel's
// gateway, and tools wrapped with `durableTools` run as journaled `ctx.tool` effects. Loads nothing
// of the AI SDK at run time (types only), and nothing of the engine.
import type { AgentContext } from '../../sdk/types.ts';
import { KeelLanguageModel } from './language-model.ts';

export { KEEL_AI_SDK_PROVIDER, KeelLanguageModel } from './language-model.ts';
export { durableTools } from './tools.ts';
export type { DurableToolOptions, DurableToolSet, DurableToolsOptions } from './tools.ts';

/** Keel's AI SDK provider for one run. */
export interface KeelAiSdkProvider {
  /** A language model answered by the gateway's model `name` (`mock`, or one configured). */
  model(name: string): KeelLanguageModel;
  /** The same, by the AI SDK provider's conventional name. */
  languageModel(name: string): KeelLanguageModel;
}

/**
 * The AI SDK provider of a run: its models make each call a journaled effect of the run.
 * @example
 * export const assistant = defineAgent({
 *   name: 'assistant', version: '1',
 *   async run(ctx, input: { prompt: string }) {
 *     const keel = keelAiSdk(ctx);
 *     const { text } = await generateText({
 *       model: keel.model('gpt'), tools: tools.bind(ctx), stopWhen: stepCountIs(5), prompt: input.prompt,
 *     });
 *     return { text };
 *   },
 * });
 */
export function keelAiSdk(ctx: AgentContext): KeelAiSdkProvider {
  const model = (name: string) => new KeelLanguageModel(ctx, name);
  return { model, languageModel: model };
}
