// One simulation from start to end: opens the target, drives the scenario's arrivals, reads back
// what Keel recorded, and closes the target whatever happened. Returns the raw timings; metrics.ts
// and the report turn them into figures.
import { arrivals } from './arrivals.ts';
import { collect, type RunTiming } from './collect.ts';
import { drive, type Progress } from './driver.ts';
import type { SimScenario } from './scenario.ts';
import { type LoadSample, startSampler } from './sampler.ts';
import { openTarget, type SimTargetOptions } from './target.ts';

/**
 * Time allowed between starting the target and the scenario's first instant (t = 0): an embedded
 * Keel, and a server with its workers (separate processes, a migration, agent isolates).
 */
const SETUP_ALLOWANCE_MS = 2_000;
const CLUSTER_SETUP_ALLOWANCE_MS = 15_000;

export interface SimulationResult {
  scenario: SimScenario;
  target: string;
  startedAt: string;
  /** Runs the scenario planned; `runs` holds those Keel accepted. */
  planned: number;
  runs: RunTiming[];
  submitErrors: string[];
  drained: boolean;
  /** Seconds from t = 0 to the last run's end (or the drain deadline). */
  wallSeconds: number;
  /** The Keel processes' memory, CPU, pools and live runs, once a second (empty: not readable). */
  load: LoadSample[];
}

export async function simulate(
  scenario: SimScenario,
  target: SimTargetOptions,
  onProgress: (p: Progress) => void = () => {},
): Promise<SimulationResult> {
  const plan = arrivals(scenario);
  const opening = Date.now();
  // Fault windows count from t = 0, fixed before Keel starts (the fake model's options are frozen
  // into its definition); the driver waits for that instant before the first arrival.
  const startAtMs =
    opening + ((target.workers ?? 0) > 0 ? CLUSTER_SETUP_ALLOWANCE_MS : SETUP_ALLOWANCE_MS);
  const opened = await openTarget(scenario, startAtMs, target);
  try {
    const sampler = startSampler(opened.metrics, startAtMs);
    const driven = await drive(scenario, opened.clients, plan, startAtMs, onProgress).catch(
      async (error: unknown) => {
        await sampler.stop();
        throw error;
      },
    );
    const load = await sampler.stop();
    const runs = await collect(driven.runs, opened.clients, startAtMs);
    return {
      scenario,
      target: opened.label,
      startedAt: new Date(startAtMs).toISOString(),
      planned: plan.length,
      runs,
      submitErrors: driven.submitErrors,
      drained: driven.drained,
      wallSeconds: (driven.endedAtMs - startAtMs) / 1_000,
      load,
    };
  } finally {
    await opened.close();
  }
}
