// When a schedule fires: the logical fire times of a cron expression read in an IANA time zone
// (croner), or of a fixed interval, bounded by start and end. Pure: no clock, no store.
//
// Daylight saving time (Keel's rule, for every cron expression):
// * A wall-clock time that occurs twice (clocks go back) fires once, at its FIRST occurrence (the
//   daylight-time instant). Croner already does this for fixed-time expressions; for interval
//   expressions (`*/15 * * * *`) Keel drops the second pass through the repeated hour.
// * A wall-clock time that does not exist (clocks go forward) fires at the first valid instant
//   after the gap, once, even if several matching times fall in the gap. Croner does this for
//   fixed-time expressions; for interval expressions it skips them, so Keel adds the instant the
//   gap ends (when it is not a fire time anyway).
// Fixed intervals count elapsed time and ignore the zone.
import { Cron } from 'croner';
import { KeelError } from '../domain/keel-error.ts';
import { assertTimeZone, offsetAt, wallClock } from './time-zone.ts';

/**
 * Largest daylight-saving shift looked at (the largest in the tz database is 2 h; 3 h leaves
 * margin).
 */
const DST_SHIFT_MAX_MS = 3 * 3600_000;
/** Step when looking for an offset change between two fires far apart. */
const TRANSITION_SCAN_STEP_MS = 12 * 3600_000;
/**
 * Bound on candidates examined for one answer (each skipped repeat or pre-start time costs one).
 */
const CANDIDATES_MAX = 10_000;

export interface FireRule {
  cron: string | null;
  intervalMs: number | null;
  timeZone: string;
  startAt: number | null;
  endAt: number | null;
  /** Where a fixed interval counts from when there is no startAt (the schedule's creation). */
  anchorAt: number;
}

export class FireTimes {
  readonly #rule: FireRule;
  readonly #cron: Cron | undefined;
  /** The same expression read in UTC: asks "does the pattern match this wall-clock time?". */
  readonly #wallCron: Cron | undefined;

  /** Validates the rule: `invalid_time_zone`, `invalid_cron`, or `validation_failed`. */
  constructor(rule: FireRule) {
    assertTimeZone(rule.timeZone);
    if ((rule.cron === null) === (rule.intervalMs === null))
      throw new KeelError(
        'validation_failed',
        'a schedule needs exactly one of cron and intervalMs',
      );
    if (rule.startAt !== null && rule.endAt !== null && rule.endAt <= rule.startAt)
      throw new KeelError('validation_failed', 'endAt must be after startAt');
    this.#rule = rule;
    if (rule.cron !== null) {
      try {
        this.#cron = new Cron(rule.cron, {
          timezone: rule.timeZone,
          mode: '5-or-6-parts',
          paused: true,
        });
        this.#wallCron = new Cron(rule.cron, {
          timezone: 'UTC',
          mode: '5-or-6-parts',
          paused: true,
        });
      } catch (error) {
        throw new KeelError(
          'invalid_cron',
          `invalid cron expression ${JSON.stringify(rule.cron)}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      if (this.#wallCron.nextRun(new Date(0)) === null)
        throw new KeelError(
          'invalid_cron',
          `cron expression ${JSON.stringify(rule.cron)} never fires`,
        );
    }
  }

  /**
   * The first logical fire time strictly after `after`, or null when the schedule has no more
   * fires.
   */
  next(after: number): number | null {
    const { startAt, endAt } = this.#rule;
    let t = startAt !== null && after < startAt ? startAt - 1 : after;
    for (let i = 0; i < CANDIDATES_MAX; i++) {
      const candidate = this.#rule.intervalMs !== null ? this.#nextInterval(t) : this.#nextCron(t);
      if (candidate === null || (endAt !== null && candidate > endAt)) return null;
      if (this.#rule.cron !== null && this.#isRepeatedWallTime(candidate)) {
        t = candidate;
        continue;
      }
      return candidate;
    }
    throw new Error(
      `no fire time found within ${CANDIDATES_MAX} candidates after ${new Date(after).toISOString()}`,
    );
  }

  /** Fire times in (after, until], oldest first, at most `limit`. */
  between(after: number, until: number, limit: number): number[] {
    const times: number[] = [];
    let t: number | null = after;
    while (times.length < limit) {
      t = this.next(t);
      if (t === null || t > until) break;
      times.push(t);
    }
    return times;
  }

  #nextInterval(after: number): number {
    const anchor = this.#rule.startAt ?? this.#rule.anchorAt;
    const interval = this.#rule.intervalMs!;
    if (after < anchor) return anchor;
    return anchor + (Math.floor((after - anchor) / interval) + 1) * interval;
  }

  #nextCron(after: number): number | null {
    const next = this.#cron!.nextRun(new Date(after))?.getTime() ?? null;
    const gapEnd = this.#matchingGapEnd(after, next ?? after + 366 * 24 * 3600_000);
    return gapEnd !== null && (next === null || gapEnd < next) ? gapEnd : next;
  }

  /**
   * The end of the first clocks-forward gap in (after, before) whose missing wall-clock times the
   * pattern matches: where an interval expression's skipped times fire instead. Null if there is
   * none.
   */
  #matchingGapEnd(after: number, before: number): number | null {
    const zone = this.#rule.timeZone;
    for (let from = after; from < before; from += TRANSITION_SCAN_STEP_MS) {
      const to = Math.min(from + TRANSITION_SCAN_STEP_MS, before);
      const offsetFrom = offsetAt(from, zone);
      const offsetTo = offsetAt(to, zone);
      if (offsetTo <= offsetFrom) continue;
      let lo = from;
      let hi = to; // offset(lo) < offset(hi): narrow down to the first instant of the new offset
      while (hi - lo > 1) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (offsetAt(mid, zone) > offsetFrom) hi = mid;
        else lo = mid;
      }
      const gapStartWall = hi + offsetFrom;
      const gapEndWall = hi + offsetAt(hi, zone);
      const match = this.#wallCron!.nextRun(new Date(gapStartWall - 1))?.getTime();
      if (match !== undefined && match < gapEndWall && hi > after) return hi;
    }
    return null;
  }

  /**
   * True for the second pass through a repeated wall-clock time (clocks went back less than 3 h
   * ago).
   */
  #isRepeatedWallTime(instant: number): boolean {
    const zone = this.#rule.timeZone;
    const shift = offsetAt(instant - DST_SHIFT_MAX_MS, zone) - offsetAt(instant, zone);
    return shift > 0 && wallClock(instant - shift, zone) === wallClock(instant, zone);
  }
}
