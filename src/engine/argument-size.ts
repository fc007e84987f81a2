// The size limit on a tool call's arguments: measured as the UTF-8 bytes of their JSON, walking the
// value and stopping as soon as the limit is passed, so a 64 MiB argument is refused without being
// copied, parsed by the schema or journaled. It never looks at what the arguments mean.
import { KeelError } from '../domain/keel-error.ts';

/** A tool's argument limit when its definition names none (`maxArgumentBytes`). */
export const TOOL_ARGUMENTS_MAX_BYTES_DEFAULT = 8 * 1024 * 1024;
/** Nesting past which arguments are refused outright (JSON.stringify would overflow the stack). */
const NESTING_MAX_DEPTH = 1_000;

/** Throws `tool_arguments_too_large` when `args` take more than `limitBytes` as JSON. */
export function assertArgumentsFit(tool: string, args: unknown, limitBytes: number): void {
  const size = jsonBytesUpTo(args, limitBytes);
  if (size > limitBytes) {
    throw new KeelError(
      'tool_arguments_too_large',
      `arguments of tool ${tool} exceed its limit of ${limitBytes} bytes`,
      { details: { tool, limitBytes } },
    );
  }
}

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
