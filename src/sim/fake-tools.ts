// The simulator's fake tools: `sim-tool`, an inline tool that sleeps by a latency model, and
// `sim-browser`, a tool in the scheduling pool `browser` that sleeps by its latency model and fails
// by its failure model (a failure rate, and outage windows counted from the scenario's start). They
// stand in for real work and real Chromium: they never touch the network or start a process.
import { z } from 'zod';
import { abortableDelay } from '../domain/clock.ts';
import {
  activeFault,
  type FaultWindow,
  type LatencyModel,
  sampleLatencyMs,
  seededRandom,
} from '../models/providers/mock-latency.ts';
import { defineTool } from '../sdk/define.ts';
import type { ToolDefinition } from '../sdk/types.ts';
import type { SimScenario } from './scenario.ts';

export const SIM_TOOL = 'sim-tool';
export const SIM_BROWSER_TOOL = 'sim-browser';
/** The scheduling pool the fake browser's executions take slots in (see pool-config.ts). */
export const BROWSER_POOL = 'browser';

const StepInput = z.object({ step: z.number().int().min(0) });

/** A failed simulated browser step: retried by the tool's retry policy like any thrown error. */
export class SimulatedBrowserFailure extends Error {
  override name = 'SimulatedBrowserFailure';
}

interface SleepModel {
  latency: LatencyModel;
  random: () => number;
}

async function sleepFor(model: SleepModel, signal: AbortSignal): Promise<number> {
  const ms = sampleLatencyMs(model.latency, model.random);
  if (ms > 0) await abortableDelay(ms, signal);
  return ms;
}

/** The fake tools of `scenario`, their draws seeded from its seed, windows counted from `startAtMs`. */
export function simTools(
  scenario: SimScenario,
  startAtMs: number,
): ToolDefinition<{ step: number }, { ms: number }>[] {
  const tool = defineTool<{ step: number }, { ms: number }>({
    name: SIM_TOOL,
    description: 'Simulated inline work: sleeps by the scenario latency model',
    effect: 'read',
    input: StepInput,
    run: async (_args, ctx) => ({
      ms: await sleepFor({ latency: scenario.tool.latency, random: toolRandom }, ctx.signal),
    }),
  });
  const toolRandom = seededRandom(scenario.seed ^ 0x7001);
  const browser = scenario.browser;
  if (browser === undefined) return [tool];
  const browserRandom = seededRandom(scenario.seed ^ 0xb405);
  const outages: FaultWindow[] = scenario.faults.flatMap((f) =>
    f.kind === 'browser-outage'
      ? [{ kind: 'outage', fromSeconds: f.fromSeconds, toSeconds: f.toSeconds, share: 1 }]
      : [],
  );
  const fakeBrowser = defineTool<{ step: number }, { ms: number }>({
    name: SIM_BROWSER_TOOL,
    description: 'Simulated browser step: sleeps by a latency model, fails by a failure model',
    effect: 'read',
    input: StepInput,
    pool: BROWSER_POOL,
    maxAttempts: browser.maxAttempts,
    run: async (_args, ctx) => {
      const elapsedSeconds = (Date.now() - startAtMs) / 1_000;
      if (activeFault(outages, elapsedSeconds) !== undefined)
        throw new SimulatedBrowserFailure('simulated browser outage');
      const ms = await sleepFor({ latency: browser.latency, random: browserRandom }, ctx.signal);
      if (browserRandom() < browser.failureRate)
        throw new SimulatedBrowserFailure('simulated browser step failure');
      return { ms };
    },
  });
  return [tool, fakeBrowser];
}
