// What of a run's content may go into telemetry: prompts, tool arguments and results are replaced
// by a marker unless KEEL_TELEMETRY_INCLUDE_CONTENT=true, and even then cut to a bounded size.
// Every span attribute that can carry user data goes through here; nothing else decides.
import stringify from 'safe-stable-stringify';

export const REDACTED = '[redacted]';
/** Longest content attribute kept when content is included; longer values are cut and marked. */
export const CONTENT_ATTRIBUTE_MAX_CHARS = 4096;

/**
 * The attribute value for a piece of run content: the marker, or its JSON cut to
 * CONTENT_ATTRIBUTE_MAX_CHARS.
 */
export function contentAttribute(value: unknown, include: boolean): string {
  if (!include) return REDACTED;
  const text = typeof value === 'string' ? value : (stringify(value) ?? 'null');
  return text.length <= CONTENT_ATTRIBUTE_MAX_CHARS
    ? text
    : `${text.slice(0, CONTENT_ATTRIBUTE_MAX_CHARS)}…[cut ${text.length - CONTENT_ATTRIBUTE_MAX_CHARS} chars]`;
}
