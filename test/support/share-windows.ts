// The fairness measure, shared by the scheduler's property tests: over every window of `window`
// consecutive dispatches, the share each continuously backlogged tenant got (among those backlogged
// throughout the window) against its weight share. Returns the worst relative error.

export interface DispatchLog {
  /** Tenant served by each dispatch, in order. */
  dispatches: string[];
  /**
   * For each dispatch, the tenants that still had demand beyond their service (queued before and
   * after its claim).
   */
  backlogged: Array<ReadonlySet<string>>;
}

export function worstShareError(
  log: DispatchLog,
  weights: ReadonlyMap<string, number>,
  window: number,
  step = 50,
): number {
  let worst = 0;
  for (let start = 0; start + window <= log.dispatches.length; start += step) {
    const slice = log.dispatches.slice(start, start + window);
    const sets = log.backlogged.slice(start, start + window);
    const always = [...weights.keys()].filter((id) => sets.every((s) => s.has(id)));
    if (always.length < 2) continue;
    const served = always.map((id) => slice.filter((d) => d === id).length);
    const total = served.reduce((a, b) => a + b, 0);
    const weightTotal = always.reduce((a, id) => a + weights.get(id)!, 0);
    always.forEach((id, k) => {
      const expected = weights.get(id)! / weightTotal;
      worst = Math.max(worst, Math.abs(served[k]! / total - expected) / expected);
    });
  }
  return worst;
}
