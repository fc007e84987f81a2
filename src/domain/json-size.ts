// The size of a value's JSON, measured by walking it and stopping as soon as a limit is passed, so a
// 64 MiB value is judged without being copied or serialized (tool arguments, large payloads).

/** Nesting past which a value counts as over any limit (JSON.stringify would overflow the stack). */
const NESTING_MAX_DEPTH = 1_000;

/**
 * The JSON size of `value` (strings counted as UTF-8 without escapes: a lower bound that is exact
 * for ordinary text), or any number above `limit` once it is known to pass it.
 */
export function jsonBytesUpTo(value: unknown, limit: number): number {
  let total = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: item, depth } = stack.pop()!;
    if (depth > NESTING_MAX_DEPTH) return limit + 1;
    if (typeof item === 'string') total += Buffer.byteLength(item, 'utf8') + 2;
    else if (Array.isArray(item)) {
      total += 2 + Math.max(0, item.length - 1); // brackets and commas
      for (const entry of item) stack.push({ value: entry, depth: depth + 1 });
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      for (const [key, entry] of entries) {
        total += Buffer.byteLength(key, 'utf8') + 3; // quotes and colon
        stack.push({ value: entry, depth: depth + 1 });
      }
      total += 2 + Math.max(0, entries.length - 1); // braces and commas
    } else total += String(item).length;
    if (total > limit) return total;
  }
  return total;
}
