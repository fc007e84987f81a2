// `keel plan --live`: measures a running Keel's workload (arrival rate, model calls per run, model
// and tool seconds) from the runs created in a recent window, through a caller-supplied fetcher of
// the runs API. `collectSample` does the paging and fetching; `computeWorkload` is the pure
// arithmetic. Never imports the CLI client, the engine or the store, and never measures environment
// memory: Keel has no sandbox plane yet.
import assert from 'node:assert/strict';
import { div, figure, named } from './formula.ts';

/** Runs read per measurement; the newest are kept and the sample says when this cut it short. */
export const LIVE_RUNS_MAX = 1_000;
/** Runs per `GET /v1/runs` page (the API's maximum). */
export const LIVE_PAGE_SIZE = 200;
/** `GET /v1/runs/:id/steps` requests in flight at once. */
export const LIVE_STEPS_CONCURRENCY = 8;
export const LIVE_WINDOW_SECONDS_DEFAULT = 300;
/** The longest window `--live` accepts: a week. */
export const LIVE_WINDOW_SECONDS_MAX = 7 * 24 * 3600;
const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

/** The fields of a run the measurement reads (a subset of `GET /v1/runs`'s run view). */
export interface LiveRun {
  id: string;
  status: string;
  createdAt: string;
}

/** The fields of a journal entry the measurement reads (a subset of `GET /v1/runs/:id/steps`). */
export interface LiveStep {
  kind: string;
  queuedAt?: string | null | undefined;
  startedAt?: string | null | undefined;
  endedAt?: string | null | undefined;
}

/** What `collectSample` needs from Keel; the CLI's KeelHttpClient fits it. */
export interface LiveSource {
  listRuns(query: {
    limit: number;
    cursor?: string;
  }): Promise<{ runs: LiveRun[]; nextCursor: string | null }>;
  listSteps(runId: string): Promise<LiveStep[]>;
}

export interface LiveSample {
  windowSeconds: number;
  now: Date;
  /** Runs created in [now − windowSeconds, now], newest first, each with its journal. */
  runs: { run: LiveRun; steps: LiveStep[] }[];
  /**
   * True when the window held more than LIVE_RUNS_MAX runs: the sample is the newest LIVE_RUNS_MAX.
   */
  capped: boolean;
}

/**
 * The measured `workload` fields, each with the formula that produced it, plus what the sample
 * held.
 */
export interface MeasuredWorkload {
  arrivalPerSec: number;
  roundsPerTask: number;
  modelSecondsPerRound: number;
  toolSecondsPerRound: number;
  formulas: {
    arrivalPerSec: string;
    roundsPerTask: string;
    modelSecondsPerRound: string;
    toolSecondsPerRound: string;
  };
  windowSeconds: number;
  since: string;
  until: string;
  runsSampled: number;
  finishedRunsSampled: number;
  modelCallsTimed: number;
  capped: boolean;
  /** Caveats a reader must see next to the numbers (the cap, empty samples, tenant scope). */
  notes: string[];
}

/**
 * Pages through the runs API (newest first) down to `now − windowSeconds`, then reads each sampled
 * run's steps.
 */
export async function collectSample(
  source: LiveSource,
  windowSeconds: number,
  now: Date,
): Promise<LiveSample> {
  assert.ok(windowSeconds > 0, 'windowSeconds must be > 0');
  const since = now.getTime() - windowSeconds * 1000;
  const runs: LiveRun[] = [];
  let capped = false;
  let cursor: string | undefined;
  paging: for (;;) {
    const page = await source.listRuns(
      cursor === undefined ? { limit: LIVE_PAGE_SIZE } : { limit: LIVE_PAGE_SIZE, cursor },
    );
    for (const run of page.runs) {
      const created = Date.parse(run.createdAt);
      if (created > now.getTime()) continue; // created while we measure: outside the window
      if (created < since) break paging; // newest first: everything after this is older
      if (runs.length === LIVE_RUNS_MAX) {
        capped = true;
        break paging;
      }
      runs.push(run);
    }
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  const steps = await mapBounded(runs, LIVE_STEPS_CONCURRENCY, (run) => source.listSteps(run.id));
  return { windowSeconds, now, runs: runs.map((run, i) => ({ run, steps: steps[i]! })), capped };
}

/**
 * The workload a sample shows:
 * - arrivalPerSec = runs created ÷ window seconds (when capped: ÷ the seconds from the oldest
 *   sampled run to now);
 * - roundsPerTask = model calls in finished runs ÷ finished runs;
 * - modelSecondsPerRound = mean over ended model calls of endedAt − (startedAt ?? queuedAt);
 * - toolSecondsPerRound = tool seconds in finished runs ÷ model calls in finished runs.
 */
export function computeWorkload(sample: LiveSample): MeasuredWorkload {
  const until = sample.now.getTime();
  const oldest = sample.runs.at(-1);
  const spanSeconds =
    sample.capped && oldest !== undefined
      ? Math.max((until - Date.parse(oldest.run.createdAt)) / 1000, Number.MIN_VALUE)
      : sample.windowSeconds;
  const created = sample.runs.length;
  const finished = sample.runs.filter((r) => TERMINAL_STATUSES.has(r.run.status));
  const finishedModelCalls = sum(
    finished.map((r) => r.steps.filter((s) => s.kind === 'model').length),
  );
  const toolSeconds = sum(
    finished.flatMap((r) =>
      r.steps
        .filter((s) => s.kind === 'tool')
        .map(seconds)
        .filter((d) => d !== undefined),
    ),
  );
  const modelDurations = sample.runs.flatMap((r) =>
    r.steps
      .filter((s) => s.kind === 'model')
      .map(seconds)
      .filter((d) => d !== undefined),
  );
  const modelSeconds = sum(modelDurations);

  const arrival = quotient(
    sample.capped ? 'runsSampled' : 'runsCreated',
    created,
    sample.capped ? 'secondsSpanned' : 'windowSeconds',
    spanSeconds,
  );
  const rounds = quotient(
    'modelCallsInFinishedRuns',
    finishedModelCalls,
    'finishedRuns',
    finished.length,
  );
  const model = quotient(
    'Σ modelCallSeconds',
    modelSeconds,
    'modelCallsEnded',
    modelDurations.length,
  );
  const tool = quotient(
    'toolSecondsInFinishedRuns',
    toolSeconds,
    'modelCallsInFinishedRuns',
    finishedModelCalls,
  );

  const notes = [
    "Measured from the runs API: only the API key's tenant is visible, and child runs count as runs of their own.",
  ];
  if (sample.capped)
    notes.push(
      `The window held more than ${LIVE_RUNS_MAX} runs: measured the newest ${LIVE_RUNS_MAX}, over the ${spanSeconds.toFixed(1)} s they span.`,
    );
  if (created === 0) notes.push('No runs were created in the window: every measured figure is 0.');
  else if (finished.length === 0)
    notes.push(
      'No run created in the window has finished: roundsPerTask and toolSecondsPerRound are 0.',
    );
  if (toolSeconds > 0 && finishedModelCalls === 0)
    notes.push(
      `Finished runs used ${toolSeconds} tool seconds but made no model calls: per-round tool time is undefined, reported as 0.`,
    );

  return {
    arrivalPerSec: arrival.value,
    roundsPerTask: rounds.value,
    modelSecondsPerRound: model.value,
    toolSecondsPerRound: tool.value,
    formulas: {
      arrivalPerSec: arrival.formula,
      roundsPerTask: rounds.formula,
      modelSecondsPerRound: model.formula,
      toolSecondsPerRound: tool.formula,
    },
    windowSeconds: sample.windowSeconds,
    since: new Date(until - sample.windowSeconds * 1000).toISOString(),
    until: sample.now.toISOString(),
    runsSampled: created,
    finishedRunsSampled: finished.length,
    modelCallsTimed: modelDurations.length,
    capped: sample.capped,
    notes,
  };
}

/** Collects and computes in one call: what `keel plan --live` runs. */
export async function measureWorkload(
  source: LiveSource,
  windowSeconds: number,
  now: Date,
): Promise<MeasuredWorkload> {
  return computeWorkload(await collectSample(source, windowSeconds, now));
}

/** a ÷ b with its formula; nothing to divide by (b = 0) measures 0, and the formula says so. */
function quotient(
  aName: string,
  a: number,
  bName: string,
  b: number,
): { value: number; formula: string } {
  const q = figure(div(named(aName, a), named(bName, b)), 's');
  return b === 0
    ? { value: 0, formula: `${q.formula} (no ${bName}: 0)` }
    : { value: q.value, formula: q.formula };
}

/**
 * An effect's duration in seconds, or undefined when it has not ended (or never started or queued).
 */
function seconds(step: LiveStep): number | undefined {
  const from = step.startedAt ?? step.queuedAt;
  if (step.endedAt == null || from == null) return undefined;
  return Math.max(0, (Date.parse(step.endedAt) - Date.parse(from)) / 1000);
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
