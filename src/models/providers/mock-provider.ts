// The deterministic `mock` provider: echoes or follows a script, with simulated latency and
// failures. It must never touch the network. Given the same conversation it gives the same reply
// and token counts; only the simulated failures draw randomness (a provider, unlike agent code, is
// never replayed). Like a real provider it stops at the request's output cap, so token and cost
// budgets hold against it. Simulation options (mock-latency.ts) add seeded latency distributions, a
// latency ramp and rate-limit/outage windows counted from a start instant; without them it behaves
// as before.
import { KeelError } from '../../domain/keel-error.ts';
import type { ChatMessage, MockModelOptions, ToolCall } from '../../sdk/types.ts';
import { abortableDelay } from '../../domain/clock.ts';
import type { ModelProvider, ProviderRequest, ProviderResponse } from '../provider.ts';
import {
  activeFault,
  MockSimulationSchema,
  type MockSimulation,
  rampScale,
  sampleLatencyMs,
  seededRandom,
} from './mock-latency.ts';

/** Rough size of a token in characters, for the mock's deterministic token estimate. */
const CHARS_PER_TOKEN = 4;
const NO_OPTIONS: MockModelOptions = Object.freeze({});

export class MockProvider implements ModelProvider {
  readonly name = 'mock';
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #startedAtMs: number;
  /** One seeded generator per seeded model, so each model's draws repeat in order. */
  readonly #seeded = new Map<string, () => number>();
  readonly #simulations = new WeakMap<object, MockSimulation>();

  /**
   * `random` decides unseeded draws (default `Math.random`); `now` is the clock fault windows are
   * read against (default `Date.now`).
   */
  constructor(options: { random?: () => number; now?: () => number } = {}) {
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#startedAtMs = this.#now();
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
    const options: MockModelOptions = request.model.definition.options ?? NO_OPTIONS;
    const simulation = this.#simulation(options);
    const random = this.#randomFor(request.model.name, simulation);
    const elapsedSeconds = (this.#now() - (simulation.startAtMs ?? this.#startedAtMs)) / 1_000;
    this.#failIfFaulted(request.model.name, simulation, elapsedSeconds, random);
    const baseMs =
      simulation.latency === undefined
        ? (options.latencyMs ?? 0)
        : sampleLatencyMs(simulation.latency, random);
    const latencyMs = baseMs * rampScale(simulation.latencyRamp, elapsedSeconds);
    if (latencyMs > 0) await abortableDelay(latencyMs, signal);
    if (options.failureRate !== undefined && random() < options.failureRate) {
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

  #simulation(options: MockModelOptions): MockSimulation {
    let simulation = this.#simulations.get(options);
    if (simulation === undefined) {
      const parsed = MockSimulationSchema.safeParse(options);
      if (!parsed.success)
        throw new KeelError(
          'config_invalid',
          `mock model options are invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      simulation = parsed.data;
      this.#simulations.set(options, simulation);
    }
    return simulation;
  }

  #randomFor(model: string, simulation: MockSimulation): () => number {
    if (simulation.seed === undefined) return this.#random;
    let random = this.#seeded.get(model);
    if (random === undefined) {
      random = seededRandom(simulation.seed);
      this.#seeded.set(model, random);
    }
    return random;
  }

  /** A rate-limit window answers like a provider's 429 (with retry-after), an outage like a 503. */
  #failIfFaulted(
    model: string,
    simulation: MockSimulation,
    elapsedSeconds: number,
    random: () => number,
  ): void {
    const fault = activeFault(simulation.faults, elapsedSeconds);
    if (fault === undefined || (fault.share < 1 && random() >= fault.share)) return;
    if (fault.kind === 'rate-limit')
      throw new KeelError('model_rate_limited', `mock model ${model}: simulated 429`, {
        retryable: true,
        retryAfterMs: fault.retryAfterMs,
        details: { status: 429 },
      });
    throw new KeelError('model_unavailable', `mock model ${model}: simulated outage (503)`, {
      retryable: true,
      details: { status: 503 },
    });
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
