// Opaque pagination cursors: base64url JSON naming the last run id of the previous page. A cursor that does not
// decode to that shape is a 400 `invalid_cursor`, never a 500 and never a silently wrong page.
import { KeelError } from '../domain/keel-error.ts';
import { RUN_ID_PATTERN } from '../domain/ids.ts';

export function encodeCursor(lastRunId: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after: lastRunId })).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const invalid = () => new KeelError('invalid_cursor', 'the cursor is malformed; pass the nextCursor of a previous page');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const after = (parsed as { after?: unknown } | null)?.after;
  if ((parsed as { v?: unknown } | null)?.v !== 1 || typeof after !== 'string' || !RUN_ID_PATTERN.test(after)) throw invalid();
  return after;
}
