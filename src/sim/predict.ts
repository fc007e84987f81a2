// The capacity planner's prediction for a simulation scenario: the scenario's inputs translated
// into a planner scenario (workload, capacity, burst) and planned with the same code as `keel plan`.
// Where the planner has no input for a figure (retries, cost), the estimate is the simulator's own
// closed form over the same inputs, and says so in its `source`.
import { meanLatencyMs } from '../models/providers/mock-latency.ts';
import { INLINE_POOL_LIMIT_DEFAULT } from '../scheduling/pool-registry.ts';
import { plan, type PlanResult } from '../planner/plan.ts';
import type { Scenario } from '../planner/scenario.ts';
import { type SimScenario, tenantRuns } from './scenario.ts';

/** Characters per token of the mock model's estimate (mock-provider.ts). */
const CHARS_PER_TOKEN = 4;

export interface Predictions {
  plannerScenario: Scenario;
  planned: PlanResult;
  /** Runs per second the scenario offers and the planner says it sustains. */
  arrivalPerSec: number;
  throughputPerSec: number;
  /** Mean seconds one run takes end to end, without queueing. */
  runSeconds: number;
  /** Burst only: seconds until the last of the burst's first model calls starts, and the mean. */
  firstCallMaxWaitSeconds: number;
  firstCallMeanWaitSeconds: number;
  /** Mean execution seconds of one step per stage. */
  execSeconds: Record<'model' | 'tool' | 'browser' | 'input', number>;
  jainIndex: number;
  retryAmplification: number;
  envGiBSeconds: number;
  costPerSuccessUsd: number;
}

/** Mean of the mix's per-run quantities, weighted by share. */
function mixMean(s: SimScenario, f: (a: SimScenario['agents'][number]) => number): number {
  const total = s.agents.reduce((sum, a) => sum + a.share, 0);
  return s.agents.reduce((sum, a) => sum + f(a) * a.share, 0) / total;
}

/** The model's mean latency over the scenario, a slowdown averaged over the arrival window. */
function modelMeanSeconds(s: SimScenario): number {
  const base = meanLatencyMs(s.model.latency) / 1_000;
  const slow = s.faults.find((f) => f.kind === 'model-slowdown');
  if (slow === undefined) return base;
  const T = s.durationSeconds;
  const scaleAt = (t: number) =>
    t <= slow.fromSeconds
      ? 1
      : t >= slow.toSeconds
        ? slow.toScale
        : 1 + ((slow.toScale - 1) * (t - slow.fromSeconds)) / (slow.toSeconds - slow.fromSeconds);
  const steps = 100;
  let sum = 0;
  for (let i = 0; i < steps; i += 1) sum += scaleAt(((i + 0.5) / steps) * T);
  return base * (sum / steps);
}

export function predict(s: SimScenario): Predictions {
  const runs = s.tenants.reduce((n, t) => n + tenantRuns(t, s.durationSeconds), 0);
  const burstRuns = s.tenants.reduce(
    (n, t) => n + (t.arrival.kind === 'burst' ? t.arrival.runs : 0),
    0,
  );
  const arrivalPerSec = runs / s.durationSeconds;
  const model = modelMeanSeconds(s);
  const tool = meanLatencyMs(s.tool.latency) / 1_000;
  const browser = s.browser === undefined ? 0 : meanLatencyMs(s.browser.latency) / 1_000;
  const rounds = mixMean(s, (a) => a.rounds);
  const perRoundOther =
    mixMean(
      s,
      (a) => (a.toolCalls * tool + a.browserSteps * browser + a.inputWaitMs / 1_000) * a.rounds,
    ) / rounds;
  const plannerScenario: Scenario = {
    description: `keel sim ${s.name}`,
    workload: {
      arrivalPerSec,
      roundsPerTask: rounds,
      modelSecondsPerRound: (mixMean(s, (a) => a.modelCalls * a.rounds) / rounds) * model,
      // Tool time here is wall time outside the model (tools, browser steps, waits): the fake tools
      // sleep, so they hold pool slots, not cores; `cpuCores` below is those slots.
      toolSecondsPerRound: perRoundOther,
      env: {
        memoryGiB: 0,
        policy: 'resident',
        prepSeconds: 0,
        prepCpuSeconds: 0,
        pauseSecondsPerGiB: 0,
        resumeSecondsPerGiB: 0,
      },
    },
    capacity: {
      // Waits hold nothing and fake tools only sleep: the ceiling on "tool" time is the inline
      // pool's slots, not the browser pool (whose queueing the planner does not model).
      cpuCores: INLINE_POOL_LIMIT_DEFAULT,
      memoryGiB: s.capacity.memoryGiB,
      modelSlots: s.model.maxConcurrency,
    },
    ...(burstRuns > 0
      ? { burst: { calls: burstRuns, secondsPerCall: model, cores: s.model.maxConcurrency } }
      : {}),
  };
  const planned = plan(plannerScenario);
  const capacity = planned.sections.capacity;
  const maxArrival = capacity.maxArrivalPerSec?.value ?? Number.POSITIVE_INFINITY;
  const burst = planned.sections.burst;
  const retryAmplification = expectedAttempts(s, model);
  const tokensPerCall = Math.ceil('run 0 round 0 call 0'.length / CHARS_PER_TOKEN);
  const costPerCall =
    (tokensPerCall * (s.model.price.inputPerMTok + s.model.price.outputPerMTok)) / 1e6;
  return {
    plannerScenario,
    planned,
    arrivalPerSec,
    // A burst drains at the ceiling, but never faster than one run takes (mean-value: the slowest
    // run's tail is not modelled, so a burst far below the ceiling ends later than this).
    throughputPerSec:
      burstRuns === runs
        ? runs / Math.max(runs / maxArrival, capacity.taskSeconds.value)
        : Math.min(arrivalPerSec, maxArrival),
    runSeconds: capacity.taskSeconds.value,
    firstCallMaxWaitSeconds: burst?.maxWaitSeconds.value ?? 0,
    firstCallMeanWaitSeconds: burst?.meanWaitSeconds.value ?? 0,
    execSeconds: {
      model,
      tool,
      browser,
      // Per wait, over the agents that wait (a mean over all agents would count the others as 0 s).
      input:
        mixMean(s, (a) => a.inputWaitMs * a.rounds) /
        Math.max(
          mixMean(s, (a) => (a.inputWaitMs > 0 ? a.rounds : 0)),
          1e-12,
        ) /
        1_000,
    },
    // Weighted fair queuing gives each tenant the same stretch: equal normalised service.
    jainIndex: 1,
    retryAmplification,
    envGiBSeconds: capacity.envGiBSecondsPerTask.value * runs,
    costPerSuccessUsd: costPerCall * mixMean(s, (a) => a.modelCalls * a.rounds),
  };
}

/**
 * Attempts per model call (simulator's estimate; the planner has no retry input): calls arriving
 * in a fault window of length w retry until it closes, about w / (2 · retry delay) extra attempts
 * each, plus the browser's failure rate as a geometric series.
 */
function expectedAttempts(s: SimScenario, modelSeconds: number): number {
  const T = Math.max(s.durationSeconds, modelSeconds);
  let extra = 0;
  for (const f of s.faults) {
    if (f.kind !== 'model-outage' && f.kind !== 'model-rate-limit') continue;
    const w = Math.min(f.toSeconds, T) - Math.min(f.fromSeconds, T);
    const delay = f.kind === 'model-rate-limit' ? Math.max(f.retryAfterMs / 1_000, 0.1) : 1;
    const retries = Math.min(s.model.maxAttempts - 1, w / (2 * delay));
    extra += (w / T) * retries * (f.kind === 'model-rate-limit' ? f.share : 1);
  }
  return 1 + extra;
}
