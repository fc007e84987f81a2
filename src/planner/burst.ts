// The `burst` section: n calls arriving at once on c cores, served first come first served, each
// taking s seconds. They run in waves of c: call i (from 0) waits floor(i / c)·s. Gives the mean
// and the longest wait and when the last call finishes. Pure arithmetic on the section's own
// inputs.
import { brief } from './display.ts';
import {
  add,
  ceil,
  chosen,
  constant,
  div,
  figure,
  floor,
  max,
  mul,
  named,
  sub,
  type Figure,
} from './formula.ts';
import type { BurstInput } from './scenario.ts';

export interface BurstResult {
  waves: Figure;
  /** Waves that use every core, and the calls left for a last, partial wave. */
  fullWaves: Figure;
  leftOver: Figure;
  meanWaitSeconds: Figure;
  maxWaitSeconds: Figure;
  completionSeconds: Figure;
  recommendation: string;
}

export function planBurst(input: BurstInput): BurstResult {
  const calls = named('calls', input.calls);
  const cores = named('cores', input.cores);
  const perCall = named('secondsPerCall', input.secondsPerCall);
  const waves = figure(ceil(div(calls, cores)), 'waves');
  const fullWaves = figure(floor(div(calls, cores)), 'waves');
  const full = named('fullWaves', fullWaves);
  const leftOver = figure(sub(calls, mul(cores, full)), 'calls');
  const left = named('leftOver', leftOver);
  // Σ floor(i / c) over i < n: each of the q full waves k (0-based) contributes c·k, the partial
  // wave r·q.
  const waitedWaves = add(
    div(mul(cores, full, sub(full, constant(1))), constant(2)),
    mul(left, full),
  );
  const meanWaitSeconds =
    input.calls === 0
      ? chosen(0, 's', 'calls = 0: nobody waits')
      : figure(div(mul(perCall, waitedWaves), calls), 's');
  const maxWaitSeconds = figure(
    mul(max(constant(0), sub(named('waves', waves), constant(1))), perCall),
    's',
  );
  const completionSeconds = figure(mul(named('waves', waves), perCall), 's');
  const recommendation =
    input.calls === 0
      ? 'No calls: nothing waits.'
      : `${input.calls} simultaneous calls on ${input.cores} cores finish after ${brief(completionSeconds.value)} s; the last waits ${brief(maxWaitSeconds.value)} s, the mean ${brief(meanWaitSeconds.value)} s.`;
  return {
    waves,
    fullWaves,
    leftOver,
    meanWaitSeconds,
    maxWaitSeconds,
    completionSeconds,
    recommendation,
  };
}
