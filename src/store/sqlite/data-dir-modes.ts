// Who may read an embedded data directory: only Keel's own user. The directory is 0711 (sandbox uids
// must traverse it to reach their workspaces under sandboxes/, but cannot list it) and every file
// directly in it — the SQLite database, its -wal and -shm, the lock file — is 0600, so no other
// uid on the host (a process-tier sandbox included) reads any tenant's inputs, journals or key
// hashes. It fixes an existing directory's modes and says what it changed; it never touches
// sandboxes' own directories.
import { chmodSync, closeSync, lstatSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const DATA_DIR_MODE = 0o711;
export const STORE_FILE_MODE = 0o600;

export interface ModeChange {
  path: string;
  /** Octal strings, e.g. '644' → '600'. */
  from: string;
  to: string;
}

/**
 * Sets the data directory to DATA_DIR_MODE and every regular file directly in it to
 * STORE_FILE_MODE; returns what it changed.
 */
export function secureDataDir(dir: string): ModeChange[] {
  const changes: ModeChange[] = [];
  setMode(dir, DATA_DIR_MODE, changes);
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (lstatSync(path).isFile()) setMode(path, STORE_FILE_MODE, changes);
  }
  return changes;
}

/**
 * Creates `path` (empty: SQLite takes an empty file as a new database) with STORE_FILE_MODE when it
 * does not exist, so SQLite's -wal and -shm, which copy the database file's mode, are private too.
 */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, 'a', STORE_FILE_MODE));
}

function setMode(path: string, mode: number, changes: ModeChange[]): void {
  const current = lstatSync(path).mode & 0o7777;
  if (current === mode) return;
  chmodSync(path, mode);
  changes.push({ path, from: current.toString(8), to: mode.toString(8) });
}
