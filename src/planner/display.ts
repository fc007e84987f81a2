// How planner numbers read to a person: in recommendation sentences and in report cells. Formatting
// only; formulas carry their own exact digits (formula.ts) and --json carries the raw values.
import type { Unit } from './formula.ts';

/**
 * A number for a sentence: thousands separated; one decimal from 100, three from 1, three
 * significant digits below.
 */
export function brief(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? 'unbounded' : '-unbounded';
  const magnitude = Math.abs(value);
  if (magnitude > 0 && magnitude < 1)
    return value.toLocaleString('en-US', { maximumSignificantDigits: 3 });
  return value.toLocaleString('en-US', { maximumFractionDigits: magnitude >= 100 ? 1 : 3 });
}

/** A ratio as a percentage with one decimal: 0.8534 → `85.3%`. */
export function percent(ratio: number): string {
  return Number.isFinite(ratio) ? `${(ratio * 100).toFixed(1)}%` : '∞%';
}

/**
 * A report cell: the value with its unit; ratios as percentages, probabilities with four decimals,
 * costs bare.
 */
export function cell(value: number, unit: Unit): string {
  if (unit === 'ratio') return percent(value);
  if (value === Number.POSITIVE_INFINITY) return '∞';
  if (unit === 'probability') return value.toFixed(4);
  const text =
    Math.abs(value) < 1 && value !== 0
      ? value.toLocaleString('en-US', { maximumSignificantDigits: 4 })
      : brief(value);
  return unit === 'cost' ? text : `${text} ${unit}`;
}
