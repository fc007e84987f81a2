// The size limit on a tool call's arguments: measured as the UTF-8 bytes of their JSON, walking the
// value and stopping as soon as the limit is passed, so a 64 MiB argument is refused without being
// copied, parsed by the schema or journaled. It never looks at what the arguments mean.
import { jsonBytesUpTo } from '../domain/json-size.ts';
import { KeelError } from '../domain/keel-error.ts';

export { jsonBytesUpTo };

/** A tool's argument limit when its definition names none (`maxArgumentBytes`). */
export const TOOL_ARGUMENTS_MAX_BYTES_DEFAULT = 8 * 1024 * 1024;

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
