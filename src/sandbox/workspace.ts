// A sandbox's workspace directory on the host: the only place a sandboxed program may write. As
// root it is a size-capped tmpfs (the disk quota is the filesystem's size, so a disk fill gets
// ENOSPC, never the host's disk); it is owned by the sandbox's own uid and mode 0700, so one
// sandbox cannot read another's. It never follows symlinks out of itself when wiping.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';

// Async, so a mount never stalls the event loop (and every other sandbox starting beside it).
const run = promisify(execFile);

export interface WorkspaceOptions {
  root: string;
  id: string;
  uid: number;
  diskBytes: number;
}

export class Workspace {
  readonly dir: string;
  readonly uid: number;
  private mounted = false;

  private constructor(dir: string, uid: number) {
    this.dir = dir;
    this.uid = uid;
  }

  static async create(options: WorkspaceOptions): Promise<Workspace> {
    mkdirSync(options.root, { recursive: true, mode: 0o711 });
    chmodSync(options.root, 0o711);
    const workspace = new Workspace(join(options.root, options.id), options.uid);
    mkdirSync(workspace.dir, { mode: 0o700 });
    await run('/usr/bin/mount', [
      '-t',
      'tmpfs',
      '-o',
      `size=${options.diskBytes},mode=0700,nosuid,nodev,uid=${options.uid},gid=${options.uid}`,
      'keel-ws',
      workspace.dir,
    ]);
    workspace.mounted = true;
    chownSync(workspace.dir, options.uid, options.uid);
    return workspace;
  }

  /**
   * True when nothing is left in the workspace and exactly one mount covers it: what a warm-pool
   * reuse requires.
   */
  isClean(): boolean {
    if (!existsSync(this.dir) || readdirSync(this.dir).length !== 0) return false;
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((line) => line.split(' ')[4] === this.dir);
    return mounts.length === (this.mounted ? 1 : 0);
  }

  /** Empties the workspace without following links out of it. */
  wipe(): void {
    for (const entry of readdirSync(this.dir))
      rmSync(join(this.dir, entry), { recursive: true, force: true });
  }

  async destroy(): Promise<void> {
    if (this.mounted) {
      await run('/usr/bin/umount', ['-l', this.dir]);
      this.mounted = false;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
