// Scenarios 2 and 3, durable effects/s and dispatch latency under load: runs of five sequential
// trivial steps, 50 in flight at all times (a finished run is replaced at once), every commit
// fsync'd before it is acknowledged. Runs are submitted in-process with store.createRun, or through
// POST /v1/runs from a worker-thread client; completion is heard from store.onChange 'ended' in
// both cases. Counts and histograms restart after the warm-up.
import { Worker } from 'node:worker_threads';
import type { FromWorker, HttpLoadConfig, ToWorker } from '../http-load-worker.ts';
import {
  FsyncProbe,
  fiveSteps,
  committed,
  delay,
  progress,
  startKeel,
  summarize,
  STEPS_PER_RUN,
  type BenchKeel,
  type LatencySummary,
} from '../support.ts';

export const IN_FLIGHT_RUNS = 50;
const FSYNC_PROBE_SAMPLES = 100;

export type Submission = 'store' | 'http';

export interface ThroughputResult {
  submission: Submission;
  inFlight: number;
  warmupMs: number;
  windowMs: number;
  stepsPerRun: number;
  effects: number;
  effectsPerSec: number;
  runs: number;
  runsPerSec: number;
  writes: number;
  transactions: number;
  transactionsPerSec: number;
  writesPerTransaction: number;
  effectsPerTransaction: number;
  dispatchLatency: LatencySummary;
  /**
   * Single-row fsync'd commits on a probe file just before the load starts and just after it stops.
   */
  fsyncProbe: LatencySummary;
  failedLanes: number;
  cpuUserPct: number;
  cpuSystemPct: number;
}

export async function runThroughput(options: {
  quick: boolean;
  submission: Submission;
}): Promise<ThroughputResult> {
  const warmupMs = options.quick ? 1_000 : 3_000;
  const windowMs = options.quick ? 3_000 : 15_000;
  const keel = await startKeel({ agents: [fiveSteps], http: options.submission === 'http' });
  let runsEnded = 0;
  const unsubscribe = keel.store.onChange((changes) => {
    for (const change of changes) if (change.signal === 'ended') runsEnded++;
  });
  const probe = new FsyncProbe(keel.dir);
  try {
    probe.sample(FSYNC_PROBE_SAMPLES);
    const load = options.submission === 'http' ? httpLoad(keel) : storeLoad(keel);
    progress(
      `throughput via ${options.submission}: ${IN_FLIGHT_RUNS} runs in flight, warming up for ${warmupMs} ms`,
    );
    await delay(warmupMs);

    const start = snapshot(keel, runsEnded);
    keel.orchestrator.dispatchLatency.reset();
    await delay(windowMs);
    const end = snapshot(keel, runsEnded);
    const dispatch = summarize(keel.orchestrator.dispatchLatency);
    const failures = await load.stop();
    probe.sample(FSYNC_PROBE_SAMPLES);
    for (const failure of failures) progress(`a submission lane failed: ${failure}`);

    const seconds = (end.at - start.at) / 1000;
    const effects = end.steps - start.steps;
    const writes = end.writes - start.writes;
    const transactions = end.transactions - start.transactions;
    const cpuMs = {
      user: (end.cpu.user - start.cpu.user) / 1000,
      system: (end.cpu.system - start.cpu.system) / 1000,
    };
    const result: ThroughputResult = {
      submission: options.submission,
      inFlight: IN_FLIGHT_RUNS,
      warmupMs,
      windowMs: Math.round(end.at - start.at),
      stepsPerRun: STEPS_PER_RUN,
      effects,
      effectsPerSec: Math.round(effects / seconds),
      runs: end.runs - start.runs,
      runsPerSec: Math.round((end.runs - start.runs) / seconds),
      writes,
      transactions,
      transactionsPerSec: Math.round(transactions / seconds),
      writesPerTransaction: round2(writes / Math.max(1, transactions)),
      effectsPerTransaction: round2(effects / Math.max(1, transactions)),
      dispatchLatency: dispatch,
      fsyncProbe: summarize(probe.histogram),
      failedLanes: failures.length,
      cpuUserPct: Math.round((cpuMs.user / (seconds * 1000)) * 100),
      cpuSystemPct: Math.round((cpuMs.system / (seconds * 1000)) * 100),
    };
    progress(
      `throughput via ${options.submission}: ${result.effectsPerSec} effects/s, ${result.runsPerSec} runs/s, ` +
        `${result.writesPerTransaction} writes/transaction, dispatch p50 ${dispatch.p50Ms} ms p99 ${dispatch.p99Ms} ms`,
    );
    return result;
  } finally {
    probe.close();
    unsubscribe();
    await keel.close();
  }
}

function snapshot(keel: BenchKeel, runs: number) {
  const { writes, transactions } = keel.store.writeStats;
  return {
    at: performance.now(),
    steps: committed.steps,
    runs,
    writes,
    transactions,
    cpu: process.cpuUsage(),
  };
}

interface Load {
  /** Stops submitting, waits for the runs in flight to end, and returns the lanes' failures. */
  stop(): Promise<string[]>;
}

/**
 * In-process: each lane builds a run as POST /v1/runs would, hands it to store.createRun, and waits
 * for its end.
 */
function storeLoad(keel: BenchKeel): Load {
  let accepting = true;
  const failures: string[] = [];
  const lane = async (): Promise<void> => {
    while (accepting) {
      const run = keel.newRun(fiveSteps);
      const ended = keel.ended(run.id);
      await keel.store.createRun(run);
      await ended;
    }
  };
  const lanes = Array.from({ length: IN_FLIGHT_RUNS }, () =>
    lane().catch((error: unknown) => void failures.push(String(error))),
  );
  return {
    async stop() {
      accepting = false;
      await Promise.all(lanes);
      return failures;
    },
  };
}

/**
 * Through the API: the lanes run in a worker thread (its own event loop, like a separate client
 * process).
 */
function httpLoad(keel: BenchKeel): Load {
  const api = keel.api;
  if (api === undefined) throw new Error('the HTTP load needs the API started');
  const config: HttpLoadConfig = {
    url: api.url,
    apiKey: api.apiKey,
    agent: fiveSteps.name,
    lanes: IN_FLIGHT_RUNS,
  };
  const worker = new Worker(new URL('../http-load-worker.ts', import.meta.url), {
    workerData: config,
  });
  const failures: string[] = [];
  worker.on('error', (error) => failures.push(`worker: ${String(error)}`));
  const unsubscribe = keel.store.onChange((changes) => {
    const runIds: string[] = [];
    for (const change of changes) if (change.signal === 'ended') runIds.push(change.runId);
    if (runIds.length > 0) worker.postMessage({ type: 'ended', runIds } satisfies ToWorker);
  });
  return {
    async stop() {
      const stopped = new Promise<FromWorker>((resolve) => worker.once('message', resolve));
      worker.postMessage({ type: 'stop' } satisfies ToWorker);
      const message = await stopped;
      unsubscribe();
      await worker.terminate();
      return [...failures, ...message.failures];
    },
  };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
