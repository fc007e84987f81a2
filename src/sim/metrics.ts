// The report's figures: each chart's measured values from the simulation's timings beside the
// prediction for the same inputs, with the relative error between them. Pure: timings and
// predictions in, chart data out.
import { type RunTiming, type Stage, STAGES, type StepTiming } from './collect.ts';
import type { Predictions } from './predict.ts';
import type { LoadSample } from './sampler.ts';
import type { SimulationResult } from './simulate.ts';
import { jainIndex, mean, percentile, relativeError } from './stats.ts';

/** Time buckets of the time-series charts. */
const SERIES_BUCKETS = 40;

export interface Comparison {
  label: string;
  unit: string;
  predicted: number;
  measured: number;
  /** Signed relative error of measured against predicted (NaN: predicted 0, measured not). */
  error: number;
  /** Where the prediction comes from: the planner section, or the simulator's estimate. */
  source: string;
}

export interface Series {
  label: string;
  points: Array<[number, number]>;
}

export interface Chart {
  id: string;
  title: string;
  unit: string;
  comparisons: Comparison[];
  /** Measured over time (seconds after t = 0), with the prediction as a flat line. */
  series?: { measured: Series; predicted: number };
  /** Extra measured figures shown in a table (percentiles). */
  table?: { columns: string[]; rows: Array<[string, ...number[]]> };
  note: string;
}

export interface Outcome {
  planned: number;
  submitted: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Submitted runs that had not ended when the simulation stopped: must be 0. */
  notEnded: number;
  failuresByCode: Record<string, number>;
}

export function outcome(result: SimulationResult): Outcome {
  const count = (s: string) => result.runs.filter((r) => r.status === s).length;
  const failuresByCode: Record<string, number> = {};
  for (const r of result.runs)
    if (r.status === 'failed')
      failuresByCode[r.errorCode ?? 'unknown'] =
        (failuresByCode[r.errorCode ?? 'unknown'] ?? 0) + 1;
  const ended = new Set(['succeeded', 'failed', 'cancelled']);
  return {
    planned: result.planned,
    submitted: result.runs.length,
    succeeded: count('succeeded'),
    failed: count('failed'),
    cancelled: count('cancelled'),
    notEnded: result.runs.filter((r) => !ended.has(r.status)).length,
    failuresByCode,
  };
}

function compare(
  label: string,
  unit: string,
  predicted: number,
  measured: number,
  source: string,
): Comparison {
  return { label, unit, predicted, measured, error: relativeError(predicted, measured), source };
}

function steps(runs: readonly RunTiming[], stage?: Stage): StepTiming[] {
  return runs.flatMap((r) =>
    stage === undefined ? r.steps : r.steps.filter((s) => s.stage === stage),
  );
}

function buckets(end: number): { width: number; at: (i: number) => number } {
  const width = Math.max(end, 1) / SERIES_BUCKETS;
  return { width, at: (i) => (i + 0.5) * width };
}

export function charts(result: SimulationResult, p: Predictions): Chart[] {
  const runs = result.runs;
  const ended = runs.filter((r) => r.endedAt !== null);
  const end = Math.max(...ended.map((r) => r.endedAt!), 1);
  const b = buckets(end);
  const done = new Array<number>(SERIES_BUCKETS).fill(0);
  for (const r of ended) done[Math.min(SERIES_BUCKETS - 1, Math.floor(r.endedAt! / b.width))]! += 1;
  // Between the first and the last end: the rate runs leave at once the pipeline is full (a
  // steady scenario's arrival rate when Keel keeps up, a burst's drain rate).
  const ends = ended.map((r) => r.endedAt!).sort((x, y) => x - y);
  const isBurst = p.planned.sections.burst !== undefined;
  // A burst has no steady state: its rate is the runs over the time to drain them from t = 0.
  const measuredThroughput = isBurst
    ? ends.length / Math.max(end, 1e-9)
    : ends.length < 2
      ? Number.NaN
      : (ends.length - 1) / Math.max(ends.at(-1)! - ends[0]!, 1e-9);
  const durations = ended.map((r) => r.endedAt! - r.submittedAt);
  const model = steps(runs, 'model');
  const queueAge = new Array<number>(SERIES_BUCKETS).fill(0);
  for (const s of model) {
    const i = Math.min(SERIES_BUCKETS - 1, Math.floor(s.startedAt / b.width));
    if (i >= 0) queueAge[i] = Math.max(queueAge[i]!, s.waitSeconds);
  }
  const firstCalls = model.filter((s) => s.ordinal === 0).map((s) => s.waitSeconds);
  const pools = [
    ...new Set(
      steps(runs)
        .filter((s) => s.stage !== 'input')
        .map((s) => s.pool),
    ),
  ];
  const attempts = (stage: Stage) => {
    const list = steps(runs, stage);
    return list.length === 0 ? 1 : list.reduce((n, s) => n + s.attempts, 0) / list.length;
  };
  const tenants = [...new Set(runs.map((r) => r.tenant))];
  const stretch = tenants.map((t) => {
    const mine = ended.filter((r) => r.tenant === t).map((r) => r.endedAt! - r.submittedAt);
    return mine.length === 0 ? 0 : p.runSeconds / mean(mine);
  });
  const succeeded = runs.filter((r) => r.status === 'succeeded').length;
  const spend = runs.reduce((sum, r) => sum + r.costUsd, 0);
  return [
    {
      id: 'throughput',
      title: 'Throughput',
      unit: 'runs/s',
      comparisons: [
        compare(
          'runs ended per second',
          'runs/s',
          p.throughputPerSec,
          measuredThroughput,
          'planner: capacity (min of arrival rate and maxArrivalPerSec)',
        ),
        compare(
          'mean run duration',
          's',
          p.runSeconds,
          mean(durations),
          'planner: capacity.taskSeconds (no queueing)',
        ),
      ],
      series: {
        measured: {
          label: 'runs ended per second',
          points: done.map((n, i) => [b.at(i), n / b.width]),
        },
        predicted: p.throughputPerSec,
      },
      note: "Measured: runs ended per second between the first and the last end (a burst: runs ÷ time from t = 0 to the last end). Predicted: the planner's steady-state rate; a burst has no steady state, so its rate is the burst drained at the model-slot ceiling.",
    },
    {
      id: 'queue-age',
      title: 'Queue age per pool',
      unit: 's',
      comparisons: [
        compare(
          isBurst ? 'model pool: longest wait of a first model call' : 'model pool: mean wait',
          's',
          isBurst ? p.firstCallMaxWaitSeconds : 0,
          isBurst ? Math.max(0, ...firstCalls) : mean(model.map((s) => s.waitSeconds)),
          isBurst
            ? 'planner: burst.maxWaitSeconds'
            : 'planner: capacity (mean-value, below saturation: no queue)',
        ),
        ...(isBurst
          ? [
              compare(
                'model pool: mean wait of a first model call',
                's',
                p.firstCallMeanWaitSeconds,
                mean(firstCalls),
                'planner: burst.meanWaitSeconds',
              ),
            ]
          : []),
      ],
      series: {
        measured: {
          label: 'oldest model-pool wait started in the interval',
          points: queueAge.map((v, i) => [b.at(i), v]),
        },
        predicted: isBurst ? p.firstCallMaxWaitSeconds : 0,
      },
      table: {
        columns: ['p50 s', 'p95 s', 'p99 s', 'max s'],
        rows: pools.map((pool) => {
          const w = steps(runs)
            .filter((s) => s.pool === pool)
            .map((s) => s.waitSeconds);
          return [pool, percentile(w, 50), percentile(w, 95), percentile(w, 99), Math.max(...w)];
        }),
      },
      note: "Queue age is the step's queued → started time in Keel's own step records.",
    },
    {
      id: 'stages',
      title: 'Wait and execution per stage',
      unit: 's',
      comparisons: STAGES.filter((s) => steps(runs, s).length > 0).map((s) =>
        compare(
          `${s}: mean execution`,
          's',
          p.execSeconds[s],
          mean(steps(runs, s).map((x) => x.execSeconds)),
          'planner inputs: latency model means',
        ),
      ),
      table: {
        columns: ['wait p50', 'wait p95', 'wait p99', 'exec p50', 'exec p95', 'exec p99'],
        rows: STAGES.filter((s) => steps(runs, s).length > 0).map((s) => {
          const list = steps(runs, s);
          const w = list.map((x) => x.waitSeconds);
          const e = list.map((x) => x.execSeconds);
          return [
            s,
            percentile(w, 50),
            percentile(w, 95),
            percentile(w, 99),
            percentile(e, 50),
            percentile(e, 95),
            percentile(e, 99),
          ];
        }),
      },
      note: 'Execution includes retries of the step (a model call retried through a 429 window counts its waits between attempts).',
    },
    {
      id: 'fairness',
      title: "Fairness across tenants (Jain's index)",
      unit: 'index',
      comparisons: [
        compare(
          "Jain's index of per-tenant stretch⁻¹",
          'index',
          p.jainIndex,
          jainIndex(stretch),
          'planner: weighted fair share (equal stretch)',
        ),
      ],
      table: { columns: ['ideal ÷ mean run time'], rows: tenants.map((t, i) => [t, stretch[i]!]) },
      note: "Each tenant's x = planner run time ÷ its mean measured run time; Jain's index (Σx)²/(n·Σx²) is 1 when every tenant is slowed alike.",
    },
    {
      id: 'retries',
      title: 'Retry amplification',
      unit: 'attempts/call',
      comparisons: [
        compare(
          'model attempts per call',
          'attempts/call',
          p.retryAmplification,
          attempts('model'),
          "simulator's estimate (fault windows × retry delay); the planner has no retry input",
        ),
        ...(steps(runs, 'browser').length > 0
          ? [
              compare(
                'browser attempts per step',
                'attempts/step',
                1 / (1 - (result.scenario.browser?.failureRate ?? 0)),
                attempts('browser'),
                "simulator's estimate (geometric retries)",
              ),
            ]
          : []),
      ],
      note: "Attempts per step from Keel's step records.",
    },
    {
      id: 'environment',
      title: 'Environment GiB·s',
      unit: 'GiB·s',
      comparisons: [
        compare(
          'environment memory-time',
          'GiB·s',
          p.envGiBSeconds,
          0,
          'planner: capacity.envGiBSecondsPerTask × runs',
        ),
      ],
      note: 'The simulated agents use no sandboxed tools, so no environment is created: both sides are 0 by construction (this chart shows the wiring, not a measurement).',
    },
    {
      id: 'cost',
      title: 'Cost per successful run',
      unit: 'USD',
      comparisons: [
        compare(
          'all spend ÷ successful runs',
          'USD',
          p.costPerSuccessUsd,
          succeeded === 0 ? 0 : spend / succeeded,
          "simulator's estimate (mock token count × price); the planner has no price input",
        ),
      ],
      note: "Measured from each run's cost counter (usage × the model's price), summed over all runs and divided by the successful ones.",
    },
  ];
}

/** The headline of a large run: what it held, how fast Keel moved it, and what filled up first. */
export interface CapacityFigures {
  /** Samples of the Keel processes' /metrics taken (0: none readable, the rest is NaN). */
  samples: number;
  /** Sum over the Keel processes of resident memory: just before t = 0, and the largest. */
  baselineRssBytes: number;
  peakRssBytes: number;
  /** Most live runs (queued, running, waiting) at one sample, and the memory then per live run above the baseline. */
  peakLiveRuns: number;
  bytesPerLiveRun: number;
  /**
   * Keel's own time between a run's steps: each step's end to the next step queued (the commit,
   * a claim after a wait, replay, the agent code between effects).
   */
  dispatchP50Seconds: number;
  dispatchP99Seconds: number;
  /** Submission to the run's first step queued: the run queue (admission, claim, first turn). */
  firstStepP50Seconds: number;
  firstStepP99Seconds: number;
  /** The largest p99 of queue age (queued → started) over the pools, and that pool. */
  queueAgeP99Seconds: number;
  queueAgeP99Pool: string;
  /** Each resource that saturated, with the first instant (s after t = 0) it did; earliest first. */
  saturated: Array<{ resource: string; firstAt: number; how: string }>;
  /** The planner's bottleneck for the same inputs (null: it named none). */
  plannerBottleneck: string | null;
}

/** A pool saturates when calls wait in its queue; a process, when its CPU passes this share of a core. */
const PROCESS_CPU_SATURATED = 0.9;
/** The machine saturates when this share of all its cores is busy. */
const MACHINE_CPU_SATURATED = 0.9;

export function capacityFigures(result: SimulationResult, p: Predictions): CapacityFigures {
  const load = result.load;
  const rss = (i: number) => load[i]!.processes.reduce((n, x) => n + x.rssBytes, 0);
  const live = (i: number) =>
    ['queued', 'running', 'waiting'].reduce((n, s) => n + (load[i]!.runs[s] ?? 0), 0);
  let peakLive = 0;
  let atPeakLive = -1;
  let peakRss = Number.NaN;
  for (let i = 0; i < load.length; i++) {
    if (live(i) > peakLive) [peakLive, atPeakLive] = [live(i), i];
    peakRss = Number.isNaN(peakRss) ? rss(i) : Math.max(peakRss, rss(i));
  }
  // Before t = 0 the target was starting up: the baseline is the last sample before the first run.
  const beforeStart = load.findLastIndex((s) => s.at <= 0);
  const baseline = load.length === 0 ? Number.NaN : rss(Math.max(0, beforeStart));
  const ordered = result.runs.map((r) => ({
    run: r,
    steps: [...r.steps].sort((a, b) => a.queuedAt - b.queuedAt),
  }));
  const firstStep = ordered.flatMap(({ run, steps }) =>
    steps.length === 0 ? [] : [Math.max(0, steps[0]!.queuedAt - run.submittedAt)],
  );
  const dispatch = ordered.flatMap(({ steps }) =>
    steps.slice(1).map((s, i) => Math.max(0, s.queuedAt - steps[i]!.endedAt)),
  );
  const byPool = Map.groupBy(
    result.runs.flatMap((r) => r.steps).filter((s) => s.stage !== 'input'),
    (s) => s.pool,
  );
  let queueAgeP99 = Number.NaN;
  let queueAgePool = '';
  for (const [pool, list] of byPool) {
    const p99 = percentile(
      list.map((s) => s.waitSeconds),
      99,
    );
    if (Number.isNaN(queueAgeP99) || p99 > queueAgeP99) [queueAgeP99, queueAgePool] = [p99, pool];
  }
  return {
    samples: load.length,
    baselineRssBytes: baseline,
    peakRssBytes: peakRss,
    peakLiveRuns: peakLive,
    bytesPerLiveRun:
      atPeakLive < 0 ? Number.NaN : Math.max(0, rss(atPeakLive) - baseline) / peakLive,
    dispatchP50Seconds: percentile(dispatch, 50),
    dispatchP99Seconds: percentile(dispatch, 99),
    firstStepP50Seconds: percentile(firstStep, 50),
    firstStepP99Seconds: percentile(firstStep, 99),
    queueAgeP99Seconds: queueAgeP99,
    queueAgeP99Pool: queueAgePool,
    saturated: saturation(load),
    plannerBottleneck: p.planned.sections.capacity.bottleneck,
  };
}

function saturation(load: readonly LoadSample[]): CapacityFigures['saturated'] {
  const first = new Map<string, { firstAt: number; how: string }>();
  const mark = (resource: string, at: number, how: string) => {
    if (!first.has(resource)) first.set(resource, { firstAt: at, how });
  };
  for (let i = 0; i < load.length; i++) {
    const s = load[i]!;
    if (s.at < 0) continue;
    for (const [pool, v] of Object.entries(s.pools))
      if (v.queued > 0)
        mark(`pool ${pool}`, s.at, `${v.queued} queued, ${v.running} of ${v.limit} running`);
    if (s.machineBusy >= MACHINE_CPU_SATURATED)
      mark('machine CPU', s.at, `${(s.machineBusy * 100).toFixed(0)}% of all cores busy`);
    const before = load[i - 1];
    if (before === undefined) continue;
    for (const proc of s.processes) {
      const prior = before.processes.find((x) => x.name === proc.name);
      if (prior === undefined) continue;
      const cores = (proc.cpuSeconds - prior.cpuSeconds) / Math.max(1e-3, s.at - before.at);
      if (cores >= PROCESS_CPU_SATURATED)
        mark(`${proc.name} CPU`, s.at, `${cores.toFixed(2)} cores (its main thread runs on one)`);
    }
  }
  return [...first]
    .map(([resource, v]) => ({ resource, ...v }))
    .sort((a, b) => a.firstAt - b.firstAt);
}

/** Live runs over time against the planner's concurrency for the same inputs (Little's law). */
export function loadChart(result: SimulationResult, p: Predictions): Chart {
  const load = result.load;
  const live = load.map((s): [number, number] => [
    s.at,
    ['queued', 'running', 'waiting'].reduce((n, k) => n + (s.runs[k] ?? 0), 0),
  ]);
  const isBurst = p.planned.sections.burst !== undefined;
  // A burst puts every run in at once; a steady arrival holds arrival rate × run time of them.
  const predicted = isBurst ? result.planned : p.arrivalPerSec * p.runSeconds;
  return {
    id: 'load',
    title: 'Live runs and memory',
    unit: 'runs',
    comparisons: [
      compare(
        'most live runs at once',
        'runs',
        predicted,
        Math.max(0, ...live.map(([, n]) => n)),
        isBurst ? 'the burst: every run at t = 0' : "Little's law: arrival rate × planner run time",
      ),
    ],
    series: {
      measured: { label: 'live runs (queued, running, waiting)', points: live },
      predicted,
    },
    table: {
      columns: ['peak RSS MiB', 'CPU s'],
      rows: (load.at(-1)?.processes ?? []).map((proc) => [
        proc.name,
        Math.max(...load.map((s) => s.processes.find((x) => x.name === proc.name)?.rssBytes ?? 0)) /
          2 ** 20,
        proc.cpuSeconds - (load[0]?.processes.find((x) => x.name === proc.name)?.cpuSeconds ?? 0),
      ]),
    },
    note: "Live runs from Keel's store (keel_tenant_runs), memory and CPU from each Keel process's /metrics, once a second.",
  };
}
