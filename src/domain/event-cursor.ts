// The tenant-wide order of run events (GET /v1/events, migration 0038) and its cursor: an event's
// place is (tx, pos) — the id of the transaction that wrote it (0 on SQLite, whose one writer
// commits in insertion order) and its position — compared as a pair. Written `tx.pos` where a
// string is needed (SSE `id:`, Last-Event-ID, `after=`); both parts are decimal integers.
import { KeelError } from './keel-error.ts';
import type { RunEventRecord } from './records.ts';

export interface EventCursor {
  /** The writing transaction (decimal text: a Postgres xid8 may pass 2^53). */
  tx: string;
  pos: number;
}

/** A run event with its place in the tenant-wide order and its run's agent. */
export interface TenantEventRecord extends RunEventRecord {
  agent: string;
  cursor: EventCursor;
}

/**
 * A page of the tenant's events. `cursor` is where the next page starts: past the last event
 * returned, and past every event the read examined and passed over (other tenants', filtered out),
 * so a reader whose filter matches rarely still moves forward instead of examining the same events
 * again on every read. `more`: the read stopped at its bound, so more may follow at once.
 */
export interface TenantEventPage {
  events: TenantEventRecord[];
  cursor: EventCursor;
  more: boolean;
}

/** Which of the tenant's events a reader wants; every field given narrows. */
export interface TenantEventFilter {
  runIds?: readonly string[];
  agent?: string;
  types?: readonly string[];
  parentRunId?: string;
}

/** Before every event. */
export const EVENT_CURSOR_START: EventCursor = { tx: '0', pos: 0 };

export function encodeEventCursor(cursor: EventCursor): string {
  return `${cursor.tx}.${cursor.pos}`;
}

const CURSOR_PATTERN = /^(\d{1,20})\.(\d{1,15})$/;

/** 400 invalid_cursor for anything but `tx.pos`. */
export function decodeEventCursor(text: string): EventCursor {
  const match = CURSOR_PATTERN.exec(text);
  if (match === null)
    throw new KeelError(
      'invalid_cursor',
      'an event cursor is the `id:` of an event of GET /v1/events (tx.pos, two decimal integers)',
    );
  return { tx: BigInt(match[1]!).toString(), pos: Number(match[2]) };
}
