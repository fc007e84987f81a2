// The model gateway: resolves model names, checks pins and spend budgets before dispatch, calls the
// model (routing, limits, retries, breakers: model-call.ts), falls back to the configured models or
// waits with reason `provider_unavailable` while every breaker is open, prices the answer and
// accounts it per tenant; a tenant's own RPM/TPM and daily budgets come from its record
// (tenant-policy.ts), the models file's tenantLimits fill the gaps. Tiering rules (tiering.ts) may
// route a call to another model first; platform-wide daily caps (platform-caps.ts) hold across all
// tenants. It owns no conversation state,
// never retries a final error, never keeps going after its signal aborts, never logs keys.
import { telemetry } from '../telemetry/telemetry.ts';
import { PoolRegistry } from '../scheduling/pool-registry.ts';
import type { Priority } from '../domain/records.ts';
import type { RunOrder } from '../domain/run-order.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import type {
  ModelDefinition,
  ModelRateLimits,
  ModelRequest,
  ModelResponse,
  RunSpendEstimate,
} from '../sdk/types.ts';
import { BREAKER_DEFAULTS, type BreakerSettings } from './circuit-breaker.ts';
import { SYSTEM_CLOCK, type Clock } from '../domain/clock.ts';
import { LiveDeltas } from './live-deltas.ts';
import { callModel, unavailable, type CallAttributes } from './model-call.ts';
import { buildEntry, configInvalid, type ModelEntry } from './model-entry.ts';
import { prefixFingerprint } from './prefix-fingerprint.ts';
import type { ModelProvider, ProviderResponse, ResolvedModel } from './provider.ts';
import { AnthropicProvider } from './providers/anthropic-provider.ts';
import { MockProvider } from './providers/mock-provider.ts';
import { OpenAiProvider } from './providers/openai-provider.ts';
import { RateLimiter, type RateGate } from './rate-limiter.ts';
import { SharedRateLimiter } from './shared-rate-limiter.ts';
import type { RateWindows } from '../store/rate-windows.ts';
import type { BudgetVerdict, TenantPolicy } from './tenant-policy.ts';
import { RETRY_BUDGET_DEFAULTS, RetryBudget, type RetryBudgetSettings } from './retry-budget.ts';
import { toModelToolSpec } from './tool-spec.ts';
import { UsageLedger } from './usage-ledger.ts';
import type { PlatformCaps } from './platform-caps.ts';
import { forecastSpend, type BudgetLeft, type SpendForecast } from './spend-estimate.ts';
import {
  checkTieringRules,
  decideTier,
  type TieringDecision,
  type TieringRule,
} from './tiering.ts';

export {
  MODEL_MAX_ATTEMPTS_DEFAULT,
  MODEL_MAX_ATTEMPTS_LIMIT,
  MODEL_MAX_CONCURRENCY_DEFAULT,
  MODEL_QUEUE_MAX_WAITERS,
} from './model-entry.ts';
export {
  RETRY_AFTER_MAX_MS,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  retryDelayMs,
} from './retry-policy.ts';

/**
 * Output tokens reserved (and budgeted) when neither the request nor the model sets
 * `maxOutputTokens`.
 */
export const MAX_OUTPUT_TOKENS_DEFAULT = 1_024;
const TOKENS_PER_MTOK = 1_000_000;
/** Codes after which the next configured fallback model is tried. */
const FALLBACK_CODES = new Set([
  'model_unavailable',
  'model_timeout',
  'model_rate_limited',
  'model_response_invalid',
  'provider_unavailable',
]);

const BUILT_IN_MOCK: ModelDefinition = Object.freeze({
  kind: 'keel.model',
  name: 'mock',
  provider: 'mock',
});

export interface ModelCallResult {
  response: ModelResponse;
  /** Provider attempts made, 1 when the first one succeeded (across fallbacks). */
  attempts: number;
  /**
   * When the first attempt got a slot (ms since the epoch): the time before it was spent queued for
   * the model.
   */
  startedAt: number;
  /**
   * Routing decision and estimates, waits and their reasons, fallbacks, the tiering decision:
   * recorded on the effect.
   */
  attributes: CallAttributes & { providerModel?: string; tiering?: TieringDecision };
}

export interface TenantLimits {
  /** Limits for tenants without their own entry. */
  default?: ModelRateLimits;
  tenants?: Record<string, ModelRateLimits>;
}

export interface ModelGatewayOptions {
  /** Providers by `name`; they replace the built-in ones of the same name. */
  providers?: readonly ModelProvider[];
  /** Source of backoff jitter; defaults to `Math.random`. */
  random?: () => number;
  clock?: Clock;
  retryBudget?: Partial<RetryBudgetSettings>;
  breaker?: Partial<BreakerSettings>;
  tenantLimits?: TenantLimits;
  /** Limits per provider account, shared by the models that name it in `account`. */
  accounts?: Record<string, ModelRateLimits>;
  /** Reads an API key from the named environment variable; default none (keys unset). */
  secret?: (envName: string) => string | undefined;
  /**
   * The process's effect pools: every call takes a slot of `model:<name>` (default: a registry of
   * its own).
   */
  pools?: PoolRegistry;
  /**
   * Tenants' own RPM/TPM and daily budgets (their records); its limits win over `tenantLimits`,
   * field by field.
   */
  tenantPolicy?: TenantPolicy;
  /** Ordered tiering rules (the models file's `tiering`); every model they name must be configured. */
  tiering?: readonly TieringRule[];
}

export interface ModelCallOptions {
  signal: AbortSignal;
  tenantId?: string;
  /** The run's priority class, for its place in the model's pool queue (default interactive). */
  priority?: Priority;
  /**
   * The run's admission and deadline, for its place inside its tenant in the model's pool queue
   * (src/domain/run-order.ts); default: the call counts as a run admitted when it queued.
   */
  runOrder?: RunOrder;
  runId?: string;
  /** Journal position of the effect, for live events. */
  seq?: number;
  /**
   * The model version the run is pinned to (`model_version_unavailable` when this process serves
   * another).
   */
  pinnedVersion?: string;
  /** What the run may still spend; checked against the call's estimate before dispatch. */
  remaining?: { tokens?: number; costUsd?: number };
  /**
   * The tiering decision journaled for this call before a crash or a park: applied as it is, never
   * decided again (null: journaled as "no rule applied"). Undefined: decide now.
   */
  decided?: TieringDecision | null;
  /**
   * Hears a fresh tiering decision that changes the model, before the call goes out: the engine
   * journals it, so a resume after a crash calls the same model whatever the budget or backlog.
   */
  onTiered?(decision: TieringDecision): Promise<void>;
  /**
   * Hears each wait of this call before it starts: `provider_unavailable` (every breaker open) or
   * `rate_limited` (with the limit). The engine records it as the run's waiting reason.
   */
  onWait?(reason: 'provider_unavailable' | 'rate_limited', detail: string): void;
  /**
   * The call queues in its model pool (`model:<name>`); returns what to call when it leaves the
   * queue.
   */
  onPoolWait?(pool: string): () => void;
}

export class ModelGateway {
  /** Live `model.delta` events for SSE followers (in-process, not durable). */
  readonly live = new LiveDeltas();
  readonly ledger = new UsageLedger();
  /** This process's limiter (exact for one process; concurrency limits always). */
  readonly limiter: RateLimiter;
  /**
   * What calls reserve through: the limiter, or windows shared by every process once `shareLimits`
   * is called.
   */
  #gate: RateGate;
  readonly #models = new Map<string, ModelEntry>();
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #retryBudget: RetryBudget;
  readonly #tenantLimits: TenantLimits;
  readonly #accounts: Record<string, ModelRateLimits>;
  readonly #pools: PoolRegistry;
  #tenantPolicy: TenantPolicy | undefined;
  #platformCaps: PlatformCaps | undefined;
  readonly #tiering: readonly TieringRule[];

  /**
   * Builds a gateway over `definitions`; the built-in `mock` model is added unless one is named
   * `mock`. Throws `config_invalid` for duplicate names, unknown providers or fallbacks, or
   * out-of-range limits.
   * @example
   * const gateway = new ModelGateway([defineModel({ name: 'planner', provider: 'mock', maxConcurrency: 4 })]);
   */
  constructor(definitions: readonly ModelDefinition[] = [], options: ModelGatewayOptions = {}) {
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.limiter = new RateLimiter(this.#clock);
    this.#gate = this.limiter;
    this.#retryBudget = new RetryBudget(
      { ...RETRY_BUDGET_DEFAULTS, ...options.retryBudget },
      this.#clock,
    );
    this.#tenantLimits = options.tenantLimits ?? {};
    this.#accounts = options.accounts ?? {};
    this.#pools = options.pools ?? new PoolRegistry({ telemetry });
    this.#tenantPolicy = options.tenantPolicy;
    this.#tiering = options.tiering ?? [];
    const providers = new Map<string, ModelProvider>([
      ['mock', new MockProvider()],
      ['openai', new OpenAiProvider()],
      ['anthropic', new AnthropicProvider()],
    ]);
    for (const provider of options.providers ?? []) providers.set(provider.name, provider);
    const seen = new Set<string>();
    for (const definition of definitions) {
      if (seen.has(definition.name))
        throw configInvalid(`model ${definition.name} is defined twice`);
      seen.add(definition.name);
    }
    const all = seen.has(BUILT_IN_MOCK.name) ? definitions : [BUILT_IN_MOCK, ...definitions];
    const deps = {
      providers,
      breaker: { ...BREAKER_DEFAULTS, ...options.breaker },
      clock: this.#clock,
      secret: options.secret ?? (() => undefined),
    };
    for (const definition of all) this.#models.set(definition.name, buildEntry(definition, deps));
    for (const [name, entry] of this.#models) {
      // Pool `model:<name>`: fair across tenants, reloadable; by default as wide as the replicas'
      // slots together.
      this.#pools.setDefaultLimit(
        `model:${name}`,
        entry.replicas.reduce((sum, replica) => sum + replica.slots.permits, 0),
      );
      // telemetry: each replica's own slot queue (behind the model's pool).
      for (const replica of entry.replicas)
        telemetry.registerPool(`model:${name}/${replica.stats.name}`, replica.slots);
    }
    for (const definition of all) {
      if (
        definition.account !== undefined &&
        options.accounts?.[definition.account] === undefined
      ) {
        throw configInvalid(
          `model ${definition.name}: account ${definition.account} has no entry in accounts`,
        );
      }
      for (const fallback of definition.fallbacks ?? []) {
        if (!this.#models.has(fallback) || fallback === definition.name)
          throw configInvalid(
            `model ${definition.name}: fallback ${fallback} is not another configured model`,
          );
      }
    }
    checkTieringRules(this.#tiering, new Set(this.#models.keys()));
  }

  /**
   * Counts RPM/TPM limits in `windows`, shared with every other process using them (distributed
   * mode), instead of per process. Concurrency limits stay per process.
   */
  shareLimits(windows: RateWindows): void {
    this.#gate = new SharedRateLimiter(this.limiter, windows, this.#clock, this.#random);
  }

  /**
   * Plugs in tenants' records (RPM/TPM, daily budgets) once the store is open; wiring only, before
   * calls start.
   */
  useTenantPolicy(policy: TenantPolicy): void {
    this.#tenantPolicy = policy;
  }

  /** Plugs in the platform-wide daily caps once the store is open; wiring only, before calls start. */
  usePlatformCaps(caps: PlatformCaps): void {
    this.#platformCaps = caps;
  }

  /** The platform-wide caps, when configured (for /metrics). */
  get platformCaps(): PlatformCaps | undefined {
    return this.#platformCaps;
  }

  /**
   * The tenant's policy, when one is plugged in (the admin API invalidates its cache on a PATCH).
   */
  get tenantPolicy(): TenantPolicy | undefined {
    return this.#tenantPolicy;
  }

  /**
   * Null while the tenant may spend on models today; else which daily budget is spent (a
   * platform-wide cap first, then the tenant's own) and until when. Checked by the engine before a
   * model call, which then parks the run (`platform_cap_reached`, `tenant_budget_exhausted`)
   * instead of calling.
   */
  async tenantBudget(tenantId: string): Promise<BudgetVerdict | null> {
    const platform = (await this.#platformCaps?.exhausted()) ?? null;
    if (platform !== null) return platform;
    return this.#tenantPolicy === undefined ? null : this.#tenantPolicy.budgetExhausted(tenantId);
  }

  /**
   * Spend admission (src/api/spend-admission.ts): a declared estimate priced with its model's price;
   * null when it names no configured model.
   */
  forecastSpend(estimate: RunSpendEstimate): SpendForecast | null {
    const entry = this.#models.get(estimate.model);
    return entry === undefined ? null : forecastSpend(estimate, entry.model.definition.price);
  }

  /** What the tenant has left today of its daily budgets; null when it has none. */
  async budgetLeft(tenantId: string): Promise<BudgetLeft | null> {
    return this.#tenantPolicy === undefined ? null : this.#tenantPolicy.budgetLeft(tenantId);
  }

  /**
   * The model a call of `request` goes to under the tiering rules, with the rule that chose it;
   * null when no rule applies (or none is configured). Reads the tenant's budget share from its
   * policy's cache and the backlog of this process's pools.
   */
  async decideTier(
    request: ModelRequest,
    tenantId: string | undefined,
  ): Promise<TieringDecision | null> {
    if (this.#tiering.length === 0) return null;
    const budgetRemaining =
      tenantId === undefined || this.#tenantPolicy === undefined
        ? null
        : await this.#tenantPolicy.budgetRemaining(tenantId);
    const decision = decideTier(this.#tiering, request.model, {
      budgetRemaining,
      backlog: (pool) => this.#pools.pool(pool).queued,
      hint: request.hint,
    });
    if (decision !== null) telemetry.modelTiering(decision);
    return decision;
  }

  has(name: string): boolean {
    return this.#models.has(name);
  }

  /** The configured model names. */
  names(): string[] {
    return [...this.#models.keys()];
  }

  /**
   * Resolves a model name to its definition and pinned version; throws `model_not_found` if
   * unknown.
   * @example
   * gateway.resolve('mock'); // { name: 'mock', version: '1', definition: { … } }
   */
  resolve(name: string): ResolvedModel {
    return this.#entry(name).model;
  }

  /** Breaker states per endpoint, retry amplification per model, usage per tenant. */
  stats(): {
    breakers: Record<string, string>;
    providers: ReturnType<UsageLedger['providers']>;
    tenants: ReturnType<UsageLedger['tenants']>;
  } {
    const breakers: Record<string, string> = {};
    for (const entry of this.#models.values())
      for (const replica of entry.replicas) breakers[replica.endpoint.id] = replica.breaker.status;
    return { breakers, providers: this.ledger.providers(), tenants: this.ledger.tenants() };
  }

  /**
   * Calls a model: checks the pin and the spend budget, then calls it (and its fallbacks) with
   * routing, rate limits, retries and breakers, waiting with reason `provider_unavailable` while
   * every endpoint's breaker is open. Rejects with `signal.reason` once `signal` aborts, with a
   * final error as thrown, with `model_unavailable` when attempts or retry budgets ran out, and
   * with `model_timeout` when the whole call outlived `timeouts.callMs`.
   * @example
   * const { response, attempts } = await gateway.call(
   *   { model: 'mock', messages: [{ role: 'user', content: 'hi' }] },
   *   { signal: AbortSignal.timeout(30_000), tenantId: 't1', runId: 'run_1' },
   * );
   */
  async call(asked: ModelRequest, options: ModelCallOptions): Promise<ModelCallResult> {
    this.#entry(asked.model); // model_not_found before anything else
    const capped = (await this.#platformCaps?.exhausted()) ?? null;
    if (capped !== null)
      throw new KeelError('platform_cap_reached', capped.detail, {
        retryable: true,
        retryAfterMs: Math.max(0, capped.until - this.#clock.now()),
        details: { cap: capped.budget, used: capped.used, limit: capped.limit },
      });
    const tiering =
      options.decided !== undefined
        ? options.decided
        : await this.decideTier(asked, options.tenantId);
    if (options.decided === undefined && tiering !== null && tiering.model !== asked.model)
      await options.onTiered?.(tiering);
    const request = tiering === null ? asked : { ...asked, model: tiering.model };
    const first = this.#entry(request.model);
    // A pin names the version of the model asked for; a routed call goes to another model.
    const pinned = request.model === asked.model ? options.pinnedVersion : undefined;
    if (pinned !== undefined && pinned !== first.model.version) {
      throw new KeelError(
        'model_version_unavailable',
        `the run is pinned to ${first.model.name}@${pinned}; this process serves @${first.model.version}`,
        {
          details: {
            model: first.model.name,
            pinned,
            served: first.model.version,
          },
        },
      );
    }
    const chain = [
      first,
      ...(first.model.definition.fallbacks ?? []).map((name) => this.#entry(name)),
    ];
    const deadline = new AbortController();
    const timer = setTimeout(
      () =>
        deadline.abort(
          new KeelError(
            'model_timeout',
            `model call to ${first.model.name} took longer than ${first.callTimeoutMs} ms`,
            { details: { callTimeoutMs: first.callTimeoutMs } },
          ),
        ),
      first.callTimeoutMs,
    );
    const signal = AbortSignal.any([options.signal, deadline.signal]);
    const attributes: ModelCallResult['attributes'] = {
      model: `${first.model.name}@${first.model.version}`,
      attempts: 0,
      waits: [],
      fallbacks: [],
      ...(tiering === null ? {} : { tiering }),
    };
    let startedAt: number | undefined;
    const own =
      options.tenantId === undefined || this.#tenantPolicy === undefined
        ? {}
        : await this.#tenantPolicy.limits(options.tenantId);
    try {
      for (;;) {
        let soonestMs = Number.POSITIVE_INFINITY;
        for (const [index, entry] of chain.entries()) {
          try {
            const answer = await this.#callEntry(
              entry,
              request,
              options,
              signal,
              attributes,
              () => (startedAt ??= Date.now()),
              own,
            );
            return {
              response: this.#price(entry, answer, options.tenantId),
              attempts: attributes.attempts,
              startedAt: startedAt ?? Date.now(),
              attributes,
            };
          } catch (error) {
            if (signal.aborted) throw signal.reason;
            if (!isKeelError(error) || !FALLBACK_CODES.has(error.code)) throw error;
            if (error.code === 'provider_unavailable')
              soonestMs = Math.min(soonestMs, error.retryAfterMs ?? 0);
            else if (index === chain.length - 1) throw error;
            if (index < chain.length - 1)
              attributes.fallbacks.push({ from: entry.model.name, code: error.code });
          }
        }
        // Every model in the chain has all its breakers open: wait in the model queue, not against
        // the provider.
        attributes.waits.push({ reason: 'provider_unavailable', ms: soonestMs });
        options.onWait?.(
          'provider_unavailable',
          `every endpoint of ${chain.map((e) => e.model.name).join(', ')} has an open circuit breaker`,
        );
        await this.#clock.sleep(Math.max(1, soonestMs), signal);
      }
    } catch (error) {
      if (
        deadline.signal.aborted &&
        error === deadline.signal.reason &&
        attributes.waits.some((w) => w.reason === 'provider_unavailable')
      ) {
        throw unavailable(first, 0);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async #callEntry(
    entry: ModelEntry,
    request: ModelRequest,
    options: ModelCallOptions,
    signal: AbortSignal,
    attributes: CallAttributes,
    onSlot: () => void,
    ownLimits: ModelRateLimits,
  ): Promise<ProviderResponse> {
    const tools = (request.tools ?? []).map(toModelToolSpec);
    const points = prefixFingerprint(request.messages, tools);
    const inputTokens = points.at(-1)?.tokens ?? 1;
    const maxOutput = this.#checkBudget(
      entry,
      inputTokens,
      request.maxOutputTokens ?? entry.model.definition.maxOutputTokens,
      options.remaining,
    );
    const stream = entry.model.definition.stream ?? entry.model.definition.provider !== 'mock';
    const onDelta =
      stream && options.runId !== undefined
        ? this.#deltaPublisher(options.runId, options.seq, entry, attributes)
        : undefined;
    const { answer } = await callModel(
      entry,
      {
        request: {
          messages: request.messages,
          tools,
          stream,
          ...(maxOutput.explicit ? { maxOutputTokens: maxOutput.tokens } : {}),
          ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        },
        points,
        reserveTokens: inputTokens + maxOutput.tokens,
        tenantId: options.tenantId,
        priority: options.priority ?? 'interactive',
        runOrder: options.runOrder,
        runId: options.runId,
        signal,
        onDelta,
        onPoolWait: options.onPoolWait,
        onWait: (reason) => options.onWait?.('rate_limited', reason),
        attributes,
        onSlot,
      },
      {
        clock: this.#clock,
        limiter: this.#gate,
        retryBudget: this.#retryBudget,
        ledger: this.ledger,
        random: this.#random,
        pools: this.#pools,
        tenantLimits: (tenantId) => {
          const file = this.#tenantLimits.tenants?.[tenantId] ?? this.#tenantLimits.default;
          return ownLimits.rpm === undefined && ownLimits.tpm === undefined
            ? file
            : { ...file, ...ownLimits };
        },
        accountLimits: (account) => this.#accounts[account] ?? {},
      },
    );
    attributes.model = `${entry.model.name}@${entry.model.version}`;
    if (answer.providerModel !== undefined)
      (attributes as ModelCallResult['attributes']).providerModel = answer.providerModel;
    // The deltas reach followers on other processes before the message commits.
    if (onDelta !== undefined && options.runId !== undefined)
      await this.live.settled(options.runId);
    return answer;
  }

  /**
   * Refuses a call whose smallest possible spend already exceeds what the run has left; caps its
   * output to fit.
   */
  #checkBudget(
    entry: ModelEntry,
    inputTokens: number,
    maxOutputTokens: number | undefined,
    remaining: ModelCallOptions['remaining'],
  ): { tokens: number; explicit: boolean } {
    let tokens = maxOutputTokens ?? MAX_OUTPUT_TOKENS_DEFAULT;
    let explicit = maxOutputTokens !== undefined;
    if (remaining?.tokens !== undefined) {
      if (inputTokens >= remaining.tokens)
        throw budget(
          'maxTokens',
          `the call needs about ${inputTokens} input tokens; the run has ${remaining.tokens} left`,
        );
      if (remaining.tokens - inputTokens < tokens) {
        tokens = remaining.tokens - inputTokens;
        explicit = true;
      }
    }
    const price = entry.model.definition.price;
    if (remaining?.costUsd !== undefined && price !== undefined) {
      const leastUsd =
        (inputTokens *
          Math.min(price.inputPerMTok, price.cachedInputPerMTok ?? price.inputPerMTok)) /
        TOKENS_PER_MTOK;
      if (leastUsd > remaining.costUsd)
        throw budget(
          'maxCostUsd',
          `the call costs at least $${leastUsd.toFixed(6)}; the run has $${remaining.costUsd.toFixed(6)} left`,
        );
    }
    return { tokens, explicit };
  }

  #price(entry: ModelEntry, answer: ProviderResponse, tenantId: string | undefined): ModelResponse {
    const price = entry.model.definition.price;
    const cached = Math.min(answer.cachedInputTokens ?? 0, answer.inputTokens);
    const costUsd =
      price === undefined
        ? 0
        : ((answer.inputTokens - cached) * price.inputPerMTok +
            cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
            answer.outputTokens * price.outputPerMTok) /
          TOKENS_PER_MTOK;
    const usage = {
      inputTokens: answer.inputTokens,
      outputTokens: answer.outputTokens,
      ...(cached > 0 ? { cachedInputTokens: cached } : {}),
      costUsd,
    };
    this.ledger.charge(tenantId ?? '-', {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cachedInputTokens: cached,
      costUsd,
    });
    if (tenantId !== undefined)
      this.#tenantPolicy?.charge(tenantId, usage.inputTokens + usage.outputTokens, costUsd);
    this.#platformCaps?.charge(usage.inputTokens + usage.outputTokens, costUsd);
    return {
      text: answer.text,
      toolCalls: answer.toolCalls,
      usage,
      model: `${entry.model.name}@${entry.model.version}`,
    };
  }

  /**
   * Deltas carry the attempt: a retried (or fallen-back) call streams again from its start, and
   * followers restart.
   */
  #deltaPublisher(
    runId: string,
    seq: number | undefined,
    entry: ModelEntry,
    attributes: CallAttributes,
  ): (text: string) => void {
    let index = 0;
    let attempt = attributes.attempts;
    return (text) => {
      if (attempt !== attributes.attempts) {
        attempt = attributes.attempts;
        index = 0;
      }
      if (this.live.has(runId))
        this.live.publish(runId, {
          type: 'model.delta',
          data: { seq: seq ?? null, model: entry.model.name, attempt, index, text },
        });
      index += 1;
    };
  }

  #entry(name: string): ModelEntry {
    const entry = this.#models.get(name);
    if (entry === undefined) {
      throw new KeelError('model_not_found', `Model ${JSON.stringify(name)} is not configured`, {
        details: { model: name },
      });
    }
    return entry;
  }
}

function budget(which: 'maxTokens' | 'maxCostUsd', message: string): KeelError {
  return new KeelError('budget_exceeded', message, { details: { budget: which } });
}
