// The JSON text a large value was parsed from, kept beside the value (weakly) until the store takes
// it, so a 50 MB tool result is serialized once on its way to the journal instead of twice (the
// engine's toJson, then the payload store). Taking it forgets it: nothing holds the text longer than
// the commit that stores it.

/** Texts shorter than this are not kept: serializing them again costs little. */
export const JSON_TEXT_KEEP_MIN_CHARS = 64 * 1024;

const TEXTS = new WeakMap<object, string>();

/** Remembers that `value` is the parse of `text` (for objects and arrays of a large text only). */
export function keepJsonText(value: unknown, text: string): void {
  if (text.length >= JSON_TEXT_KEEP_MIN_CHARS && value !== null && typeof value === 'object')
    TEXTS.set(value, text);
}

/** The text `value` was parsed from, if it was kept; forgets it. */
export function takeJsonText(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const text = TEXTS.get(value);
  if (text !== undefined) TEXTS.delete(value);
  return text;
}
