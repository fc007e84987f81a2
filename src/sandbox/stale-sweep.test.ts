import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sandboxRoot } from '../../test/support/sandbox.ts';
import { Cgroup, detectCgroups } from './cgroup.ts';
import { sweepStaleSandboxes } from './stale-sweep.ts';
import { Workspace } from './workspace.ts';

const cgroups = detectCgroups();
const skip = process.getuid?.() !== 0 ? 'needs root' : cgroups.ok ? undefined : cgroups.reason;
const DEAD_PID = 4_194_305; // above the default pid_max: never a live process

test("a dead owner's cgroups and mounted workspaces are swept; a live owner's are left alone", {
  skip,
}, async (t) => {
  assert.ok(cgroups.ok);
  const { root, cleanup } = sandboxRoot();
  const limits = { memoryBytes: 32 * 1024 * 1024, pidsMax: 8, cpus: 0.1 };
  const deadId = `k${DEAD_PID}-sweep${process.pid}`;
  const liveId = `k${process.ppid}-sweep${process.pid}`;
  // What a process that died left behind: the sweep must remove both.
  Cgroup.create(deadId, cgroups.version, limits);
  await Workspace.create({ root, id: deadId, uid: 65534, diskBytes: 1 << 20 });
  const live = {
    cgroup: Cgroup.create(liveId, cgroups.version, limits),
    workspace: await Workspace.create({ root, id: liveId, uid: 65534, diskBytes: 1 << 20 }),
  };
  t.after(async () => {
    await live.cgroup.destroy();
    await live.workspace.destroy();
    cleanup();
  });
  const removed = await sweepStaleSandboxes(root);
  assert.deepEqual(removed.sort(), [`cgroup ${deadId}`, `workspace ${deadId}`]);
  assert.ok(!Cgroup.existingNames(cgroups.version).includes(deadId));
  assert.ok(Cgroup.existingNames(cgroups.version).includes(liveId));
  assert.equal(existsSync(join(root, deadId)), false);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  assert.ok(!mounts.includes(join(root, deadId)) && mounts.includes(join(root, liveId)));
});
