// A run's own budgets (maxSteps, maxTokens, maxCostUsd, deadlineMs), checked before each dispatch:
// a run over one stops with `budget_exceeded` naming it. It reads the run's committed counters plus
// the steps in flight, and never commits anything itself (the stop commits the failure).
import { KeelError } from '../domain/keel-error.ts';
import type { RunPort } from './run-port.ts';

export function budgetError(
  budget: 'maxSteps' | 'maxTokens' | 'maxCostUsd' | 'deadlineMs',
  message: string,
): KeelError {
  return new KeelError('budget_exceeded', message, { details: { budget } });
}

/** Stops the run and throws when one more step would pass its maxSteps (steps in flight count). */
export function checkStepBudget(x: RunPort): void {
  const max = x.run.budget.maxSteps;
  if (max !== undefined && x.counters.steps + x.inflightSteps >= max) {
    const error = budgetError('maxSteps', `the run reached its budget of ${max} steps`);
    x.stop({ kind: 'fail', error });
    throw error;
  }
}

/** Stops the run and throws when it has used its maxTokens or spent its maxCostUsd. */
export function checkSpendBudget(x: RunPort): void {
  const { maxTokens, maxCostUsd } = x.run.budget;
  const tokens = x.counters.inputTokens + x.counters.outputTokens;
  let error: KeelError | undefined;
  if (maxTokens !== undefined && tokens >= maxTokens)
    error = budgetError('maxTokens', `the run used ${tokens} of its ${maxTokens} tokens`);
  if (maxCostUsd !== undefined && x.counters.costUsd >= maxCostUsd)
    error = budgetError(
      'maxCostUsd',
      `the run spent $${x.counters.costUsd.toFixed(6)} of its $${maxCostUsd}`,
    );
  if (error !== undefined) {
    x.stop({ kind: 'fail', error });
    throw error;
  }
}

/**
 * What is left of the run's token and cost budgets (the model gateway refuses a call that cannot
 * fit).
 */
export function remainingSpend(x: RunPort): { tokens?: number; costUsd?: number } {
  const { maxTokens, maxCostUsd } = x.run.budget;
  return {
    ...(maxTokens === undefined
      ? {}
      : { tokens: maxTokens - x.counters.inputTokens - x.counters.outputTokens }),
    ...(maxCostUsd === undefined ? {} : { costUsd: maxCostUsd - x.counters.costUsd }),
  };
}
