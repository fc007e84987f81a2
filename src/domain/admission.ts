// Deadline-aware admission (issue 27): when a submitted run with a deadline is expected to finish,
// from what the store measured for its agent (runs ahead of it, recent completions per second, the
// fastest recent run), and what to do when that is past its deadline. Pure: the store supplies the
// sample, the API applies the decision. It never refuses a run without a deadline, nor one whose
// agent has no recent completions to measure (no estimate is better than an invented one).

/** Recent completions are counted over this window (ms) to measure an agent's service rate. */
export const ADMISSION_RATE_WINDOW_MS = 60_000;
/** Runs ahead are counted up to this many (the estimate is past any deadline long before). */
export const ADMISSION_AHEAD_COUNT_MAX = 100_000;

/**
 * What to do with a run expected to finish after its deadline: `accept` it anyway (the default; the
 * estimate is shown on the run), `refuse` it (429 `deadline_unmeetable`, nothing created), or admit
 * it as `batch` (it yields to interactive work and is not expected on time).
 */
export const WHEN_LATE = ['accept', 'refuse', 'batch'] as const;
export type WhenLate = (typeof WHEN_LATE)[number];

/** What the store measured for the agent, as seen by a run due at `dueAt`. */
export interface AdmissionSample {
  /** Unfinished runs of the agent (queued or running) due no later than the new run. */
  ahead: number;
  /** Runs of the agent that ended in the last ADMISSION_RATE_WINDOW_MS. */
  completed: number;
  /** The shortest of those runs, admission to end (ms): the service time without queueing. */
  fastestMs: number | null;
}

/**
 * When the run is expected to finish, or null when nothing measured supports an estimate: the runs
 * ahead drain at the measured completion rate, then the run itself takes the fastest recent time.
 * @example
 * expectedFinishAt({ ahead: 120, completed: 60, fastestMs: 3_000 }, 0); // 123_000 (1 run/s)
 */
export function expectedFinishAt(sample: AdmissionSample, now: number): number | null {
  if (sample.completed === 0 || sample.fastestMs === null) return null;
  const perMs = sample.completed / ADMISSION_RATE_WINDOW_MS;
  return Math.round(now + sample.ahead / perMs + sample.fastestMs);
}

/**
 * The admission of a run with this deadline: admitted as asked, admitted as batch, or refused.
 * @example
 * admission(130_000, 100_000, 'batch'); // 'batch'
 */
export function admission(
  expected: number | null,
  deadlineAt: number | null,
  whenLate: WhenLate,
): 'admit' | 'batch' | 'refuse' {
  if (expected === null || deadlineAt === null || expected <= deadlineAt) return 'admit';
  switch (whenLate) {
    case 'accept':
      return 'admit';
    case 'batch':
      return 'batch';
    case 'refuse':
      return 'refuse';
    default: {
      const never: never = whenLate;
      throw new Error(`unknown whenLate ${String(never)}`);
    }
  }
}
