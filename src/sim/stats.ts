// Small statistics the simulator's report needs: nearest-rank percentiles, means, and Jain's
// fairness index. Pure functions over arrays of numbers.

/** Nearest-rank percentile (p in [0, 100]) of `values`; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((s, v) => s + v, 0) / values.length;
}

/**
 * Jain's fairness index (Σx)² / (n · Σx²): 1 when every x is equal, 1/n when one takes all. An
 * empty list, or all zeros, is fair (1): nobody got less than anyone else.
 * @example
 * jainIndex([1, 1, 1, 1]); // 1
 * jainIndex([1, 0, 0, 0]); // 0.25
 */
export function jainIndex(values: readonly number[]): number {
  if (values.length === 0) return 1;
  const sum = values.reduce((s, v) => s + v, 0);
  const squares = values.reduce((s, v) => s + v * v, 0);
  return squares === 0 ? 1 : (sum * sum) / (values.length * squares);
}

/** Relative error of `measured` against `predicted`, as a signed fraction (NaN when predicted is 0 and measured is not). */
export function relativeError(predicted: number, measured: number): number {
  if (predicted === measured) return 0;
  if (predicted === 0) return Number.NaN;
  return (measured - predicted) / predicted;
}
