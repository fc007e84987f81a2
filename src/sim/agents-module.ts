// The agents module a separately started Keel loads to serve a simulation's agents
// (`keel server|worker|dev --agents <this file>`): `keel sim --workers` starts its server and
// workers with it, and a Keel driven with `keel sim --url` can load it too. It reads the scenario
// from KEEL_SIM_SCENARIO (a file) and t = 0 from KEEL_SIM_START_AT (epoch ms, the instant fault
// windows count from; every process and agent isolate must see the same one), and exports the
// same agents, fake model and fake tools as the embedded simulation.
import { readFileSync } from 'node:fs';
import { parseSimScenario } from './scenario.ts';
import { SIM_SCENARIO_ENV, SIM_START_AT_ENV, simDefinitions } from './sim-agents.ts';

function definitions() {
  const file = process.env[SIM_SCENARIO_ENV];
  if (file === undefined || file === '')
    throw new Error(`${SIM_SCENARIO_ENV} must name the scenario file this Keel simulates`);
  const startAt = Number(process.env[SIM_START_AT_ENV]);
  if (!Number.isSafeInteger(startAt) || startAt <= 0)
    throw new Error(`${SIM_START_AT_ENV} must be t = 0 of the simulation in epoch milliseconds`);
  const scenario = parseSimScenario(JSON.parse(readFileSync(file, 'utf8')), `the scenario ${file}`);
  const { agents, models, tools } = simDefinitions(scenario, startAt);
  return [...agents, ...models, ...tools];
}

export default definitions();
