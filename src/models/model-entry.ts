// Turns a model definition into the gateway's live entry: its provider, and per replica the
// endpoint (URL + key read from the named variable), circuit breaker, router statistics and
// concurrency slots. It validates limits so a bad definition fails at start with `config_invalid`.
// It never logs or returns API keys.
import { KeelError } from '../domain/keel-error.ts';
import { Semaphore } from '../scheduling/semaphore.ts';
import { telemetry } from '../telemetry/telemetry.ts';
import type { ModelDefinition } from '../sdk/types.ts';
import { CircuitBreaker, type BreakerSettings } from './circuit-breaker.ts';
import type { Clock } from '../domain/clock.ts';
import type { ModelProvider, ProviderEndpoint, ResolvedModel } from './provider.ts';
import { ReplicaStats } from './replica-router.ts';

export const MODEL_MAX_CONCURRENCY_DEFAULT = 64;
export const MODEL_MAX_ATTEMPTS_DEFAULT = 3;
/** Upper bound on `maxAttempts`, so a typo cannot turn one call into minutes of retries. */
export const MODEL_MAX_ATTEMPTS_LIMIT = 10;
/** Calls that may queue for one replica's slots before further calls fail fast (retryably). */
export const MODEL_QUEUE_MAX_WAITERS = 10_000;
export const ATTEMPT_TIMEOUT_MS_DEFAULT = 60_000;
export const CALL_TIMEOUT_MS_DEFAULT = 300_000;

export interface ReplicaEntry {
  endpoint: ProviderEndpoint;
  breaker: CircuitBreaker;
  stats: ReplicaStats;
  slots: Semaphore;
}

export interface ModelEntry {
  model: ResolvedModel;
  provider: ModelProvider;
  replicas: ReplicaEntry[];
  maxAttempts: number;
  attemptTimeoutMs: number;
  callTimeoutMs: number;
}

export interface EntryDeps {
  providers: ReadonlyMap<string, ModelProvider>;
  breaker: BreakerSettings;
  clock: Clock;
  /**
   * Reads an API key from the environment variable the config names (config.ts owns the
   * environment).
   */
  secret(envName: string): string | undefined;
}

export function buildEntry(definition: ModelDefinition, deps: EntryDeps): ModelEntry {
  const provider = deps.providers.get(definition.provider);
  if (provider === undefined)
    throw configInvalid(`model ${definition.name}: no provider named ${definition.provider}`);
  const maxConcurrency = definition.maxConcurrency ?? MODEL_MAX_CONCURRENCY_DEFAULT;
  positiveInteger(definition.name, 'maxConcurrency', maxConcurrency);
  const maxAttempts = definition.maxAttempts ?? MODEL_MAX_ATTEMPTS_DEFAULT;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MODEL_MAX_ATTEMPTS_LIMIT) {
    throw configInvalid(
      `model ${definition.name}: maxAttempts must be an integer in [1, ${MODEL_MAX_ATTEMPTS_LIMIT}]`,
    );
  }
  for (const [field, value] of Object.entries(definition.limits ?? {}))
    if (value !== undefined) positiveInteger(definition.name, `limits.${field}`, value);
  const attemptTimeoutMs = definition.timeouts?.attemptMs ?? ATTEMPT_TIMEOUT_MS_DEFAULT;
  const callTimeoutMs = definition.timeouts?.callMs ?? CALL_TIMEOUT_MS_DEFAULT;
  positiveInteger(definition.name, 'timeouts.attemptMs', attemptTimeoutMs);
  positiveInteger(definition.name, 'timeouts.callMs', callTimeoutMs);
  const specs =
    definition.replicas !== undefined && definition.replicas.length > 0
      ? definition.replicas
      : [
          {
            name: 'default',
            baseUrl: definition.baseUrl ?? '',
            estimates: undefined,
            maxConcurrency: undefined,
            apiKeyEnv: undefined,
          },
        ];
  const names = new Set<string>();
  const replicas = specs.map((spec) => {
    if (names.has(spec.name))
      throw configInvalid(`model ${definition.name}: replica ${spec.name} is defined twice`);
    names.add(spec.name);
    const keyEnv = spec.apiKeyEnv ?? definition.apiKeyEnv;
    const slots = spec.maxConcurrency ?? maxConcurrency;
    positiveInteger(definition.name, `replicas.${spec.name}.maxConcurrency`, slots);
    const id = `${definition.name}/${spec.name}`;
    return {
      endpoint: {
        id,
        baseUrl: spec.baseUrl === '' ? undefined : spec.baseUrl,
        apiKey: keyEnv === undefined ? undefined : deps.secret(keyEnv),
        apiKeyEnv: keyEnv,
      },
      breaker: new CircuitBreaker(deps.breaker, deps.clock, (status) =>
        telemetry.breakerState(definition.provider, id, status),
      ),
      stats: new ReplicaStats(spec.name, slots, deps.clock, spec.estimates ?? {}),
      slots: new Semaphore(slots, MODEL_QUEUE_MAX_WAITERS),
    };
  });
  return {
    model: { name: definition.name, version: definition.version ?? '1', definition },
    provider,
    replicas,
    maxAttempts,
    attemptTimeoutMs,
    callTimeoutMs,
  };
}

function positiveInteger(model: string, field: string, value: number): void {
  if (!Number.isInteger(value) || value < 1)
    throw configInvalid(`model ${model}: ${field} must be a positive integer`);
}

export function configInvalid(message: string): KeelError {
  return new KeelError('config_invalid', message);
}
