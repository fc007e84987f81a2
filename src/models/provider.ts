// The contract between the model gateway and a model provider (mock today; OpenAI-compatible and Anthropic later).
// A provider turns one request into one attempt against one backend. It must never retry, queue, price or
// cache: retries, concurrency limits and cost belong to the gateway, so every provider gets them the same way.
import type { ChatMessage, ModelDefinition, ModelToolSpec, ToolCall } from '../sdk/types.ts';

/** A model name resolved against the gateway's definitions. */
export interface ResolvedModel {
  name: string;
  /** `definition.version`, or `'1'` when the definition has none. */
  version: string;
  definition: ModelDefinition;
}

export interface ProviderRequest {
  model: ResolvedModel;
  messages: ChatMessage[];
  /** Tools already converted to JSON Schema, so providers never see zod. */
  tools: ModelToolSpec[];
  maxOutputTokens?: number;
  temperature?: number;
}

export interface ProviderResponse {
  text: string;
  toolCalls: ToolCall[];
  inputTokens: number;
  outputTokens: number;
}

/**
 * One backend the gateway can call. `complete` makes exactly one attempt.
 * Transient failures (rate limits, 5xx, timeouts) must be thrown as a `KeelError` with
 * `retryable: true` (and `retryAfterMs` when the backend says so); anything else is final.
 * When `signal` aborts, `complete` must reject promptly with `signal.reason` and leave nothing running.
 * @example
 * const echo: ModelProvider = {
 *   name: 'echo',
 *   async complete(request) {
 *     const text = request.messages.at(-1)?.content ?? '';
 *     return { text, toolCalls: [], inputTokens: 1, outputTokens: 1 };
 *   },
 * };
 */
export interface ModelProvider {
  readonly name: string;
  complete(request: ProviderRequest, signal: AbortSignal): Promise<ProviderResponse>;
}
