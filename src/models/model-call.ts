// One logical call against one model: route to a replica, reserve rate-limit capacity, take a slot,
// make the attempt under its timeout, and retry retryable failures with backoff while the attempt
// cap and the retry budgets allow. Breakers and router statistics hear every outcome. It never
// falls back to another model (the gateway does) and never sleeps except through the clock, so an
// aborted call stops at once.
import { modelCallReporter } from '../telemetry/model-calls.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import { SemaphoreFullError } from '../scheduling/semaphore.ts';
import { POOL_SYSTEM_TENANT, type PoolRegistry } from '../scheduling/pool-registry.ts';
import type { Priority } from '../domain/records.ts';
import type { RunOrder } from '../domain/run-order.ts';
import type { ModelRateLimits } from '../sdk/types.ts';
import type { Clock } from '../domain/clock.ts';
import type { ModelEntry, ReplicaEntry } from './model-entry.ts';
import type { PrefixPoint } from './prefix-fingerprint.ts';
import type { ProviderRequest, ProviderResponse } from './provider.ts';
import type { RateGate } from './rate-limiter.ts';
import { route, type RouteDecision } from './replica-router.ts';
import type { RetryBudget } from './retry-budget.ts';
import { retryDelayMs } from './retry-policy.ts';
import type { UsageLedger } from './usage-ledger.ts';

/** What the effect's attributes record about one call (routing decision, waits, attempts). */
export interface CallAttributes {
  model: string;
  attempts: number;
  route?: RouteDecision;
  waits: Array<{ reason: string; ms: number | null }>;
  fallbacks: Array<{ from: string; code: string }>;
  retryDenied?: string;
}

export interface CallDeps {
  clock: Clock;
  limiter: RateGate;
  retryBudget: RetryBudget;
  ledger: UsageLedger;
  random: () => number;
  /** Pool `model:<name>`: fair across tenants, in front of the replica slots. */
  pools: PoolRegistry;
  tenantLimits(tenantId: string): ModelRateLimits | undefined;
  accountLimits(account: string): ModelRateLimits;
}

export interface CallInput {
  request: Omit<ProviderRequest, 'model' | 'endpoint'>;
  points: PrefixPoint[];
  /** Tokens to reserve: estimated input + max output. */
  reserveTokens: number;
  tenantId: string | undefined;
  priority: Priority;
  /** The run's order in the pool queue (run-order.ts); undefined for a call of no run. */
  runOrder: RunOrder | undefined;
  runId: string | undefined;
  signal: AbortSignal;
  onDelta: ((text: string) => void) | undefined;
  onWait: (reason: string, ms: number | undefined) => void;
  attributes: CallAttributes;
  /** Set when the first attempt gets a slot. */
  onSlot(): void;
  /**
   * The call queues in its pool (`model:<name>`); returns what to call when it leaves the queue.
   */
  onPoolWait: ((pool: string) => () => void) | undefined;
}

export interface AttemptOutcome {
  answer: ProviderResponse;
  replica: ReplicaEntry;
}

/**
 * Codes that say something about the endpoint's health (the breaker counts them); 429 and 4xx do
 * not.
 */
const ENDPOINT_FAILURE_CODES = new Set([
  'model_unavailable',
  'model_timeout',
  'model_response_invalid',
]);

export async function callModel(
  entry: ModelEntry,
  input: CallInput,
  deps: CallDeps,
): Promise<AttemptOutcome> {
  const provider = entry.model.name;
  // The retry budget protects a provider account: models sharing one share its budget.
  const budgetKey =
    entry.model.definition.account === undefined
      ? `model:${provider}`
      : `account:${entry.model.definition.account}`;
  deps.retryBudget.firstAttempt(budgetKey);
  deps.ledger.logicalCall(provider);
  const report = modelCallReporter(entry.model.definition.provider, provider);
  for (let attempt = 1; ; attempt += 1) {
    input.signal.throwIfAborted();
    try {
      const outcome = await attemptOnce(entry, input, deps);
      report.end('ok', attempt);
      return outcome;
    } catch (error) {
      report.attemptFailed(error);
      if (input.signal.aborted) throw report.end('cancelled', attempt, input.signal.reason);
      if (!isKeelError(error) || !error.retryable) throw report.end('error', attempt, error);
      if (error.code === 'provider_unavailable') throw report.end('error', attempt, error);
      if (attempt >= entry.maxAttempts)
        throw report.end('error', attempt, exhausted(entry, attempt, error, 'attempts'));
      const verdict = deps.retryBudget.tryRetry(budgetKey, input.runId);
      if (!verdict.allowed) {
        deps.ledger.retryDenied(provider);
        input.attributes.retryDenied = verdict.reason;
        throw report.end('error', attempt, exhausted(entry, attempt, error, verdict.reason));
      }
      const delay = retryDelayMs(attempt, error.retryAfterMs, deps.random);
      input.attributes.waits.push({
        reason: error.retryAfterMs === undefined ? 'backoff' : 'retry_after',
        ms: delay,
      });
      await deps.clock.sleep(delay, input.signal).catch((e: unknown) => {
        throw report.end('cancelled', attempt, e);
      });
    }
  }
}

async function attemptOnce(
  entry: ModelEntry,
  input: CallInput,
  deps: CallDeps,
): Promise<AttemptOutcome> {
  const replica = choose(entry, input);
  const keys = [{ key: `model:${entry.model.name}`, limits: entry.model.definition.limits ?? {} }];
  const account = entry.model.definition.account;
  if (account !== undefined)
    keys.push({ key: `account:${account}`, limits: deps.accountLimits(account) });
  const tenantLimits = input.tenantId === undefined ? undefined : deps.tenantLimits(input.tenantId);
  if (tenantLimits !== undefined)
    keys.push({ key: `tenant:${input.tenantId}`, limits: tenantLimits });
  const waitStart = deps.clock.now();
  let waited: string | undefined;
  const reservation = await deps.limiter.reserve(
    keys,
    input.reserveTokens,
    input.signal,
    (reason, ms) => {
      if (waited === undefined) input.onWait(`rate_limited: ${reason}`, ms);
      waited = reason;
    },
  );
  if (waited !== undefined)
    input.attributes.waits.push({
      reason: `rate_limited: ${waited}`,
      ms: deps.clock.now() - waitStart,
    });
  // The model's pool: after the rate limits (a rate-limited tenant holds no slot), before the
  // breaker probe.
  let releasePool: () => void;
  const pool = `model:${entry.model.name}`;
  let left: (() => void) | undefined;
  try {
    releasePool = await deps.pools.acquire(pool, {
      tenantId: input.tenantId ?? POOL_SYSTEM_TENANT,
      priority: input.priority,
      ...(input.runOrder === undefined ? {} : { run: input.runOrder }),
      signal: input.signal,
      onQueued: () => (left = input.onPoolWait?.(pool)),
    });
  } catch (error) {
    reservation.settle(0);
    throw error;
  } finally {
    left?.();
  }
  let usedTokens = 0;
  const admission = replica.breaker.admit();
  if (!admission.admitted) {
    releasePool();
    reservation.settle(0);
    throw unavailable(entry, admission.retryInMs);
  }
  let release: () => void = () => {};
  let sentAt = 0;
  let sent = false;
  replica.stats.queued += 1;
  try {
    release = await acquire(replica, input.signal, entry);
    replica.stats.queued -= 1;
    replica.stats.inFlight += 1;
    input.onSlot();
    deps.ledger.attempt(entry.model.name);
    input.attributes.attempts += 1;
    // Durations are measured, not simulated: the injected clock paces waits, performance.now()
    // times the provider.
    sentAt = performance.now();
    sent = true;
    const answer = await withTimeout(entry.attemptTimeoutMs, input.signal, (signal) =>
      entry.provider.complete(
        { ...input.request, model: entry.model, endpoint: replica.endpoint },
        signal,
        input.onDelta === undefined ? {} : { onDelta: input.onDelta },
      ),
    );
    usedTokens = answer.inputTokens + answer.outputTokens;
    replica.breaker.succeeded(admission.probe);
    replica.stats.observe({
      serviceMs: performance.now() - sentAt,
      firstTokenMs: answer.firstTokenMs,
      inputTokens: answer.inputTokens,
      cachedInputTokens: answer.cachedInputTokens ?? 0,
    });
    replica.stats.remember(input.points);
    return { answer, replica };
  } catch (error) {
    if (!sent) replica.stats.queued -= 1;
    if (input.signal.aborted || !isKeelError(error)) replica.breaker.released(admission.probe);
    else if (ENDPOINT_FAILURE_CODES.has(error.code)) replica.breaker.failed(admission.probe);
    // A 4xx or a 429 proves the endpoint answers: a probe that gets one closes the breaker.
    else replica.breaker.succeeded(admission.probe);
    throw error;
  } finally {
    if (sent) replica.stats.inFlight -= 1;
    release();
    releasePool();
    reservation.settle(usedTokens);
  }
}

function choose(entry: ModelEntry, input: CallInput): ReplicaEntry {
  const open = entry.replicas.filter((replica) => replica.breaker.wouldAdmit());
  if (open.length === 0)
    throw unavailable(entry, Math.min(...entry.replicas.map((r) => r.breaker.retryInMs())));
  if (entry.replicas.length === 1) return open[0]!;
  const decision = route(
    open.map((r) => r.stats),
    input.points,
  )!;
  input.attributes.route = decision;
  return open.find((r) => r.stats.name === decision.chosen)!;
}

async function acquire(
  replica: ReplicaEntry,
  signal: AbortSignal,
  entry: ModelEntry,
): Promise<() => void> {
  try {
    return await replica.slots.acquire(signal);
  } catch (error) {
    if (!(error instanceof SemaphoreFullError)) throw error;
    throw new KeelError(
      'model_unavailable',
      `Model ${entry.model.name}: too many calls waiting for a slot`,
      { retryable: true, cause: error },
    );
  }
}

/**
 * Runs `work` under its own signal that aborts with a retryable `model_timeout` after `ms` (or when
 * `parent` aborts).
 */
async function withTimeout<T>(
  ms: number,
  parent: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  // A listener added to an already aborted signal never fires: check first, or the attempt would
  // run to its timeout.
  parent.throwIfAborted();
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(
        new KeelError('model_timeout', `a model attempt took longer than ${ms} ms`, {
          retryable: true,
          details: { attemptTimeoutMs: ms },
        }),
      ),
    ms,
  );
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted && !parent.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    parent.removeEventListener('abort', onAbort);
  }
}

export function unavailable(entry: ModelEntry, retryInMs: number): KeelError {
  return new KeelError(
    'provider_unavailable',
    `every endpoint of model ${entry.model.name} has an open circuit breaker`,
    {
      retryable: true,
      retryAfterMs: retryInMs,
      details: { model: entry.model.name },
    },
  );
}

function exhausted(
  entry: ModelEntry,
  attempts: number,
  last: KeelError,
  reason: string,
): KeelError {
  const name = `${entry.model.name}@${entry.model.version}`;
  return new KeelError(
    'model_unavailable',
    `Model ${name} failed ${attempts} attempt(s) (${reason}): ${last.message}`,
    {
      details: { model: name, attempts, reason, lastCode: last.code },
      cause: last,
    },
  );
}
