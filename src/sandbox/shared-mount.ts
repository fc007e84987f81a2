// The run tree's shared space as files on the host, for environments whose profile mounts it
// (`sharedSpace`): one directory per environment, which the tier binds read-only at /shared. Each
// refresh copies in the files whose version changed since the last one and removes the ones no
// longer listed; a file is replaced by a rename, so a program never reads half a write. It never
// writes the shared space itself (ctx.shared.write does) and never touches the workspace.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SharedFile, SharedFileInfo } from '../domain/shared-space.ts';

/** Where the store's shared space is read from (the node wires it to the store). */
export interface SharedSpaceReader {
  /**
   * The root run keying the space of `runId`'s tree (within `tenantId`) and the latest version of
   * each of its files, by path; an unknown run or another tenant's: no files.
   */
  list(tenantId: string, runId: string): Promise<{ rootRunId: string; files: SharedFileInfo[] }>;
  read(rootRunId: string, path: string): Promise<SharedFile | null>;
}

const DIR_MODE = 0o755;
const FILE_MODE = 0o644;

export class SharedMount {
  /** The directory the tier binds at /shared. */
  readonly dir: string;
  private readonly base: string;
  private readonly staging: string;
  /** Materialized versions by path, and the root they belong to. */
  private readonly versions = new Map<string, number>();
  private rootRunId: string | undefined;

  /**
   * Makes `<base>/space` (bound in, readable by the sandbox uid) and `<base>/staging` (where a new
   * version is written before its rename; same filesystem, never bound in).
   */
  constructor(base: string) {
    this.base = base;
    this.dir = join(base, 'space');
    this.staging = join(base, 'staging');
    mkdirSync(this.dir, { recursive: true, mode: DIR_MODE });
    mkdirSync(this.staging, { mode: 0o700 });
  }

  /** Brings the directory to the space's current versions (only what changed is read). */
  async refresh(reader: SharedSpaceReader, tenantId: string, runId: string): Promise<void> {
    const { rootRunId, files } = await reader.list(tenantId, runId);
    if (this.rootRunId !== rootRunId) {
      // Another tree's space (never expected: an environment serves one run): start empty.
      for (const path of [...this.versions.keys()]) await this.remove(path);
      this.rootRunId = rootRunId;
    }
    const listed = new Map(files.map((file) => [file.path, file.version]));
    for (const path of [...this.versions.keys()]) if (!listed.has(path)) await this.remove(path);
    for (const [path, version] of listed) {
      if (this.versions.get(path) === version) continue;
      const file = await reader.read(rootRunId, path);
      if (file === null) continue; // gone since the list: the next refresh removes it
      if (await this.place(path, file.content)) this.versions.set(path, file.version);
    }
  }

  /**
   * Writes one file by rename. A path the filesystem cannot hold beside another (`a` and `a/b`, a
   * segment over the name limit) is left out and tried again at the next refresh.
   */
  private async place(path: string, content: string): Promise<boolean> {
    const target = join(this.dir, path);
    const temp = join(this.staging, randomBytes(8).toString('hex'));
    try {
      await mkdir(dirname(target), { recursive: true, mode: DIR_MODE });
      await writeFile(temp, content, { mode: FILE_MODE });
      await rename(temp, target);
      return true;
    } catch {
      await rm(temp, { force: true });
      return false;
    }
  }

  /** Removes one file and the directories it leaves empty. */
  private async remove(path: string): Promise<void> {
    this.versions.delete(path);
    await rm(join(this.dir, path), { force: true });
    for (let dir = dirname(path); dir !== '.'; dir = dirname(dir)) {
      try {
        await rmdir(join(this.dir, dir));
      } catch {
        break; // not empty, or already gone
      }
    }
  }

  /** Deletes the directory and its copies (the environment is gone). */
  async destroy(): Promise<void> {
    this.versions.clear();
    await rm(this.base, { recursive: true, force: true });
  }
}
