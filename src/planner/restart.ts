// The `restart` section: what a restart leaves behind. Arrivals keep coming while the service
// starts, so a backlog of λ·Tₛ waits at ready, and it drains at the spare rate μ − λ — or never,
// when the service cannot outpace arrivals. Pure arithmetic on the section's own inputs.
import { brief } from './display.ts';
import {
  add,
  chosen,
  div,
  figure,
  greaterThan,
  mul,
  named,
  sub,
  type Figure,
  type Verdict,
} from './formula.ts';
import type { RestartInput } from './scenario.ts';

export interface RestartResult {
  backlogAtReady: Figure;
  /** μ > λ: the service outpaces arrivals, so a backlog shrinks. */
  drains: Verdict;
  /** λ·Tₛ ÷ (μ − λ); Infinity ("never") when μ ≤ λ and anything arrives. */
  drainSeconds: Figure;
  /** From the restart to an empty queue: startup + drain. */
  recoverySeconds: Figure;
  recommendation: string;
}

export function planRestart(input: RestartInput): RestartResult {
  const arrival = named('arrivalPerSec', input.arrivalPerSec);
  const service = named('serviceRatePerSec', input.serviceRatePerSec);
  const startup = named('startupSeconds', input.startupSeconds);
  const backlogAtReady = figure(mul(arrival, startup), 'requests');
  const drains = greaterThan(service, arrival);
  let drainSeconds: Figure;
  if (input.arrivalPerSec === 0) drainSeconds = chosen(0, 's', 'arrivalPerSec = 0: nothing queues');
  else if (!drains.value)
    drainSeconds = chosen(
      Number.POSITIVE_INFINITY,
      's',
      `never: serviceRatePerSec ≤ arrivalPerSec (${service.numbers} ≤ ${arrival.numbers})`,
    );
  else
    drainSeconds = figure(div(named('backlogAtReady', backlogAtReady), sub(service, arrival)), 's');
  const recoverySeconds = figure(add(startup, named('drainSeconds', drainSeconds)), 's');
  const recommendation = !Number.isFinite(drainSeconds.value)
    ? `The queue never drains: serve more than ${brief(input.arrivalPerSec)} requests/s (now ${brief(input.serviceRatePerSec)}) before relying on restarts.`
    : `After a restart ${brief(backlogAtReady.value)} requests wait at ready and drain in ${brief(drainSeconds.value)} s: back to normal ${brief(recoverySeconds.value)} s after the restart.`;
  return { backlogAtReady, drains, drainSeconds, recoverySeconds, recommendation };
}
