// The model gateway: resolves model names, bounds concurrency per model, retries transient provider
// failures with jittered backoff, and prices each call. It owns no conversation state and must never
// retry a non-retryable error or keep going after its signal aborts.
import { KeelError, isKeelError } from '../errors/keel-error.ts';
import type { ModelDefinition, ModelRequest, ModelResponse } from '../sdk/types.ts';
import { abortableDelay } from './abortable-delay.ts';
import { MockProvider } from './mock-provider.ts';
import type { ModelProvider, ProviderRequest, ProviderResponse, ResolvedModel } from './provider.ts';
import { Semaphore, SemaphoreFullError } from '../scheduling/semaphore.ts';
import { toModelToolSpec } from './tool-spec.ts';
import { modelCallReporter } from '../telemetry/model-calls.ts';
import { telemetry } from '../telemetry/telemetry.ts';

export const MODEL_MAX_CONCURRENCY_DEFAULT = 64;
export const MODEL_MAX_ATTEMPTS_DEFAULT = 3;
/** Upper bound on `maxAttempts`, so a typo cannot turn one call into minutes of retries. */
export const MODEL_MAX_ATTEMPTS_LIMIT = 10;
/** Calls that may queue for one model's slots before further calls fail fast (retryably). */
export const MODEL_QUEUE_MAX_WAITERS = 10_000;
export const RETRY_BASE_DELAY_MS = 100;
export const RETRY_MAX_DELAY_MS = 5_000;
/** A provider's Retry-After is honoured up to this; longer hints are clamped so a call stays bounded. */
export const RETRY_AFTER_MAX_MS = 60_000;
const TOKENS_PER_MTOK = 1_000_000;

const BUILT_IN_MOCK: ModelDefinition = Object.freeze({ kind: 'keel.model', name: 'mock', provider: 'mock' });

export interface ModelCallResult {
  response: ModelResponse;
  /** Provider attempts made, 1 when the first one succeeded. */
  attempts: number;
  /** When the first attempt got a slot (ms since the epoch): the time before it was spent queued for the model. */
  startedAt: number;
}

export interface ModelGatewayOptions {
  /** Providers by `name`; they replace the built-in ones of the same name. */
  providers?: readonly ModelProvider[];
  /** Source of backoff jitter; defaults to `Math.random`. */
  random?: () => number;
}

interface ModelEntry {
  model: ResolvedModel;
  provider: ModelProvider;
  slots: Semaphore;
}

export class ModelGateway {
  readonly #models = new Map<string, ModelEntry>();
  readonly #random: () => number;

  /**
   * Builds a gateway over `definitions`; the built-in `mock` model is added unless one is named `mock`.
   * Throws `config_invalid` for duplicate names, unknown providers or out-of-range limits.
   * @example
   * const gateway = new ModelGateway([defineModel({ name: 'planner', provider: 'mock', maxConcurrency: 4 })]);
   */
  constructor(definitions: readonly ModelDefinition[] = [], options: ModelGatewayOptions = {}) {
    this.#random = options.random ?? Math.random;
    const providers = new Map<string, ModelProvider>([['mock', new MockProvider()]]);
    for (const provider of options.providers ?? []) providers.set(provider.name, provider);
    const seen = new Set<string>();
    for (const definition of definitions) {
      if (seen.has(definition.name)) throw configInvalid(`model ${definition.name} is defined twice`);
      seen.add(definition.name);
    }
    const all = seen.has(BUILT_IN_MOCK.name) ? definitions : [BUILT_IN_MOCK, ...definitions];
    for (const definition of all) this.#models.set(definition.name, entryFor(definition, providers));
    for (const [name, entry] of this.#models) telemetry.registerPool(`model:${name}`, entry.slots); // telemetry (issue 9)
  }

  has(name: string): boolean {
    return this.#models.has(name);
  }

  /**
   * Resolves a model name to its definition and pinned version; throws `model_not_found` if unknown.
   * @example
   * gateway.resolve('mock'); // { name: 'mock', version: '1', definition: { … } }
   */
  resolve(name: string): ResolvedModel {
    return this.#entry(name).model;
  }

  /**
   * Calls a model: waits for one of its slots, retries retryable provider errors with exponential
   * backoff and full jitter (or the provider's Retry-After), and prices the answer.
   * Rejects with `signal.reason` once `signal` aborts, with a non-retryable error as thrown, and with
   * `model_unavailable` (details `{ model, attempts }`) when every attempt failed retryably.
   * @example
   * const { response, attempts } = await gateway.call(
   *   { model: 'mock', messages: [{ role: 'user', content: 'hi' }] },
   *   { signal: AbortSignal.timeout(30_000) },
   * );
   */
  async call(request: ModelRequest, options: { signal: AbortSignal }): Promise<ModelCallResult> {
    const { signal } = options;
    const entry = this.#entry(request.model);
    const providerRequest: ProviderRequest = {
      model: entry.model,
      messages: request.messages,
      tools: (request.tools ?? []).map(toModelToolSpec),
      ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    };
    const maxAttempts = entry.model.definition.maxAttempts ?? MODEL_MAX_ATTEMPTS_DEFAULT;
    let startedAt: number | undefined;
    const onSlot = () => {
      startedAt ??= Date.now();
    };
    const report = modelCallReporter(entry.provider.name, entry.model.name); // telemetry (issue 9)
    for (let attempt = 1; ; attempt += 1) {
      signal.throwIfAborted();
      try {
        const answer = await attemptOnce(entry, providerRequest, signal, onSlot);
        report.end('ok', attempt);
        return { response: toResponse(entry.model, answer), attempts: attempt, startedAt: startedAt ?? Date.now() };
      } catch (error) {
        report.attemptFailed(error);
        // Whatever the provider threw while being cancelled, the caller asked about the cancellation.
        if (signal.aborted) throw report.end('cancelled', attempt, signal.reason);
        if (!isKeelError(error) || !error.retryable) throw report.end('error', attempt, error);
        if (attempt >= maxAttempts) throw report.end('error', attempt, exhausted(entry.model, attempt, error));
        await abortableDelay(retryDelayMs(attempt, error.retryAfterMs, this.#random), signal).catch((e: unknown) => {
          throw report.end('cancelled', attempt, e);
        });
      }
    }
  }

  #entry(name: string): ModelEntry {
    const entry = this.#models.get(name);
    if (entry === undefined) {
      throw new KeelError('model_not_found', `Model ${JSON.stringify(name)} is not configured`, { details: { model: name } });
    }
    return entry;
  }
}

/**
 * Delay before attempt `attempt + 1`: the provider's Retry-After when given (clamped to
 * `RETRY_AFTER_MAX_MS`), else full jitter over `min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2^(attempt-1))`.
 * @example
 * retryDelayMs(2, undefined, Math.random); // somewhere in [0, 200)
 * retryDelayMs(1, 750, Math.random);       // 750
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, random: () => number): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), RETRY_AFTER_MAX_MS);
  const ceilingMs = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** (attempt - 1));
  return Math.floor(random() * ceilingMs);
}

async function attemptOnce(entry: ModelEntry, request: ProviderRequest, signal: AbortSignal, onSlot: () => void): Promise<ProviderResponse> {
  let release: () => void;
  try {
    release = await entry.slots.acquire(signal);
    onSlot();
  } catch (error) {
    if (!(error instanceof SemaphoreFullError)) throw error;
    throw new KeelError('model_unavailable', `Model ${entry.model.name}: too many calls waiting for a slot`, {
      retryable: true,
      cause: error,
    });
  }
  try {
    return await entry.provider.complete(request, signal);
  } finally {
    release();
  }
}

function toResponse(model: ResolvedModel, answer: ProviderResponse): ModelResponse {
  const price = model.definition.price;
  const costUsd =
    price === undefined
      ? 0
      : (answer.inputTokens * price.inputPerMTok + answer.outputTokens * price.outputPerMTok) / TOKENS_PER_MTOK;
  return {
    text: answer.text,
    toolCalls: answer.toolCalls,
    usage: { inputTokens: answer.inputTokens, outputTokens: answer.outputTokens, costUsd },
    model: `${model.name}@${model.version}`,
  };
}

function exhausted(model: ResolvedModel, attempts: number, last: KeelError): KeelError {
  return new KeelError('model_unavailable', `Model ${model.name}@${model.version} failed ${attempts} attempts: ${last.message}`, {
    details: { model: `${model.name}@${model.version}`, attempts },
    cause: last,
  });
}

function entryFor(definition: ModelDefinition, providers: ReadonlyMap<string, ModelProvider>): ModelEntry {
  const provider = providers.get(definition.provider);
  if (provider === undefined) throw configInvalid(`model ${definition.name}: no provider named ${definition.provider}`);
  const maxConcurrency = definition.maxConcurrency ?? MODEL_MAX_CONCURRENCY_DEFAULT;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) {
    throw configInvalid(`model ${definition.name}: maxConcurrency must be a positive integer`);
  }
  const maxAttempts = definition.maxAttempts ?? MODEL_MAX_ATTEMPTS_DEFAULT;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MODEL_MAX_ATTEMPTS_LIMIT) {
    throw configInvalid(`model ${definition.name}: maxAttempts must be an integer in [1, ${MODEL_MAX_ATTEMPTS_LIMIT}]`);
  }
  return {
    model: { name: definition.name, version: definition.version ?? '1', definition },
    provider,
    slots: new Semaphore(maxConcurrency, MODEL_QUEUE_MAX_WAITERS),
  };
}

function configInvalid(message: string): KeelError {
  return new KeelError('config_invalid', message);
}
