// The contract between the model gateway and a model provider (mock, OpenAI-compatible, Anthropic).
// A provider turns one request into one attempt against one endpoint. It must never retry, queue,
// price or cache: retries, limits, breakers, routing and cost belong to the gateway, so every
// provider gets them the same way.
import type { ChatMessage, ModelDefinition, ModelToolSpec, ToolCall } from '../sdk/types.ts';

/** A model name resolved against the gateway's definitions. */
export interface ResolvedModel {
  name: string;
  /** `definition.version`, or `'1'` when the definition has none. */
  version: string;
  definition: ModelDefinition;
}

/**
 * Where one attempt goes: a replica's base URL and its API key (read from the named variable at
 * start).
 */
export interface ProviderEndpoint {
  /** `<model>/<replica>`: the breaker, router and limiter key. */
  id: string;
  baseUrl: string | undefined;
  /** The key itself; never logged, never stored, never put in errors or events. */
  apiKey: string | undefined;
  /**
   * The environment variable the key is read from (its name is safe to show: a 401 names it).
   */
  apiKeyEnv?: string | undefined;
}

export interface ProviderRequest {
  model: ResolvedModel;
  messages: ChatMessage[];
  /** Tools already converted to JSON Schema, so providers never see zod. */
  tools: ModelToolSpec[];
  maxOutputTokens?: number;
  temperature?: number;
  /** Required by network providers; the mock ignores it. */
  endpoint?: ProviderEndpoint;
  /** Stream the answer and report text deltas through `hooks.onDelta`. */
  stream?: boolean;
}

export interface ProviderResponse {
  text: string;
  toolCalls: ToolCall[];
  /** Input tokens including cached ones. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache. */
  cachedInputTokens?: number;
  /**
   * Milliseconds from sending the request to the first token (streamed) or the whole answer (not
   * streamed).
   */
  firstTokenMs?: number;
  /** The model id the provider says answered (e.g. `gpt-4o-mini-2024-07-18`). */
  providerModel?: string;
}

export interface ProviderHooks {
  /** A piece of streamed answer text, in order. */
  onDelta?(text: string): void;
}

/**
 * One backend the gateway can call. `complete` makes exactly one attempt. Transient failures (rate
 * limits, 5xx, timeouts, broken bodies) must be thrown as a `KeelError` with `retryable: true` (and
 * `retryAfterMs` when the backend says so); anything else is final. When `signal` aborts,
 * `complete` must reject promptly with `signal.reason` and leave nothing running.
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
  complete(
    request: ProviderRequest,
    signal: AbortSignal,
    hooks?: ProviderHooks,
  ): Promise<ProviderResponse>;
}
