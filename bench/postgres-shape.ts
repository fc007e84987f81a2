// The workload shape shared by the systems measured on Postgres, so they are compared on exactly
// the same thing: workflows of five sequential durable steps with trivial bodies, 50 in flight at
// all times (one that ends is replaced at once), a counted warm-up, then a counted window measured.
// The system under test only supplies "run one workflow"; its step bodies report to ShapeCounters.
// It never sleeps to wait for a state: it polls counts.
import { createHistogram } from 'node:perf_hooks';
import type { PostgresFigures, PostgresMeter, PostgresSample } from './postgres-support.ts';
import {
  delay,
  progress,
  recordMs,
  STEPS_PER_RUN,
  summarize,
  type LatencySummary,
} from './support.ts';

export const POSTGRES_SHAPE_IN_FLIGHT = 50;
const WARMUP_WORKFLOWS = { quick: 100, full: 300 } as const;
const MEASURED_WORKFLOWS = { quick: 400, full: 2_000 } as const;
/**
 * A window that has not reached its count by then is cut short (and says so): the bench must stay
 * under five minutes.
 */
const PHASE_DEADLINE_MS = 60_000;
const POLL_INTERVAL_MS = 5;

/**
 * What the measured workflows report from inside: steps acknowledged, workflows ended, and the gap
 * between steps.
 */
export class ShapeCounters {
  steps = 0;
  workflows = 0;
  /**
   * End of one step's body → start of the next step's body in the same workflow
   * (performance.now()).
   */
  readonly stepGap = createHistogram();

  /**
   * Call first thing in a step body, with when the previous step's body ended (undefined in the
   * first step).
   */
  stepStarted(previousEnded: number | undefined): void {
    if (previousEnded !== undefined) recordMs(this.stepGap, performance.now() - previousEnded);
  }
}

export interface PostgresShapeResult {
  /** The system and its version, e.g. "DBOS Transact 5.3.0". */
  system: string;
  serverVersion: string;
  synchronousCommit: string;
  /** Connections the system under test may hold to Postgres. */
  poolSize: number;
  inFlight: number;
  stepsPerWorkflow: number;
  warmupWorkflows: number;
  workflows: number;
  steps: number;
  windowMs: number;
  /** True if the window ended at its deadline before its workflow count was reached. */
  cutShort: boolean;
  stepsPerSec: number;
  workflowsPerSec: number;
  stepGap: LatencySummary;
  postgres: PostgresFigures;
  /** CPU of the process running the workflows (100% = one core). */
  clientCpuUserPct: number;
  clientCpuSystemPct: number;
  failedLanes: number;
}

export interface LoadOptions {
  quick: boolean;
  label: string;
  counters: ShapeCounters;
  /** Runs one workflow of STEPS_PER_RUN steps to its end; its steps report to `counters`. */
  runWorkflow: () => Promise<unknown>;
  /** Called as the measured window opens and as it closes (before the lanes stop). */
  atWindowStart?: () => Promise<void>;
  atWindowEnd?: () => Promise<void>;
}

export interface ShapeOptions extends LoadOptions {
  meter: PostgresMeter;
}

type ShapeMeasurement = Omit<
  PostgresShapeResult,
  'system' | 'serverVersion' | 'synchronousCommit' | 'poolSize'
>;

/** The shape's figures without Postgres's own (a system on another store: SQLite). */
export type LoadMeasurement = Omit<ShapeMeasurement, 'postgres'>;

/** measureLoad, with what Postgres did during the window (transactions, WAL, CPU). */
export async function measureShape(options: ShapeOptions): Promise<ShapeMeasurement> {
  let startPg: PostgresSample | undefined;
  let endPg: PostgresSample | undefined;
  const load = await measureLoad({
    ...options,
    atWindowStart: async () => {
      startPg = await options.meter.sample();
    },
    atWindowEnd: async () => {
      endPg = await options.meter.sample();
    },
  });
  return { ...load, postgres: options.meter.figures(startPg!, endPg!, load.steps) };
}

/**
 * Drives the load, measures the window, then stops the lanes and waits for the workflows in flight
 * to end.
 */
export async function measureLoad(options: LoadOptions): Promise<LoadMeasurement> {
  const { counters, label } = options;
  const warmupWorkflows = options.quick ? WARMUP_WORKFLOWS.quick : WARMUP_WORKFLOWS.full;
  const target = options.quick ? MEASURED_WORKFLOWS.quick : MEASURED_WORKFLOWS.full;
  const lanes = startLanes(options.runWorkflow, counters);
  progress(
    `${label}: ${POSTGRES_SHAPE_IN_FLIGHT} workflows in flight, warming up for ${warmupWorkflows} workflows`,
  );
  await untilWorkflows(counters, lanes, warmupWorkflows);

  await options.atWindowStart?.();
  const start = {
    at: performance.now(),
    steps: counters.steps,
    workflows: counters.workflows,
    cpu: process.cpuUsage(),
  };
  counters.stepGap.reset();
  const reached = await untilWorkflows(counters, lanes, start.workflows + target);
  const end = {
    at: performance.now(),
    steps: counters.steps,
    workflows: counters.workflows,
    cpu: process.cpuUsage(start.cpu),
  };
  const stepGap = summarize(counters.stepGap);
  await options.atWindowEnd?.();
  const failures = await lanes.stop();
  for (const failure of failures) progress(`${label}: a lane failed: ${failure}`);

  const seconds = (end.at - start.at) / 1000;
  const steps = end.steps - start.steps;
  const workflows = end.workflows - start.workflows;
  const cpuPct = (micros: number) => Math.round((micros / 1000 / (seconds * 1000)) * 100);
  return {
    inFlight: POSTGRES_SHAPE_IN_FLIGHT,
    stepsPerWorkflow: STEPS_PER_RUN,
    warmupWorkflows,
    workflows,
    steps,
    windowMs: Math.round(end.at - start.at),
    cutShort: !reached,
    stepsPerSec: Math.round(steps / seconds),
    workflowsPerSec: Math.round(workflows / seconds),
    stepGap,
    clientCpuUserPct: cpuPct(end.cpu.user),
    clientCpuSystemPct: cpuPct(end.cpu.system),
    failedLanes: failures.length,
  };
}

interface Lanes {
  /** Failures so far: a lane stops at its first failed workflow. */
  readonly failures: readonly string[];
  /**
   * Stops starting workflows, waits for those in flight to end, and returns the lanes' failures.
   */
  stop(): Promise<string[]>;
}

function startLanes(runWorkflow: () => Promise<unknown>, counters: ShapeCounters): Lanes {
  let accepting = true;
  const failures: string[] = [];
  const lane = async (): Promise<void> => {
    while (accepting) {
      await runWorkflow();
      counters.workflows++;
    }
  };
  const lanes = Array.from({ length: POSTGRES_SHAPE_IN_FLIGHT }, () =>
    lane().catch((error: unknown) => void failures.push(String(error))),
  );
  return {
    failures,
    async stop() {
      accepting = false;
      await Promise.all(lanes);
      return failures;
    },
  };
}

/**
 * Resolves true once `count` workflows have ended, or false at the deadline; throws once every lane
 * has failed.
 */
async function untilWorkflows(
  counters: ShapeCounters,
  lanes: Lanes,
  count: number,
): Promise<boolean> {
  const deadline = performance.now() + PHASE_DEADLINE_MS;
  while (counters.workflows < count) {
    if (lanes.failures.length === POSTGRES_SHAPE_IN_FLIGHT)
      throw new Error(`every lane failed; the first: ${lanes.failures[0]}`);
    if (performance.now() > deadline) return false;
    await delay(POLL_INTERVAL_MS);
  }
  return true;
}
