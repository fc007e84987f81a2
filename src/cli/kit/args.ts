// Argument parsing for every `keel` command, over node:util's parseArgs: flags are declared once
// per command (their values come out typed), an unknown flag or a missing value is a UsageError
// naming the flags the command does take, and numbers and JSON given on the command line are
// checked here. It never prints and never exits.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from './output.ts';

/** `--help` / `-h`, taken by every command. */
export const HELP_FLAG = {
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies ParseArgsOptionsConfig;

/**
 * Parses `args` against `options` (strict: an unknown flag is a UsageError). Boolean flags take a
 * `--no-` form.
 *
 * @example
 * const { values } = parseFlags(argv, { agents: { type: 'string' }, ...HELP_FLAG });
 * values.agents; // string | undefined
 */
export function parseFlags<T extends ParseArgsOptionsConfig>(
  args: string[],
  options: T,
  { positionals = true }: { positionals?: boolean } = {},
) {
  try {
    return parseArgs({
      args,
      options,
      allowPositionals: positionals,
      allowNegative: true,
      strict: true,
    });
  } catch (error) {
    throw usageErrorFrom(error, options);
  }
}

/** parseArgs' errors, reworded: which flag, and which flags there are. */
function usageErrorFrom(error: unknown, options: ParseArgsOptionsConfig): unknown {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) return error;
  const message = (error as Error).message;
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  const known = Object.keys(options)
    .map((name) => `--${name}`)
    .join(', ');
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`unknown flag ${quoted}; the flags here are ${known}`);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`unexpected argument '${quoted}'`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const flag = quoted.split(' ')[0] ?? quoted;
      return new UsageError(
        message.includes('argument missing') ? `${flag} needs a value` : `${flag} takes no value`,
      );
    }
    default:
      return new UsageError(message);
  }
}

/** Exactly the positional arguments named, in order. */
export function expectPositionals(positionals: string[], names: readonly string[]): string[] {
  if (positionals.length !== names.length) {
    const wanted = names.length === 0 ? 'no arguments' : names.map((n) => `<${n}>`).join(' ');
    throw new UsageError(
      `expected ${wanted}, got ${positionals.length === 0 ? 'none' : positionals.map((p) => `'${p}'`).join(' ')}`,
    );
  }
  return positionals;
}

/** One positional argument, `<name>`. */
export function onePositional(positionals: string[], name: string): string {
  return expectPositionals(positionals, [name])[0]!;
}

/** A whole number in [min, max] from a flag's text, or undefined when the flag was not given. */
export function intFlag(
  value: string | undefined,
  flag: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be an integer ${range}, got '${value}'`);
  }
  return n;
}

/** A TCP port (0 picks a free one). */
export function portFlag(value: string | undefined): number | undefined {
  return intFlag(value, '--port', 0, 65_535);
}

/** A positive number (an amount, a fraction) from a flag's text. */
export function positiveNumberFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new UsageError(`${flag} must be a positive number, got '${value}'`);
  return n;
}

/** JSON given on the command line; `source` names where it came from in the error. */
export function jsonArgument(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `${source} is not valid JSON (${reason}); a string needs quotes, e.g. '"yes"'`,
    );
  }
}
