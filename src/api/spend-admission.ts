// Spend admission at POST /v1/runs: a run is checked against what its tenant has left of its daily
// budgets (src/models/spend-estimate.ts) when its agent declares a model-spend `estimate`, or, for
// an agent that sets `whenOverBudget` without one, the average spend of its latest successful runs.
// Over it, `whenOverBudget` says whether the run is created parked (`tenant_budget_exhausted`,
// woken when the budget renews or a budget patch raises it) or refused with 429
// `budget_insufficient` before any run exists. Other agents, and tenants without budgets, cost
// nothing here.
import { KeelError } from '../domain/keel-error.ts';
import type { NewRun } from '../domain/records.ts';
import type { AgentDefinition, RunSpendEstimate } from '../sdk/types.ts';
import { overBudget, type BudgetLeft, type SpendForecast } from '../models/spend-estimate.ts';
import type { Store } from '../store/store.ts';

/** Successful runs the rolling average looks back over (the latest, by end). */
export const SPEND_SAMPLE_RUNS = 20;
/** Fewer successful runs than this: no average (no estimate is better than an invented one). */
export const SPEND_SAMPLE_MIN_RUNS = 3;

/** What the API asks the model plane (the gateway satisfies it). */
export interface SpendAdmissionPort {
  /** The declared estimate priced; null when it names no configured model. */
  forecastSpend(estimate: RunSpendEstimate): SpendForecast | null;
  /** What the tenant has left today; null when it has no daily budget. */
  budgetLeft(tenantId: string): Promise<BudgetLeft | null>;
}

/**
 * The park the run is created with, undefined to create it queued, or a thrown
 * `budget_insufficient`.
 * @example
 * const parkOnBudget = await admitBySpend(gateway, store, tenant.id, agent, Date.now());
 */
export async function admitBySpend(
  port: SpendAdmissionPort | undefined,
  store: Pick<Store, 'agentSpendSample'>,
  tenantId: string,
  agent: Pick<AgentDefinition, 'name' | 'estimate' | 'whenOverBudget'>,
  now: number,
): Promise<NewRun['parkOnBudget']> {
  if (port === undefined) return undefined;
  if (agent.estimate === undefined && agent.whenOverBudget === undefined) return undefined;
  const left = await port.budgetLeft(tenantId);
  if (left === null) return undefined;
  const forecast = await forecastOf(port, store, agent);
  if (forecast === null) return undefined;
  const detail = overBudget(forecast.spend, left);
  if (detail === null) return undefined;
  if ((agent.whenOverBudget ?? 'park') === 'park') return { until: left.until, detail };
  throw new KeelError('budget_insufficient', detail, {
    retryable: true,
    retryAfterMs: Math.max(0, left.until - now),
    details: {
      agent: agent.name,
      estimate: forecast.source,
      expectedTokens: forecast.spend.tokens,
      expectedCostUsd: forecast.spend.costUsd,
      tokensLeft: left.tokens,
      costUsdLeft: left.costUsd,
      renewsAt: new Date(left.until).toISOString(),
    },
  });
}

async function forecastOf(
  port: SpendAdmissionPort,
  store: Pick<Store, 'agentSpendSample'>,
  agent: Pick<AgentDefinition, 'name' | 'estimate'>,
): Promise<{ spend: SpendForecast; source: 'declared' | 'recent_runs' } | null> {
  if (agent.estimate !== undefined) {
    const spend = port.forecastSpend(agent.estimate);
    return spend === null ? null : { spend, source: 'declared' };
  }
  const sample = await store.agentSpendSample(agent.name, SPEND_SAMPLE_RUNS);
  if (sample.runs < SPEND_SAMPLE_MIN_RUNS) return null;
  return { spend: { tokens: sample.tokens, costUsd: sample.costUsd }, source: 'recent_runs' };
}
