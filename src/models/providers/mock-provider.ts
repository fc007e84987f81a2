// The deterministic `mock` provider: echoes or follows a script, with simulated latency and
// failures. It must never touch the network. Given the same conversation it gives the same reply
// and token counts; only the simulated failures draw randomness (a provider, unlike agent code, is
// never replayed). Like a real provider it stops at the request's output cap, so token and cost
// budgets hold against it.
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
   * Answers one attempt: `script[n]` when the conversation holds `n` assistant messages and the
   * script has that entry, else the last user message echoed back.
   * @example
   * const reply = await new MockProvider().complete({ model, messages: [{ role: 'user', content: 'hi' }], tools: [] }, signal);
   * // reply.text === 'hi'
   */
  async complete(request: ProviderRequest, signal: AbortSignal): Promise<ProviderResponse> {
    signal.throwIfAborted();
    const options: MockModelOptions = request.model.definition.options ?? {};
    if (options.latencyMs !== undefined && options.latencyMs > 0)
      await abortableDelay(options.latencyMs, signal);
    if (options.failureRate !== undefined && this.#random() < options.failureRate) {
      throw new KeelError(
        'model_unavailable',
        `mock model ${request.model.name}: simulated provider failure`,
        {
          retryable: true,
        },
      );
    }
    const { text, toolCalls, outputTokens } = capped(
      reply(request.messages, options.script),
      request.maxOutputTokens,
    );
    return {
      text,
      toolCalls,
      inputTokens: estimateTokens(request.messages.map((message) => message.content).join('')),
      outputTokens,
    };
  }
}

function reply(
  messages: ChatMessage[],
  script: MockModelOptions['script'],
): { text: string; toolCalls: ToolCall[] } {
  const assistantTurn = messages.filter((message) => message.role === 'assistant').length;
  const entry = script?.[assistantTurn];
  if (entry === undefined) {
    const lastUser = messages.findLast((message) => message.role === 'user');
    return { text: lastUser?.content ?? '', toolCalls: [] };
  }
  const toolCalls = (entry.toolCalls ?? []).map((call, index) => ({
    // Derived from the turn, not random: a replayed or retried call must name its tool calls
    // identically.
    id: `call_${assistantTurn}_${index}`,
    name: call.name,
    args: structuredClone(call.args),
  }));
  return { text: entry.text ?? '', toolCalls };
}

/**
 * The reply as a provider with an output cap gives it: whole when it fits; otherwise cut at the
 * cap, like an answer stopped at its length limit, its tool calls lost with the part that did not
 * fit.
 */
function capped(
  answer: { text: string; toolCalls: ToolCall[] },
  maxOutputTokens: number | undefined,
): { text: string; toolCalls: ToolCall[]; outputTokens: number } {
  const outputTokens = estimateTokens(
    answer.text + (answer.toolCalls.length > 0 ? JSON.stringify(answer.toolCalls) : ''),
  );
  if (maxOutputTokens === undefined || outputTokens <= maxOutputTokens)
    return { ...answer, outputTokens };
  // Billed at the cap, as a provider bills an answer it stopped there.
  return {
    text: answer.text.slice(0, maxOutputTokens * CHARS_PER_TOKEN),
    toolCalls: [],
    outputTokens: maxOutputTokens,
  };
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / CHARS_PER_TOKEN));
}
