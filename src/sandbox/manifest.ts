// Workspace snapshots: a manifest lists every regular file (path, sha256, size, mode) and is itself
// stored as a blob, so a manifest's sha256 names a whole workspace. Snapshots never follow symlinks
// (a sandbox could point one at a host file; it is recorded as a link, never read through) and are
// taken while the sandbox is frozen, so nothing can swap a file under the walk. Restore writes into
// an empty workspace and hands files to the sandbox uid.
import {
  chownSync,
  closeSync,
  lchownSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { KeelError } from '../domain/keel-error.ts';
import { sha256Hex, type ArtifactStore } from '../store/artifact-store.ts';

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

export interface SnapshotLimits {
  fileBytes: number;
  workspaceBytes: number;
}

export interface SnapshotResult {
  manifestSha256: string;
  manifest: Manifest;
  /** Blobs this snapshot had to store (files that changed since any earlier snapshot). */
  newBlobs: number;
}

export async function snapshotWorkspace(
  dir: string,
  store: ArtifactStore,
  limits: SnapshotLimits,
): Promise<SnapshotResult> {
  const entries: ManifestEntry[] = [];
  let totalBytes = 0;
  let newBlobs = 0;
  const walk = async (relative: string): Promise<void> => {
    for (const name of readdirSync(join(dir, relative)).sort()) {
      const path = relative === '' ? name : `${relative}/${name}`;
      const stats = lstatSync(join(dir, path));
      if (stats.isSymbolicLink())
        entries.push({
          path,
          kind: 'symlink',
          size: 0,
          mode: 0o777,
          target: readlinkSync(join(dir, path)),
        });
      else if (stats.isDirectory()) await walk(path);
      else if (stats.isFile()) {
        if (stats.size > limits.fileBytes)
          throw new KeelError(
            'workspace_limit',
            `workspace file ${path} is ${stats.size} bytes, over the ${limits.fileBytes}-byte limit`,
          );
        totalBytes += stats.size;
        if (totalBytes > limits.workspaceBytes)
          throw new KeelError(
            'workspace_limit',
            `workspace exceeds ${limits.workspaceBytes} bytes`,
          );
        const bytes = readNoFollow(join(dir, path));
        const before = await store.has(sha256Hex(bytes));
        const sha256 = await store.put(bytes);
        if (!before) newBlobs++;
        entries.push({ path, kind: 'file', sha256, size: bytes.length, mode: stats.mode & 0o777 });
      }
    }
  };
  await walk('');
  const manifest: Manifest = { version: 1, entries, totalBytes };
  const manifestSha256 = await store.put(Buffer.from(JSON.stringify(manifest)));
  return { manifestSha256, manifest, newBlobs };
}

function readNoFollow(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if (!fstatSync(fd).isFile())
      throw new KeelError('workspace_path_invalid', `${path} is not a regular file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

export async function loadManifest(
  store: ArtifactStore,
  manifestSha256: string,
): Promise<Manifest> {
  return JSON.parse((await store.get(manifestSha256)).toString('utf8')) as Manifest;
}

/** Writes a manifest's files into an empty workspace owned by `uid`. */
export async function restoreWorkspace(
  dir: string,
  store: ArtifactStore,
  manifestSha256: string,
  uid: number,
): Promise<Manifest> {
  const manifest = await loadManifest(store, manifestSha256);
  for (const entry of manifest.entries) {
    if (entry.path.startsWith('/') || entry.path.split('/').includes('..'))
      throw new KeelError(
        'workspace_path_invalid',
        `manifest path ${entry.path} escapes the workspace`,
      );
    const target = join(dir, entry.path);
    ensureDirs(dir, dirname(entry.path), uid);
    if (entry.kind === 'symlink') symlinkSync(entry.target!, target);
    else
      writeFileSync(target, await store.get(entry.sha256!), {
        mode: entry.mode & 0o777,
        flag: 'wx',
      });
    lchownSync(target, uid, uid); // never chown through a link
  }
  return manifest;
}

function ensureDirs(root: string, relative: string, uid: number): void {
  if (relative === '.' || relative === '') return;
  let path = root;
  for (const part of relative.split('/')) {
    path = join(path, part);
    try {
      mkdirSync(path, { mode: 0o755 });
      chownSync(path, uid, uid);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
