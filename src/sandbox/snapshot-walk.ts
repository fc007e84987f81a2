// The walk behind a workspace snapshot, run in the snapshot worker (never on Keel's main thread: a
// sandbox that fills its workspace with small files must not stall the API, heartbeats or commits).
// The walk is fd-relative: each directory is opened with O_DIRECTORY|O_NOFOLLOW and its entries
// are reached through /proc/self/fd/<fd>/<name> (openat semantics: nothing on the path is looked up
// again by name, so no link swapped in can lead the walk out of the workspace); files are opened
// with O_NOFOLLOW and checked to be the inode that was listed. It counts every entry against
// `maxFiles` and hashes only files whose inode, size, mtime or ctime changed since the last walk of
// the same directory (ctime cannot be set back by an unprivileged program, so a changed file
// cannot pass for an unchanged one).
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
} from 'node:fs';
import { KeelError } from '../domain/keel-error.ts';
import { sha256Hex } from '../store/artifact-store.ts';

export interface ManifestEntry {
  path: string;
  kind: 'file' | 'symlink';
  /** sha256 of the content (files) — absent for symlinks. */
  sha256?: string;
  size: number;
  mode: number;
  target?: string;
}

export interface Manifest {
  version: 1;
  entries: ManifestEntry[];
  totalBytes: number;
}

export interface WalkLimits {
  fileBytes: number;
  workspaceBytes: number;
  /** Entries (files, directories and links) a workspace may hold. */
  maxFiles: number;
}

/** What the last walk learnt of one file: enough to tell that it has not changed since. */
interface FileState {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  sha256: string;
}

/** Per workspace directory: the files of its last successful walk, by path. */
export type WalkCache = Map<string, FileState>;

export interface WalkResult {
  entries: number;
  totalBytes: number;
  /** The manifest as stored (JSON), and its sha256. */
  manifestBytes: Uint8Array;
  manifestSha256: string;
  /**
   * Contents of the files hashed in this walk, one per distinct sha256 (unchanged files are not
   * read), each in its own ArrayBuffer so it can be transferred to the main thread without a copy.
   */
  blobs: Map<string, Uint8Array>;
  /** Files whose hash was taken from the cache. */
  reused: number;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Walks `dir` into a manifest; `previous` is the cache of its last walk, `next` receives this one's. */
export function walkWorkspace(
  dir: string,
  limits: WalkLimits,
  previous: WalkCache | undefined,
  next: WalkCache,
): WalkResult {
  const entries: ManifestEntry[] = [];
  const blobs = new Map<string, Uint8Array>();
  let totalBytes = 0;
  let count = 0;
  let reused = 0;
  const walk = (fd: number, relative: string): void => {
    const base = `/proc/self/fd/${fd}`;
    for (const name of readdirSync(base).sort()) {
      if (++count > limits.maxFiles)
        throw new KeelError(
          'workspace_limit',
          `workspace holds more than ${limits.maxFiles} entries (files, directories and links)`,
          { details: { limit: 'maxFiles', maxFiles: limits.maxFiles } },
        );
      const path = relative === '' ? name : `${relative}/${name}`;
      const at = `${base}/${name}`;
      const stats = lstatSync(at, { bigint: true });
      if (stats.isSymbolicLink()) {
        entries.push({ path, kind: 'symlink', size: 0, mode: 0o777, target: readlinkSync(at) });
      } else if (stats.isDirectory()) {
        const child = openSync(at, DIR_FLAGS);
        try {
          walk(child, path);
        } finally {
          closeSync(child);
        }
      } else if (stats.isFile()) {
        const size = Number(stats.size);
        if (size > limits.fileBytes)
          throw new KeelError(
            'workspace_limit',
            `workspace file ${path} is ${size} bytes, over the ${limits.fileBytes}-byte limit`,
          );
        totalBytes += size;
        if (totalBytes > limits.workspaceBytes)
          throw new KeelError(
            'workspace_limit',
            `workspace exceeds ${limits.workspaceBytes} bytes`,
          );
        const known = previous?.get(path);
        let sha256: string;
        if (
          known !== undefined &&
          known.ino === stats.ino &&
          known.size === stats.size &&
          known.mtimeNs === stats.mtimeNs &&
          known.ctimeNs === stats.ctimeNs
        ) {
          sha256 = known.sha256;
          reused++;
        } else {
          const bytes = readListed(at, stats.ino, path);
          sha256 = sha256Hex(bytes);
          // A copy of its own: a small Buffer is a view of a shared pool, not transferable.
          if (!blobs.has(sha256)) blobs.set(sha256, new Uint8Array(bytes));
        }
        next.set(path, {
          ino: stats.ino,
          size: stats.size,
          mtimeNs: stats.mtimeNs,
          ctimeNs: stats.ctimeNs,
          sha256,
        });
        entries.push({ path, kind: 'file', sha256, size, mode: Number(stats.mode) & 0o777 });
      }
    }
  };
  const root = openSync(dir, DIR_FLAGS);
  try {
    walk(root, '');
  } finally {
    closeSync(root);
  }
  const manifest: Manifest = { version: 1, entries, totalBytes };
  const json = Buffer.from(JSON.stringify(manifest));
  return {
    entries: entries.length,
    totalBytes,
    manifestBytes: new Uint8Array(json),
    manifestSha256: sha256Hex(json),
    blobs,
    reused,
  };
}

/** Reads the file that was listed, never a link or another file swapped in under its name. */
function readListed(at: string, ino: bigint, path: string): Buffer {
  const fd = openSync(at, FILE_FLAGS);
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile() || stats.ino !== ino)
      throw new KeelError('workspace_path_invalid', `${path} changed while it was snapshotted`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
