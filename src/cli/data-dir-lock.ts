// Single ownership of an embedded data directory: a lock file with the owner's pid. The embedded
// store expires every other lease at start, which is only safe when no other live process uses the
// same file. A holder that was just killed may take a moment to go (a dying or zombie process still
// answers kill -0): that is waited out briefly. A directory that cannot be created or written is a
// StartupError (one line and a hint), not a stack trace.
import { accessSync, constants, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { KeelError } from '../domain/keel-error.ts';
import {
  DATA_DIR_MODE,
  secureDataDir,
  STORE_FILE_MODE,
  type ModeChange,
} from '../store/sqlite/data-dir-modes.ts';
import { StartupError } from './kit/output.ts';

/** Errors that say the directory cannot be made or written by this process. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC', 'EDQUOT']);

/**
 * The StartupError for a data directory this process cannot create or write, or undefined for any
 * other failure.
 */
function dataDirStartupError(error: unknown, dir: string): StartupError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !NOT_WRITABLE.has(code)) return undefined;
  const problem =
    code === 'ENOTDIR' || code === 'EEXIST'
      ? 'is not a directory: a file is in the way'
      : code === 'ENOSPC' || code === 'EDQUOT'
        ? 'is on a full disk'
        : 'is not writable by this process';
  return new StartupError(
    `data directory ${dir} ${problem} (${code})`,
    'pass --data with a directory this user can write (or set KEEL_DATA_DIR)',
    { cause: error },
  );
}

/** Creates `dir` when missing and checks that this process can write in it. */
export function ensureWritableDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw dataDirStartupError(error, dir) ?? error;
  }
}

/**
 * Locks `dir` to this process, after making it private (secureDataDir: 0711, files 0600);
 * `onModeChange` hears each mode it had to fix.
 */
export function lockDataDir(
  dir: string,
  onModeChange: (change: ModeChange) => void = () => {},
): () => void {
  ensureWritableDir(dir);
  for (const change of secureDataDir(dir)) onModeChange(change);
  const path = join(dir, 'keel.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx', mode: STORE_FILE_MODE });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        throw dataDirStartupError(error, dir) ?? error;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (
        Number.isInteger(pid) &&
        pid > 0 &&
        pid !== process.pid &&
        !diedWithin(pid, HOLDER_EXIT_WAIT_MS)
      ) {
        throw new KeelError(
          'already_running',
          `another Keel process (pid ${pid}) uses ${dir}; stop it or pass a different --data`,
        );
      }
      rmSync(path, { force: true }); // left by a process that died: take it over
    }
  }
  throw new KeelError('already_running', `could not lock ${dir}`);
}

/**
 * How long a start waits for a lock holder that is on its way out (killed a moment ago) before
 * refusing.
 */
export const HOLDER_EXIT_WAIT_MS = 5_000;
const POLL_MS = 50;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie (exited, not yet reaped) or a dead task still answers kill -0; /proc says what it is
  // (Linux).
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

/** Whether `pid` is gone, or goes within `ms` (a synchronous wait: this runs once, at start). */
function diedWithin(pid: number, ms: number): boolean {
  const deadline = Date.now() + ms;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    Atomics.wait(pause, 0, 0, POLL_MS);
  }
  return true;
}
