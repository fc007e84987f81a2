// The checks `keel dev|server|worker|migrate` make before they commit to a start, and the
// translation of the failures a user causes (a taken port, an agents file that is missing, broken
// or empty, a database that cannot be reached) into StartupErrors: one line and a hint, exit 2.
// Errors nobody planned for pass through unchanged: they are bugs and keep their stack. Nothing
// here holds a resource once it returns.
import { stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadAgentsModule, type LoadedAgents } from '../engine/agents-module.ts';
import { StartupError } from './kit/output.ts';
import { readSecretEnv } from '../config/config.ts';
import type { CredentialProblem } from '../models/credentials.ts';
import { commonJsHint } from './module-format-hint.ts';

const AGENTS_HINT =
  'pass --agents with the path of the module that exports your agents (the results of defineAgent())';

/** Where a listener was asked to bind, and which flag or variable asked for it. */
export interface ListenTarget {
  host: string;
  port: number;
  /** How the user chose the port: `--port` or `KEEL_METRICS_PORT`. */
  flag: string;
}

/**
 * The StartupError for a failed listen, or undefined when the failure is not one a user can fix.
 */
export function listenStartupError(
  error: unknown,
  { host, port, flag }: ListenTarget,
): StartupError | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new StartupError(
        `port ${port} on ${host} is already in use`,
        `stop the process listening there, or ${flag.startsWith('--') ? 'pass' : 'set'} another ${flag} (0 picks a free port)`,
        { cause: error },
      );
    case 'EACCES':
      return new StartupError(
        `port ${port} on ${host} needs privileges this process does not have`,
        `use a port above 1023 with ${flag}, e.g. 7070`,
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `cannot listen on ${host}: it is not an address of this machine`,
        'pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)',
        { cause: error },
      );
    default:
      return undefined;
  }
}

/**
 * Fails fast, before any store is opened, when the API could not listen where it is asked to
 * (another process already listens there). Port 0 always works.
 */
export async function assertCanListen(target: ListenTarget): Promise<void> {
  if (target.port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolveListen, reject) => {
      probe.once('error', reject);
      probe.listen({ host: target.host, port: target.port, exclusive: true }, resolveListen);
    });
  } catch (error) {
    throw listenStartupError(error, target) ?? error;
  } finally {
    await new Promise<void>((resolveClose) =>
      probe.listening ? probe.close(() => resolveClose()) : resolveClose(),
    );
  }
}

/** `path:line` of the agents module where loading it failed, when the error says. */
function whereInModule(error: Error, path: string): string | undefined {
  const lines = (error.stack ?? '').split('\n');
  const own = lines.find(
    (line) => line.includes(path) && /:\d+/.test(line) && !line.includes('imported from'),
  );
  const match = own === undefined ? undefined : /((?:file:\/\/)?\/[^\s()]+:\d+(?::\d+)?)/.exec(own);
  return match?.[1]?.replace(/^file:\/\//, '');
}

/**
 * Loads the agents module for a start: a missing file, one that does not load (a syntax error, a
 * throw, a missing import) and one that exports no agent are StartupErrors naming the file.
 */
export async function loadAgentsForStart(file: string): Promise<LoadedAgents> {
  const path = resolve(file);
  let isFile: boolean;
  try {
    isFile = (await stat(path)).isFile();
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code !== 'ENOENT' &&
      (error as NodeJS.ErrnoException).code !== 'ENOTDIR'
    )
      throw error;
    throw new StartupError(`agents file ${file} does not exist`, AGENTS_HINT, { cause: error });
  }
  if (!isFile) throw new StartupError(`agents file ${file} is not a file`, AGENTS_HINT);
  // Imported once here so that a module that does not load is told apart from one that loads and
  // exports no agent; loadAgentsModule imports the same URL again and gets this evaluation from the
  // module cache.
  try {
    await import(pathToFileURL(path).href);
  } catch (error) {
    const commonJs = commonJsHint(error, path);
    if (commonJs !== undefined)
      throw new StartupError(
        `agents file ${file} does not load: ${commonJs.problem}`,
        commonJs.fix,
        {
          cause: error,
        },
      );
    const reason =
      error instanceof Error
        ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}`
        : String(error);
    const at = error instanceof Error ? whereInModule(error, path) : undefined;
    throw new StartupError(
      `agents file ${file} does not load: ${reason}${at === undefined ? '' : ` (at ${at})`}`,
      `fix the module; \`node ${file}\` shows the whole error`,
      { cause: error },
    );
  }
  try {
    return await loadAgentsModule(path);
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'Error') throw error;
    if (/exports no agents/.test(error.message)) {
      throw new StartupError(
        `agents file ${file} exports no agent`,
        'export the result of defineAgent() from it (a named export, or a default export of an agent or an array of agents)',
        { cause: error },
      );
    }
    // Any other complaint about what the module exports (two different agents under one
    // name@version, say).
    throw new StartupError(
      `agents file ${file}: ${error.message.replace(`${path} `, '')}`,
      'export each agent made with defineAgent() once, under its own name and version',
      { cause: error },
    );
  }
}

/** SQLSTATEs a user causes with the connection string. */
const CONNECTION_SQLSTATES: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the server refused this user',
  '3D000': 'the database does not exist',
  '3F000': 'the schema does not exist',
  '42501': 'the user may not do what Keel needs (create tables in this database)',
};
const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);

/** host:port/database of a connection string, without its password. */
function databaseLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'KEEL_DATABASE_URL';
  }
}

/**
 * The StartupError for a database Keel cannot use as configured, or undefined for any other
 * failure.
 */
export function databaseStartupError(
  error: unknown,
  databaseUrl: string,
): StartupError | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  const where = databaseLabel(databaseUrl);
  const hint =
    'check KEEL_DATABASE_URL (postgres://user:password@host:port/database) and that PostgreSQL runs there';
  if (CONNECTION_ERRNOS.has(code))
    return new StartupError(`cannot connect to PostgreSQL at ${where} (${code})`, hint, {
      cause: error,
    });
  const meaning = CONNECTION_SQLSTATES[code];
  if (meaning !== undefined) {
    const detail = error instanceof Error && error.message !== '' ? `: ${error.message}` : '';
    return new StartupError(`PostgreSQL at ${where} refused Keel, ${meaning}${detail}`, hint, {
      cause: error,
    });
  }
  return undefined;
}

/** SQLite result codes a user causes with the data directory's content (sqlite3.h). */
const SQLITE_FILE_ERRORS: Record<number, string> = {
  11: 'is damaged (SQLITE_CORRUPT)',
  14: 'cannot be opened (SQLITE_CANTOPEN)',
  26: 'is not a database (SQLITE_NOTADB)',
};

/**
 * The StartupError for a data directory whose keel.db cannot be used, or undefined for any other
 * failure.
 */
export function sqliteStartupError(error: unknown, path: string): StartupError | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  const problem =
    code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number'
      ? SQLITE_FILE_ERRORS[errcode]
      : undefined;
  if (problem === undefined) return undefined;
  return new StartupError(
    `${path} ${problem}`,
    'pass --data with another directory, or move that file away (a new one is created)',
    { cause: error },
  );
}

/**
 * The agents module loaded on the main thread but an agent isolate (a worker thread) could not load
 * it: code that needs the main thread, or that fails under the isolate's memory limit.
 */
export function isolateStartupError(error: unknown, file: string): StartupError {
  const reason = error instanceof Error ? error.message : String(error);
  return new StartupError(
    `agents file ${file} does not load in an agent isolate: ${reason}`,
    'agent code runs in worker threads under a watchdog: make the module load there, or set KEEL_AGENT_ISOLATION=thread to run it on the main thread (no watchdog)',
    { cause: error },
  );
}

/**
 * `--strict`: a model whose credentials cannot work (credentials.ts) fails the start, with the same
 * lines the warning gives.
 */
export function credentialsStartupError(problems: readonly CredentialProblem[]): StartupError {
  return new StartupError(
    problems.map((p) => p.message).join('; '),
    'set the variables (keel doctor lists them), or start without --strict to serve anyway (calls to these models then fail with model_auth_failed)',
  );
}

/** Whether the variable named `variable` holds a value; a name no variable could have does not. */
export function secretIsSet(variable: string): boolean {
  try {
    return readSecretEnv(variable) !== undefined;
  } catch {
    return false;
  }
}
