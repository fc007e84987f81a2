// A Vercel AI SDK language model (the `@ai-sdk/provider` LanguageModelV3 interface) whose every call
// is one `ctx.model` effect of a Keel run: the gateway makes the provider call (routing, limits,
// retries, pricing; token deltas reach the run's live `model.delta` events) and the journal keeps
// the answer, so a replay after a crash returns it without calling the provider again. It must
// never call a provider itself.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';
import type { AgentContext, ModelRequest, ModelResponse } from '../../sdk/types.ts';
import {
  finishReasonOf,
  toChatMessages,
  toContent,
  toToolSpecs,
  usageOf,
  warningsFor,
} from './prompt.ts';

/** The `provider` name the AI SDK reports for these models (in results and telemetry). */
export const KEEL_AI_SDK_PROVIDER = 'keel';

export class KeelLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider = KEEL_AI_SDK_PROVIDER;
  readonly modelId: string;
  /** No URL is fetched by the model: files are refused before the call (model_content_unsupported). */
  readonly supportedUrls: Record<string, RegExp[]> = {};
  readonly #ctx: AgentContext;

  constructor(ctx: AgentContext, model: string) {
    if (typeof model !== 'string' || model.length === 0)
      throw new TypeError('keel/ai-sdk: the model name must be a non-empty string');
    this.#ctx = ctx;
    this.modelId = model;
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const response = await this.#call(options);
    return {
      content: toContent(response),
      finishReason: finishReasonOf(response),
      usage: usageOf(response),
      providerMetadata: { keel: { model: response.model, costUsd: response.usage.costUsd } },
      response: { modelId: response.model },
      warnings: warningsFor(options),
    };
  }

  /**
   * The journaled answer as a stream of parts. The effect completes before the stream starts (a
   * journal entry is the whole answer), so the text arrives as one delta; clients following the
   * run see the provider's own token deltas live as `model.delta` events.
   */
  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const response = await this.#call(options);
    const parts = streamParts(response, options);
    return {
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  #call(options: LanguageModelV3CallOptions): Promise<ModelResponse> {
    const request: ModelRequest = {
      model: this.modelId,
      messages: toChatMessages(options.prompt),
    };
    const tools = toToolSpecs(options.tools, options.toolChoice);
    if (tools.length > 0) request.tools = tools;
    if (options.maxOutputTokens !== undefined) request.maxOutputTokens = options.maxOutputTokens;
    if (options.temperature !== undefined) request.temperature = options.temperature;
    return this.#ctx.model(request);
  }
}

function streamParts(
  response: ModelResponse,
  options: LanguageModelV3CallOptions,
): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [
    { type: 'stream-start', warnings: warningsFor(options) },
    { type: 'response-metadata', modelId: response.model },
  ];
  if (response.text !== '') {
    parts.push(
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: response.text },
      { type: 'text-end', id: 'text-0' },
    );
  }
  for (const call of response.toolCalls) {
    const input = JSON.stringify(call.args);
    parts.push(
      { type: 'tool-input-start', id: call.id, toolName: call.name },
      { type: 'tool-input-delta', id: call.id, delta: input },
      { type: 'tool-input-end', id: call.id },
      { type: 'tool-call', toolCallId: call.id, toolName: call.name, input },
    );
  }
  parts.push({
    type: 'finish',
    usage: usageOf(response),
    finishReason: finishReasonOf(response),
    providerMetadata: { keel: { model: response.model, costUsd: response.usage.costUsd } },
  });
  return parts;
}
