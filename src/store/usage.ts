// Per-tenant usage, the store's view: the sums of the committed counters of a tenant's runs. Exact
// and durable by construction (counters commit in the same transaction as each effect); nothing
// here is written separately.

/** Totals over every run of one tenant. */
export interface TenantUsage {
  runs: number;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/**
 * Maps the `tenant-usage` statement's row (numbers, or numeric strings from Postgres) to
 * TenantUsage.
 */
export function toTenantUsage(row: Record<string, unknown>): TenantUsage {
  return {
    runs: Number(row.runs),
    steps: Number(row.steps),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costUsd: Number(row.cost_usd),
  };
}
