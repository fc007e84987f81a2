// When each simulated run is submitted: steady tenants spread their runs evenly over the scenario's
// duration, burst tenants submit all of theirs at one instant. Each run's agent is drawn from the
// mix by share with the scenario's seed, so a scenario always submits the same runs in the same order.
import { seededRandom } from '../models/providers/mock-latency.ts';
import { type SimScenario, tenantRuns } from './scenario.ts';
import { simAgentName } from './sim-agents.ts';

export interface Arrival {
  /** Milliseconds after the scenario's start. */
  atMs: number;
  tenant: string;
  agent: string;
  seq: number;
}

/** Every arrival of `scenario`, ordered by time (ties in tenant order). */
export function arrivals(scenario: SimScenario): Arrival[] {
  const random = seededRandom(scenario.seed ^ 0xa77e);
  const totalShare = scenario.agents.reduce((s, a) => s + a.share, 0);
  const pick = (): string => {
    let x = random() * totalShare;
    for (const mix of scenario.agents) {
      x -= mix.share;
      if (x < 0) return simAgentName(mix);
    }
    return simAgentName(scenario.agents.at(-1)!);
  };
  const list: Arrival[] = [];
  let seq = 0;
  for (const tenant of scenario.tenants) {
    const n = tenantRuns(tenant, scenario.durationSeconds);
    for (let i = 0; i < n; i += 1) {
      const atMs =
        tenant.arrival.kind === 'burst'
          ? tenant.arrival.atSeconds * 1_000
          : (i / tenant.arrival.perSecond) * 1_000;
      list.push({ atMs, tenant: tenant.name, agent: pick(), seq: seq++ });
    }
  }
  return list.sort((a, b) => a.atMs - b.atMs || a.seq - b.seq);
}
