// The output and exit-code conventions every `keel` command follows: a command writes only through
// a CliIo and returns its exit code (0 success, 1 a failed request or an unsuccessful outcome, 2 a
// mistake the user can fix: bad flags, or a start the environment refuses). A mistake is one line
// on stderr ending with a hint, never a stack trace. Nothing here calls process.exit; main.ts alone
// decides when the process ends.
import { ApiError, ConnectionError, ProtocolError, StreamError } from '../client/http-client.ts';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * Where a command writes and what environment it reads: process.* in main.ts, captured streams in
 * tests.
 */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/**
 * A bad invocation (unknown flag, missing argument, malformed value): exit 2, with a pointer to the
 * usage text.
 */
export class UsageError extends Error {
  readonly hint: string | undefined;

  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
  }
}

/**
 * A start the environment refuses (port taken, data directory not writable, agents file broken):
 * exit 2.
 */
export class StartupError extends Error {
  readonly hint: string;

  constructor(message: string, hint: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'StartupError';
    this.hint = hint;
  }
}

export function out(io: CliIo, text: string): void {
  io.stdout.write(`${text}\n`);
}

export function printJson(io: CliIo, value: unknown): void {
  out(io, JSON.stringify(value ?? {}, null, 2));
}

/** Prints `value` as JSON with --json, else `text()`; a successful command's last word. */
export function show(
  io: CliIo,
  json: boolean | undefined,
  value: unknown,
  text: () => string,
): number {
  if (json) printJson(io, value);
  else out(io, text());
  return EXIT_OK;
}

export function isTty(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/**
 * A message made to fit on one line: a multi-line list of problems (config, pools file) joined with
 * "; ".
 */
export function oneLine(text: string): string {
  return text.trim().replace(/:?\s*\n\s*/g, (sep) => (sep.startsWith(':') ? ': ' : '; '));
}

/** What to do about the KeelErrors a start can raise whose message does not say it already. */
const KEEL_ERROR_HINTS: Record<string, string> = {
  config_invalid:
    'fix the setting named (each KEEL_* variable is listed in the configuration reference)',
  pools_config_invalid: 'fix the pools file (KEEL_POOLS_FILE)',
  durability_unavailable: 'choose a KEEL_DURABILITY this store offers',
};

function isKeelLike(error: unknown): error is Error & { code: string } {
  return (
    error instanceof Error &&
    error.name === 'KeelError' &&
    typeof (error as { code?: unknown }).code === 'string'
  );
}

function isParseArgsError(error: unknown): error is Error {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

/**
 * Prints what went wrong with `keel <command>` and returns the exit code. A user's mistake is one
 * line; an error nobody planned for is a bug and keeps its stack.
 *
 * @example
 * try { return await subcommand(args, io); } catch (error) { return reportError('runs', error, io); }
 */
export function reportError(command: string, error: unknown, io: CliIo): number {
  const say = (line: string): void => void io.stderr.write(`${line}\n`);
  const prefix = `keel ${command}`;
  if (error instanceof UsageError || isParseArgsError(error)) {
    const hint =
      error instanceof UsageError && error.hint !== undefined
        ? error.hint
        : `see 'keel ${command} --help'`;
    say(`${prefix}: ${oneLine(error.message)} — ${hint}`);
    return EXIT_USAGE;
  }
  if (error instanceof StartupError) {
    say(`${prefix}: ${oneLine(error.message)} — ${error.hint}`);
    return EXIT_USAGE;
  }
  if (error instanceof ApiError) {
    say(`error: ${error.code}: ${error.message} (HTTP ${error.status})`);
    if (error.details !== undefined) say(`details: ${JSON.stringify(error.details)}`);
    if (error.status === 401) say('check the API key (KEEL_API_KEY or --key)');
    return EXIT_FAILURE;
  }
  if (error instanceof ConnectionError) {
    say(`error: ${error.message}`);
    say('is Keel running there? set KEEL_URL or pass --url');
    return EXIT_FAILURE;
  }
  if (error instanceof ProtocolError || error instanceof StreamError) {
    say(`error: ${error.message}`);
    return EXIT_FAILURE;
  }
  // A KeelError reaching here was raised on purpose (invalid configuration, a data directory in
  // use): its code and message say what is wrong; no stack.
  if (isKeelLike(error)) {
    const hint = KEEL_ERROR_HINTS[error.code];
    say(
      `${prefix}: ${error.code}: ${oneLine(error.message)}${hint === undefined ? '' : ` — ${hint}`}`,
    );
    return EXIT_USAGE;
  }
  say(
    `${prefix}: unexpected failure (a bug in keel): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  return EXIT_FAILURE;
}
