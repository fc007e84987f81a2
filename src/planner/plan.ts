// Runs a scenario: validates it, computes each section it contains, and returns one typed result in
// which every number carries its unit and the formula that produced it. Asserts that no section
// produced NaN (a planner bug, never a property of the input). No I/O, no formatting beyond each
// section's one-line recommendation.
import assert from 'node:assert/strict';
import { planBurst, type BurstResult } from './burst.ts';
import { planCapacity, type CapacityResult } from './capacity.ts';
import { planCommits, type CommitsResult } from './commits.ts';
import { planPause, type PauseResult } from './pause.ts';
import { planPrewarm, type PrewarmResult } from './prewarm.ts';
import { planQuota, type QuotaResult } from './quota.ts';
import { planRecoveryTree, type RecoveryTreeResult } from './recovery-tree.ts';
import { planRestart, type RestartResult } from './restart.ts';
import { planRouting, type RoutingResult } from './routing.ts';
import { parseScenario, type Scenario } from './scenario.ts';

/**
 * Each section's result; a section is present exactly when the scenario has it (`capacity` always:
 * it needs only `workload`).
 */
export interface PlanSections {
  capacity: CapacityResult;
  pause?: PauseResult;
  prewarm?: PrewarmResult;
  commits?: CommitsResult;
  recoveryTree?: RecoveryTreeResult;
  restart?: RestartResult;
  routing?: RoutingResult;
  burst?: BurstResult;
  quota?: QuotaResult;
}

export type SectionName = keyof PlanSections;

/** The order sections are computed and reported in: the scenario file's order. */
export const SECTION_NAMES = [
  'capacity',
  'pause',
  'prewarm',
  'commits',
  'recoveryTree',
  'restart',
  'routing',
  'burst',
  'quota',
] as const satisfies readonly SectionName[];

export interface PlanResult {
  description: string | undefined;
  /**
   * The headline: the capacity section's recommendation (what saturates first and what to do about
   * it).
   */
  recommendation: string;
  sections: PlanSections;
}

/**
 * Validates `scenario` (again, if it came from parseScenario: a JavaScript caller may pass
 * anything) and computes every section it contains.
 * @throws ScenarioError naming each bad field and why.
 * @example
 * const result = plan({ workload: { arrivalPerSec: 2, roundsPerTask: 8, … }, capacity: { cpuCores: 16, memoryGiB: 64, modelSlots: 32 } });
 * result.sections.capacity.bottleneck; // 'memoryGiB'
 * result.sections.capacity.maxArrivalPerSec?.formula; // 'capacity.memoryGiB ÷ (envHeldSecondsPerTask × env.memoryGiB) = 64 ÷ (…)'
 */
export function plan(scenario: Scenario): PlanResult {
  const s: Scenario = parseScenario(scenario);
  const sections: PlanSections = { capacity: planCapacity(s.workload, s.capacity) };
  if (s.pause !== undefined) sections.pause = planPause(s.pause);
  if (s.prewarm !== undefined) sections.prewarm = planPrewarm(s.prewarm);
  if (s.commits !== undefined) sections.commits = planCommits(s.commits);
  if (s.recoveryTree !== undefined) sections.recoveryTree = planRecoveryTree(s.recoveryTree);
  if (s.restart !== undefined) sections.restart = planRestart(s.restart);
  if (s.routing !== undefined) sections.routing = planRouting(s.routing);
  if (s.burst !== undefined) sections.burst = planBurst(s.burst);
  if (s.quota !== undefined) sections.quota = planQuota(s.quota);
  assertNoNaN(sections, 'sections');
  return { description: s.description, recommendation: sections.capacity.recommendation, sections };
}

function assertNoNaN(value: unknown, path: string): void {
  if (typeof value === 'number') assert.ok(!Number.isNaN(value), `${path} is NaN`);
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) assertNoNaN(v, `${path}.${k}`);
}
