// Opaque pagination cursors: base64url JSON `{ v: 1, after }` naming where the previous page ended
// (the last run id, schedule id, or fire's logical time). A cursor that does not decode to that
// shape, with an `after` of the list's own kind, is a 400 `invalid_cursor`: never a 500 (a value
// the database cannot compare) and never a wrong page.
import { KeelError } from '../domain/keel-error.ts';
import { RUN_ID_PATTERN } from '../domain/ids.ts';

/** What every list route's `cursor` parameter says in the OpenAPI document. */
export const CURSOR_DESCRIPTION =
  'Opaque: pass back the nextCursor of the previous page unchanged. ' +
  'A cursor this server did not issue for this list is 400 invalid_cursor.';

const SCHEDULE_ID_PATTERN =
  /^sch_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const isRunId = (after: unknown): after is string =>
  typeof after === 'string' && RUN_ID_PATTERN.test(after);
export const isScheduleId = (after: unknown): after is string =>
  typeof after === 'string' && SCHEDULE_ID_PATTERN.test(after);
/**
 * Logical times are epoch milliseconds: a safe integer, so both stores can compare it with a bigint
 * column.
 */
export const isEpochMs = (after: unknown): after is number => Number.isSafeInteger(after);

export function encodeCursor(after: string | number): string {
  return Buffer.from(JSON.stringify({ v: 1, after })).toString('base64url');
}

/** The `after` of a cursor issued by encodeCursor for a list whose positions satisfy `accepts`. */
export function decodeCursorOf<T>(cursor: string, accepts: (after: unknown) => after is T): T {
  const invalid = () =>
    new KeelError(
      'invalid_cursor',
      'the cursor is malformed; pass the nextCursor of a previous page',
    );
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const after = (parsed as { after?: unknown } | null)?.after;
  if ((parsed as { v?: unknown } | null)?.v !== 1 || !accepts(after)) throw invalid();
  return after;
}

/** The run id a GET /v1/runs cursor ends at. */
export function decodeCursor(cursor: string): string {
  return decodeCursorOf(cursor, isRunId);
}
