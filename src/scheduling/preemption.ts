// Preemption decisions: when a process sends batch runs back to the queue for interactive runs that
// have waited too long for a run slot, which ones and how many, and what a preemption cost once the
// run is claimed again. Pure: it never reads the store or the clock, and never stops a run itself
// (the orchestrator asks the store and acts; the run stops at its next effect boundary, see
// RunExecution.preempt).
import type { Priority, RunRecord } from '../domain/records.ts';

/**
 * Longest pause between two rounds of preemptions of one process whose rounds keep letting no
 * interactive run in.
 */
export const PREEMPT_PAUSE_MAX_MS = 60_000;

/** A run this process holds, as the decision sees it. */
export interface HeldRun {
  runId: string;
  priority: Priority;
  /** Committed journal positions: its progress so far, and the replay its next claim repeats. */
  positions: number;
  /** When this process started running it (ms on any one clock). */
  startedAt: number;
  /**
   * Asked to yield already, ending, or on probation (a suspect's first commit must be real
   * progress): not a candidate.
   */
  exempt: boolean;
}

export interface PreemptionInput {
  /**
   * Claimable interactive runs that have waited past the target (the store's count, at most `limit`
   * asked).
   */
  starved: number;
  /**
   * Preemptions this process asked for that have not yielded yet: the slots they free are already
   * promised.
   */
  pending: number;
  /** Every run slot of this process is held (running or claimed and about to start). */
  full: boolean;
  held: readonly HeldRun[];
}

/**
 * The batch runs to preempt: none unless the process is full (a process with room claims the
 * interactive run itself), else as many as starved interactive runs are not yet covered by pending
 * preemptions. Interactive runs are never preempted. Order: least progressed first (fewest
 * committed positions), then the most recently started. Why: a run with few positions loses least —
 * its next claim replays little and its hot state is small — while a run far along is nearer to
 * finishing and freeing its slot on its own; and among equals, the run the fair order admitted last
 * is the one whose return disturbs that order least. A run once preempted keeps its positions, so
 * it ranks behind fresh runs next time: the same run is not sent back over and over.
 */
export function choosePreemptions(input: PreemptionInput): string[] {
  if (!input.full) return [];
  const wanted = input.starved - input.pending;
  if (wanted <= 0) return [];
  return input.held
    .filter((r) => r.priority === 'batch' && !r.exempt)
    .sort(
      (a, b) =>
        a.positions - b.positions || b.startedAt - a.startedAt || (a.runId < b.runId ? -1 : 1),
    )
    .slice(0, wanted)
    .map((r) => r.runId);
}

/**
 * The pause before a process may preempt again, decided when it is about to start a new round. If
 * interactive runs were claimed here since its last round, preemption works: no pause. If none was
 * — the slots it freed went to other work, because the fair order across tenants put the waiting
 * interactive runs' tenant behind (it is ahead of its weighted share) — preempting again would only
 * churn batch runs for work fairness will not run yet: pause for the target, then twice the last
 * pause each time, up to PREEMPT_PAUSE_MAX_MS.
 */
export function nextPauseMs(
  lastPauseMs: number,
  targetMs: number,
  interactiveClaimedSinceLastRound: boolean,
): number {
  if (interactiveClaimedSinceLastRound) return 0;
  return Math.min(PREEMPT_PAUSE_MAX_MS, Math.max(targetMs, 2 * lastPauseMs));
}

/**
 * Paces one process's rounds of preemptions: counts the interactive runs it claims, judges its last
 * round once the runs of that round have all yielded, and pauses (nextPauseMs) when that round let
 * no interactive run in.
 */
export class PreemptionPacer {
  readonly #targetMs: number;
  #interactiveClaims = 0;
  /** Interactive claims counted when the last round not judged yet started. */
  #lastRound: number | undefined;
  #pauseMs = 0;
  #pausedUntil = 0;

  constructor(targetMs: number) {
    this.#targetMs = targetMs;
  }

  /** The current pause (0: none). */
  get pauseMs(): number {
    return this.#pauseMs;
  }

  /** Runs this process just claimed. */
  claimed(runs: ReadonlyArray<{ priority: Priority }>): void {
    for (const run of runs) if (run.priority === 'interactive') this.#interactiveClaims++;
  }

  paused(now: number): boolean {
    return now < this.#pausedUntil;
  }

  /**
   * A new round is about to preempt (`pending`: earlier preemptions not yielded yet). False: pause
   * instead.
   */
  startRound(now: number, pending: number): boolean {
    if (this.#lastRound !== undefined && pending === 0) {
      this.#pauseMs = nextPauseMs(
        this.#pauseMs,
        this.#targetMs,
        this.#interactiveClaims > this.#lastRound,
      );
      this.#lastRound = undefined;
      if (this.#pauseMs > 0) {
        this.#pausedUntil = now + this.#pauseMs;
        return false;
      }
    }
    this.#lastRound ??= this.#interactiveClaims;
    return true;
  }
}

/**
 * Time from a run's last preemption to this claim, when this claim is the first since (the claim
 * right after the preemption carries the lease token after the one the preemption ended); null
 * otherwise. `run` is the claimed row.
 */
export function requeueDelayMs(
  run: Pick<RunRecord, 'preemptedAt' | 'preemptedLeaseToken' | 'leaseToken' | 'updatedAt'>,
): number | null {
  if (
    run.preemptedAt === null ||
    run.preemptedLeaseToken === null ||
    run.leaseToken !== run.preemptedLeaseToken + 1
  )
    return null;
  return Math.max(0, run.updatedAt - run.preemptedAt);
}
