// Workspace snapshots: a manifest lists every regular file (path, sha256, size, mode) and is itself
// stored as a blob, so a manifest's sha256 names a whole workspace. Snapshots never follow symlinks
// (a sandbox could point one at a host file; it is recorded as a link, never read through), are
// taken while the sandbox is frozen, so nothing can swap a file under the walk, and are walked in a
// worker thread (snapshot-walk.ts), never on the main thread. Restore writes into an empty
// workspace and hands files to the sandbox uid.
import { chownSync, lchownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KeelError } from '../domain/keel-error.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import { DEFAULT_MAX_FILES } from './limits.ts';
import type { Manifest } from './snapshot-walk.ts';
import { SnapshotWorker } from './snapshot-worker.ts';

export type { Manifest, ManifestEntry } from './snapshot-walk.ts';

export interface SnapshotLimits {
  fileBytes: number;
  workspaceBytes: number;
  /** Entries (files, directories, links) the workspace may hold; default DEFAULT_MAX_FILES. */
  maxFiles?: number;
}

export interface SnapshotResult {
  manifestSha256: string;
  /** Parsed on first use: the walk hands back the stored bytes, not a tree of objects. */
  readonly manifest: Manifest;
  /** Blobs this snapshot had to store (files that changed since any earlier snapshot). */
  newBlobs: number;
  /** Files whose hash was reused because nothing about them changed since the last walk. */
  reused: number;
}

let sharedWorker: SnapshotWorker | undefined;

/** The worker of callers that bring none (a SandboxManager brings its own). */
function defaultWorker(): SnapshotWorker {
  sharedWorker ??= new SnapshotWorker();
  return sharedWorker;
}

/**
 * Snapshots a workspace: the walk (listing, reading and hashing) runs in `worker`'s thread, so the
 * main thread only stores the blobs that are new — one `has` per distinct new content, not per
 * file.
 */
export async function snapshotWorkspace(
  dir: string,
  store: ArtifactStore,
  limits: SnapshotLimits,
  worker: SnapshotWorker = defaultWorker(),
): Promise<SnapshotResult> {
  const walked = await worker.walk(dir, {
    fileBytes: limits.fileBytes,
    workspaceBytes: limits.workspaceBytes,
    maxFiles: limits.maxFiles ?? DEFAULT_MAX_FILES,
  });
  let newBlobs = 0;
  for (const [sha256, bytes] of walked.blobs) {
    if (await store.has(sha256)) continue;
    await store.put(bytes);
    newBlobs++;
  }
  const manifestSha256 = await store.put(walked.manifestBytes);
  let parsed: Manifest | undefined;
  return {
    manifestSha256,
    get manifest() {
      parsed ??= JSON.parse(walked.manifestBytes.toString('utf8')) as Manifest;
      return parsed;
    },
    newBlobs,
    reused: walked.reused,
  };
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
