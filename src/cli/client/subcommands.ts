// What the `keel <noun> <verb>` HTTP commands share (`keel schedules`, `keel tenants`): flag parsing, the client from
// --url/--key or the environment, output, and the mapping of failures to exit codes (0 success, 1 failed request,
// 2 usage). Commands write only through `io` and return their exit code; nothing here exits the process.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { ApiError, ConnectionError, KeelHttpClient, ProtocolError } from './http-client.ts';
import { DEFAULT_KEEL_URL, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type RunsCommandIo } from './runs-command.ts';

export class UsageError extends Error {}

export type Subcommand = (args: string[], io: RunsCommandIo) => Promise<number>;

const COMMON = { url: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean', default: false } } as const satisfies ParseArgsOptionsConfig;

export function parse<T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  return parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
}

export function one(positionals: string[], name: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected <${name}>, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`);
  return positionals[0]!;
}

/** A client for --url (else $KEEL_URL, else the default) with --key, else the key in `keyVariable`. */
export function connect(values: { url?: string | undefined; key?: string | undefined }, env: NodeJS.ProcessEnv, keyVariable = 'KEEL_API_KEY'): KeelHttpClient {
  const apiKey = values.key || env[keyVariable];
  if (!apiKey) throw new UsageError(`no API key: set ${keyVariable} or pass --key <key>`);
  const baseUrl = values.url || env.KEEL_URL || DEFAULT_KEEL_URL;
  if (!/^https?:\/\//.test(baseUrl)) throw new UsageError(`'${baseUrl}' must be an http:// or https:// URL`);
  return new KeelHttpClient({ baseUrl, apiKey });
}

export function int(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number, got '${value}'`);
  return n;
}

export function show(io: RunsCommandIo, json: boolean | undefined, value: unknown, text: () => string): number {
  io.stdout.write(`${json ? JSON.stringify(value ?? {}, null, 2) : text()}\n`);
  return EXIT_OK;
}

function report(command: string, error: unknown, io: RunsCommandIo): number {
  const say = (line: string): void => void io.stderr.write(`${line}\n`);
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
    say(`keel ${command}: ${(error as Error).message}`);
    say(`run 'keel ${command} help' for usage`);
    return EXIT_USAGE;
  }
  if (error instanceof ApiError) {
    say(`error: ${error.code}: ${error.message} (HTTP ${error.status})`);
    return EXIT_FAILURE;
  }
  if (error instanceof ConnectionError || error instanceof ProtocolError) {
    say(`error: ${error.message}`);
    return EXIT_FAILURE;
  }
  say(`error: unexpected failure (a bug in keel): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return EXIT_FAILURE;
}

/** Runs `keel <command> <argv…>` against its subcommands: usage on help or an unknown name, else the subcommand. */
export async function dispatch(command: string, usage: string, subcommands: Record<string, Subcommand>, argv: string[], io: RunsCommandIo): Promise<number> {
  const [name, ...args] = argv;
  const subcommand = name !== undefined && Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
  if (subcommand === undefined || args.includes('--help') || args.includes('-h')) {
    const asked = name === undefined || name === 'help' || name === '--help' || name === '-h' || subcommand !== undefined;
    if (!asked) io.stderr.write(`keel ${command}: unknown command '${name}'\n`);
    (asked ? io.stdout : io.stderr).write(`${usage}\n`);
    return EXIT_USAGE;
  }
  try {
    return await subcommand(args, io);
  } catch (error) {
    return report(command, error, io);
  }
}
