// The deterministic `mock` provider: echoes or follows a script, with simulated latency and failures.
// It must never touch the network. Given the same conversation it gives the same reply and token counts;
// only the simulated failures draw randomness (a provider, unlike agent code, is never replayed).
import { KeelError } from '../../domain/keel-error.ts';
import type { ChatMessage, MockModelOptions, ToolCall } from '../../sdk/types.ts';
import { abortableDelay } from '../../domain/clock.ts';
import type { ModelProvider, ProviderRequest, ProviderResponse } from '../provider.ts';

/** Rough size of a token in characters, for the mock's deterministic token estimate. */
const CHARS_PER_TOKEN = 4;

export class MockProvider implements ModelProvider {
  readonly name = 'mock';
  readonly #random: () => number;

  /** `random` decides simulated failures; it defaults to `Math.random`. */
  constructor(options: { random?: () => number } = {}) {
    this.#random = options.random ?? Math.random;
  }

  /**
   * Answers one attempt: `script[n]` when the conversation holds `n` assistant messages and the script
   * has that entry, else the last user message echoed back.
   * @example
   * const reply = await new MockProvider().complete({ model, messages: [{ role: 'user', content: 'hi' }], tools: [] }, signal);
   * // reply.text === 'hi'
   */
  async complete(request: ProviderRequest, signal: AbortSignal): Promise<ProviderResponse> {
    signal.throwIfAborted();
    const options: MockModelOptions = request.model.definition.options ?? {};
    if (options.latencyMs !== undefined && options.latencyMs > 0) await abortableDelay(options.latencyMs, signal);
    if (options.failureRate !== undefined && this.#random() < options.failureRate) {
      throw new KeelError('model_unavailable', `mock model ${request.model.name}: simulated provider failure`, {
        retryable: true,
      });
    }
    const { text, toolCalls } = reply(request.messages, options.script);
    return {
      text,
      toolCalls,
      inputTokens: estimateTokens(request.messages.map((message) => message.content).join('')),
      outputTokens: estimateTokens(text + (toolCalls.length > 0 ? JSON.stringify(toolCalls) : '')),
    };
  }
}

function reply(messages: ChatMessage[], script: MockModelOptions['script']): { text: string; toolCalls: ToolCall[] } {
  const assistantTurn = messages.filter((message) => message.role === 'assistant').length;
  const entry = script?.[assistantTurn];
  if (entry === undefined) {
    const lastUser = messages.findLast((message) => message.role === 'user');
    return { text: lastUser?.content ?? '', toolCalls: [] };
  }
  const toolCalls = (entry.toolCalls ?? []).map((call, index) => ({
    // Derived from the turn, not random: a replayed or retried call must name its tool calls identically.
    id: `call_${assistantTurn}_${index}`,
    name: call.name,
    args: structuredClone(call.args),
  }));
  return { text: entry.text ?? '', toolCalls };
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / CHARS_PER_TOKEN));
}
