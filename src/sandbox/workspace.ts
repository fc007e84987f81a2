// A sandbox's workspace directory on the host: the only place a sandboxed program may write. As
// root it is a size-capped tmpfs (the disk quota is the filesystem's size, so a disk fill gets
// ENOSPC, never the host's disk); it is owned by the sandbox's own uid and mode 0700, so one
// sandbox cannot read another's. A workspace is never handed to another sandbox: it goes with its
// environment. Mounts go through one long-lived helper (mount-helper.ts), not a process each.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, chownSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { mountTmpfs, unmountLazy } from './mount-helper.ts';

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
    const data = `size=${options.diskBytes},mode=0700,uid=${options.uid},gid=${options.uid}`;
    // The helper's mount(2) (nosuid, nodev); mount(8) where the helper cannot run.
    await mountTmpfs('keel-ws', workspace.dir, data).catch(() =>
      run('/usr/bin/mount', [
        '-t',
        'tmpfs',
        '-o',
        `${data},nosuid,nodev`,
        'keel-ws',
        workspace.dir,
      ]),
    );
    workspace.mounted = true;
    chownSync(workspace.dir, options.uid, options.uid);
    return workspace;
  }

  async destroy(): Promise<void> {
    if (this.mounted) {
      await unmountLazy(this.dir).catch(() => run('/usr/bin/umount', ['-l', this.dir]));
      this.mounted = false;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
