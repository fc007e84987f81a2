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
