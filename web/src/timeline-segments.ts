// How an effect's journal timestamps become timeline bars: queued (dispatched, waiting for a model
// or tool slot), executing, or waiting (input, timer, child run). Pure, DOM-free TypeScript, so
// Node tests it directly.

/** The journal fields the timeline needs (a subset of GET /v1/runs/:id/steps). */
export interface TimedEffect {
  kind: string;
  status: string;
  queuedAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

export interface Segment {
  kind: 'queued' | 'executing' | 'waiting';
  from: number;
  to: number;
}

/** Effects that park the run rather than execute: drawn as one waiting bar. */
export const WAIT_KINDS: ReadonlySet<string> = new Set(['input', 'sleep', 'child']);
/** Statuses whose bar is still growing: it ends at `now`. */
const OPEN_STATUSES: ReadonlySet<string> = new Set([
  'running',
  'waiting',
  'unknown',
  'dispatched',
  'pending',
]);

const ms = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

/**
 * Splits an effect into segments. A missing start (an effect that failed before it got a slot, or a
 * step, which never queues) makes the whole bar executing from when it was queued; an effect with
 * no times at all has no bar.
 */
export function segmentsOf(effect: TimedEffect, now: number): Segment[] {
  const queued = ms(effect.queuedAt);
  const started = ms(effect.startedAt);
  const ended = ms(effect.endedAt) ?? (OPEN_STATUSES.has(effect.status) ? now : null);
  if (WAIT_KINDS.has(effect.kind)) {
    const from = queued ?? started ?? ended;
    return from === null || ended === null ? [] : [{ kind: 'waiting', from, to: ended }];
  }
  const segments: Segment[] = [];
  if (queued !== null && started !== null && started > queued)
    segments.push({ kind: 'queued', from: queued, to: started });
  const execFrom = started ?? queued;
  if (execFrom !== null && ended !== null)
    segments.push({ kind: 'executing', from: execFrom, to: ended });
  return segments;
}

// Attempts: each claim of the run (GET /v1/runs/:id/attempts) is a band on the attempts lane. A
// recovery after a crash is a new attempt of the run (the one after an attempt whose lease
// expired); a retry is an effect's own attempt. The two are never confused: an effect re-run
// because its run was recovered is marked as such, not as retried.

/** One attempt as GET /v1/runs/:id/attempts returns it. */
export interface RunAttempt {
  number: number;
  worker: string;
  leaseToken: number;
  startedAt: string;
  endedAt: string | null;
  ending: string;
}

export interface AttemptBand {
  number: number;
  worker: string;
  ending: string;
  /** The attempt after one whose lease expired: it recovered the run. */
  recovery: boolean;
  from: number;
  to: number;
}

/** How each ending reads on the timeline. */
export const ATTEMPT_ENDING_TEXT: Readonly<Record<string, string>> = {
  running: 'running',
  completed: 'completed',
  parked: 'parked (waiting, no worker held)',
  lease_expired: 'lease expired (the worker died or stalled)',
  preempted: 'preempted (gave its slot to interactive work)',
  released: 'released (handed back, e.g. at shutdown)',
  cancelled: 'cancelled',
};

/** The attempts as bands; a running one grows until `now`. */
export function attemptBands(attempts: readonly RunAttempt[], now: number): AttemptBand[] {
  return attempts.map((a, i) => {
    const from = Date.parse(a.startedAt);
    return {
      number: a.number,
      worker: a.worker,
      ending: a.ending,
      recovery: i > 0 && attempts[i - 1]!.ending === 'lease_expired',
      from,
      to: Math.max(from, a.endedAt === null ? now : Date.parse(a.endedAt)),
    };
  });
}

/**
 * An effect's executions split into its own attempts (retries) and a re-run after its run was
 * recovered: an effect in flight when its worker died runs again under the recovering attempt,
 * which counts one more execution but is no retry. `fencingToken` is the lease that last wrote the
 * effect (GET /v1/runs/:id/steps).
 */
export function effectReruns(
  effect: { attempts: number; fencingToken?: number; startedAt: string | null },
  attempts: readonly RunAttempt[],
): { ownAttempts: number; rerunAfterRecovery: boolean } {
  const i = attempts.findIndex((a) => a.leaseToken === effect.fencingToken);
  const recovering = i > 0 && attempts[i - 1]!.ending === 'lease_expired';
  const started = ms(effect.startedAt);
  const rerun =
    recovering &&
    effect.attempts > 1 &&
    (started === null || started >= Date.parse(attempts[i]!.startedAt));
  return { ownAttempts: effect.attempts - (rerun ? 1 : 0), rerunAfterRecovery: rerun };
}
