// Removes what a crashed Keel process left behind: sandbox cgroups (members killed), runsc's
// container records, workspace mounts and checkpoint files of environments whose owner is dead.
// Keel runs it when its sandbox plane attaches, before any call (node-sandboxes.ts). Environment ids begin with the owner's pid
// (`k<pid>-…`); anything without that prefix, or whose owner is alive, is never touched.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cgroup, detectCgroups } from './cgroup.ts';

const run = promisify(execFile);
/** runsc's state directory under the sandbox root (gvisor-driver.ts keeps its containers there). */
export const RUNSC_STATE_DIR = '.runsc-state';
const OWNED_ID = /^k(\d+)-/;

/**
 * An environment id owned by this process: the sweep of another process recognises it by the pid.
 */
export const ownedEnvironmentId = (suffix: string): string => `k${process.pid}-${suffix}`;

function ownerDead(id: string): boolean {
  const match = OWNED_ID.exec(id);
  if (match === null) return false;
  const pid = Number(match[1]);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Sweeps stale cgroups (host-wide) and stale workspaces under `root`; returns what it removed. */
export async function sweepStaleSandboxes(root: string): Promise<string[]> {
  const removed: string[] = [];
  const cgroups = detectCgroups();
  if (cgroups.ok && process.getuid?.() === 0) {
    for (const name of Cgroup.existingNames(cgroups.version).filter(ownerDead)) {
      await Cgroup.existing(name, cgroups.version)
        .destroy()
        .then(
          () => removed.push(`cgroup ${name}`),
          () => undefined,
        );
    }
  }
  if (!existsSync(root)) return removed;
  removed.push(...(await sweepRunscRecords(join(root, RUNSC_STATE_DIR))));
  const mounted = new Set(
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[4]),
  );
  for (const entry of readdirSync(root)) {
    const id = entry.replace(/\.(bundle|image|shared)$/, '');
    if (!ownerDead(id)) continue;
    const path = join(root, entry);
    if (mounted.has(path)) await run('/usr/bin/umount', ['-l', path]).catch(() => undefined);
    rmSync(path, { recursive: true, force: true });
    removed.push(`workspace ${entry}`);
  }
  return removed;
}

/** Deletes runsc's records of containers whose owner is dead (their processes are already gone). */
async function sweepRunscRecords(stateDir: string): Promise<string[]> {
  if (!existsSync(stateDir) || !existsSync('/usr/bin/runsc')) return [];
  const listed = await run('/usr/bin/runsc', ['--root', stateDir, 'list', '-quiet'], {
    env: {},
  }).catch(() => ({ stdout: '' }));
  const removed: string[] = [];
  for (const id of listed.stdout.split('\n').filter((line) => line !== '' && ownerDead(line))) {
    await run('/usr/bin/runsc', ['--root', stateDir, 'delete', '--force', id], { env: {} }).then(
      () => removed.push(`runsc ${id}`),
      () => undefined,
    );
  }
  return removed;
}
