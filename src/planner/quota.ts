// The `quota` section: a provider's limits against the load of the active runs. Each run makes
// callsPerRun calls per window; Little's law gives the calls in flight. The limit with the highest
// use binds, and the number of runs each limit admits follows from the use of one run. Pure
// arithmetic on the section's own inputs.
import { brief, percent } from './display.ts';
import {
  chosen,
  constant,
  div,
  figure,
  floor,
  mul,
  named,
  type Expr,
  type Figure,
} from './formula.ts';
import type { QuotaInput } from './scenario.ts';

export const QUOTA_LIMITS = ['rpmLimit', 'tpmLimit', 'concurrencyLimit'] as const;
export type QuotaLimit = (typeof QUOTA_LIMITS)[number];
const SECONDS_PER_MINUTE = 60;

export interface LimitUse {
  used: Figure;
  limit: Figure;
  utilization: Figure;
  /** The most active runs this limit admits. */
  maxActiveRuns: Figure;
}

export interface QuotaResult {
  requestsPerSec: Figure;
  requestsPerMin: Figure;
  callsInFlight: Figure;
  tokensPerMin: Figure;
  limits: Record<QuotaLimit, LimitUse>;
  /**
   * The limit with the highest utilization (the earlier on a tie); null when no run uses anything.
   */
  binding: QuotaLimit | null;
  recommendation: string;
}

export function planQuota(input: QuotaInput): QuotaResult {
  const runs = named('activeRuns', input.activeRuns);
  const perMinute = constant(SECONDS_PER_MINUTE);
  // One run's use of each limit, so the runs a limit admits is defined even with no active runs.
  const perRunRequestsPerSec = div(
    named('callsPerRun', input.callsPerRun),
    named('windowSeconds', input.windowSeconds),
  );
  const perRun: Record<QuotaLimit, Expr> = {
    rpmLimit: mul(perRunRequestsPerSec, perMinute),
    tpmLimit: mul(perRunRequestsPerSec, perMinute, named('tokensPerCall', input.tokensPerCall)),
    concurrencyLimit: mul(perRunRequestsPerSec, named('secondsPerCall', input.secondsPerCall)),
  };
  const requestsPerSec = figure(mul(runs, perRunRequestsPerSec), 'requests/s');
  const requestsPerMin = figure(
    mul(named('requestsPerSec', requestsPerSec), perMinute),
    'requests/min',
  );
  const callsInFlight = figure(
    mul(named('requestsPerSec', requestsPerSec), named('secondsPerCall', input.secondsPerCall)),
    'calls',
  );
  const tokensPerMin = figure(
    mul(named('requestsPerMin', requestsPerMin), named('tokensPerCall', input.tokensPerCall)),
    'tokens/min',
  );
  const used: Record<QuotaLimit, Figure> = {
    rpmLimit: requestsPerMin,
    tpmLimit: tokensPerMin,
    concurrencyLimit: callsInFlight,
  };
  const usedName: Record<QuotaLimit, string> = {
    rpmLimit: 'requestsPerMin',
    tpmLimit: 'tokensPerMin',
    concurrencyLimit: 'callsInFlight',
  };
  const one = (l: QuotaLimit): LimitUse => {
    const limit = named(l, input[l]);
    const admits =
      perRun[l].value === 0
        ? chosen(Number.POSITIVE_INFINITY, 'runs', `a run uses none of ${l}: unbounded`)
        : figure(floor(div(limit, perRun[l])), 'runs');
    return {
      used: used[l],
      limit: figure(limit, used[l].unit),
      utilization: figure(div(named(usedName[l], used[l]), limit), 'ratio'),
      maxActiveRuns: admits,
    };
  };
  const limits = {
    rpmLimit: one('rpmLimit'),
    tpmLimit: one('tpmLimit'),
    concurrencyLimit: one('concurrencyLimit'),
  };
  let binding: QuotaLimit | null = null;
  let highest = 0;
  for (const l of QUOTA_LIMITS) {
    const load = perRun[l].value / input[l];
    if (load > highest) [binding, highest] = [l, load];
  }
  const result = { requestsPerSec, requestsPerMin, callsInFlight, tokensPerMin, limits, binding };
  return { ...result, recommendation: recommend(input, result) };
}

function recommend(input: QuotaInput, r: Omit<QuotaResult, 'recommendation'>): string {
  if (r.binding === null) return 'The runs make no calls: no limit binds.';
  const use = r.limits[r.binding];
  const verdict =
    use.utilization.value > 1
      ? `is exceeded (${percent(use.utilization.value)})`
      : `binds first (${percent(use.utilization.value)} used)`;
  return `${r.binding} ${verdict}: it admits ${brief(use.maxActiveRuns.value)} active runs against ${brief(input.activeRuns)} planned.`;
}
