// Accounting kept by the gateway: logical calls and attempts per provider (retry amplification =
// attempts ÷ logical calls), and tokens and cost per tenant. In memory and per process, for
// metrics; per-run tokens and cost are committed on the run's counters by the engine. It never sees
// prompts or keys, only counts.

export interface ProviderCounts {
  logicalCalls: number;
  attempts: number;
  retriesDenied: number;
}

export interface TenantUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costUsd: number;
}

export class UsageLedger {
  readonly #providers = new Map<string, ProviderCounts>();
  readonly #tenants = new Map<string, TenantUsage>();

  logicalCall(provider: string): void {
    this.#provider(provider).logicalCalls += 1;
  }

  attempt(provider: string): void {
    this.#provider(provider).attempts += 1;
  }

  retryDenied(provider: string): void {
    this.#provider(provider).retriesDenied += 1;
  }

  charge(
    tenant: string,
    usage: {
      inputTokens: number;
      outputTokens: number;
      cachedInputTokens: number;
      costUsd: number;
    },
  ): void {
    let row = this.#tenants.get(tenant);
    if (row === undefined) {
      row = { calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0 };
      this.#tenants.set(tenant, row);
    }
    row.calls += 1;
    row.inputTokens += usage.inputTokens;
    row.outputTokens += usage.outputTokens;
    row.cachedInputTokens += usage.cachedInputTokens;
    row.costUsd += usage.costUsd;
  }

  /** Attempts ÷ logical calls for `provider` (1 when nothing failed; 0 before any call). */
  amplification(provider: string): number {
    const row = this.#providers.get(provider);
    return row === undefined || row.logicalCalls === 0 ? 0 : row.attempts / row.logicalCalls;
  }

  providers(): Record<string, ProviderCounts & { amplification: number }> {
    return Object.fromEntries(
      [...this.#providers].map(([name, row]) => [
        name,
        { ...row, amplification: this.amplification(name) },
      ]),
    );
  }

  tenants(): Record<string, TenantUsage> {
    return Object.fromEntries([...this.#tenants].map(([name, row]) => [name, { ...row }]));
  }

  #provider(name: string): ProviderCounts {
    let row = this.#providers.get(name);
    if (row === undefined) {
      row = { logicalCalls: 0, attempts: 0, retriesDenied: 0 };
      this.#providers.set(name, row);
    }
    return row;
  }
}
