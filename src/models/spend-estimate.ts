// Spend admission's arithmetic: what a run is expected to spend on models (its agent's declared
// estimate, priced with the model's price) against what its tenant has left of its daily budgets.
// Pure: the gateway supplies the price, the tenant policy what is left; the API applies the verdict.
// It never refuses a run that has no estimate, nor one whose tenant has no daily budget.
import type { ModelPrice, RunSpendEstimate } from '../sdk/types.ts';

const TOKENS_PER_MTOK = 1_000_000;

export interface SpendForecast {
  tokens: number;
  costUsd: number;
}

export interface BudgetLeft {
  /** Tokens left today; null: no token budget. */
  tokens: number | null;
  /** USD left today; null: no cost budget. */
  costUsd: number | null;
  /** When the budgets renew (ms since the epoch). */
  until: number;
}

/**
 * The run's expected spend: calls × (input + output tokens), priced at the model's rates (0 USD for
 * a model without a price).
 * @example
 * forecastSpend({ model: 'large', modelCalls: 2, inputTokensPerCall: 1_000, outputTokensPerCall: 500 },
 *   { inputPerMTok: 3, outputPerMTok: 15 }); // { tokens: 3000, costUsd: 0.021 }
 */
export function forecastSpend(
  estimate: RunSpendEstimate,
  price: ModelPrice | undefined,
): SpendForecast {
  const calls = estimate.modelCalls;
  const tokens = calls * (estimate.inputTokensPerCall + estimate.outputTokensPerCall);
  const costUsd =
    price === undefined
      ? 0
      : (calls *
          (estimate.inputTokensPerCall * price.inputPerMTok +
            estimate.outputTokensPerCall * price.outputPerMTok)) /
        TOKENS_PER_MTOK;
  return { tokens, costUsd };
}

/**
 * Null when the forecast fits what is left (or nothing is budgeted); else why it does not.
 * @example
 * overBudget({ tokens: 3000, costUsd: 0.02 }, { tokens: 1000, costUsd: null, until }); // 'the run …'
 */
export function overBudget(forecast: SpendForecast, left: BudgetLeft | null): string | null {
  if (left === null) return null;
  if (left.tokens !== null && forecast.tokens > left.tokens)
    return `the run is expected to use ${forecast.tokens} model tokens; the tenant has ${left.tokens} left today (UTC)`;
  if (left.costUsd !== null && forecast.costUsd > left.costUsd)
    return `the run is expected to spend $${forecast.costUsd.toFixed(6)} on models; the tenant has $${left.costUsd.toFixed(6)} left today (UTC)`;
  return null;
}
