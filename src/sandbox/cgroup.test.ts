import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { Cgroup, detectCgroups } from './cgroup.ts';
import { LAUNCHER, LAUNCHER_SHELL } from './launch.ts';

const cgroups = detectCgroups();
const skip = process.getuid?.() !== 0 ? 'needs root' : cgroups.ok ? undefined : cgroups.reason;

test('killAll empties a cgroup whose orphans outlive their parent', { skip }, async () => {
  assert.ok(cgroups.ok);
  const group = Cgroup.create(`unit-${process.pid}-${Date.now()}`, cgroups.version, {
    memoryBytes: 64 * 1024 * 1024,
    pidsMax: 48,
    cpus: 0.5,
  });
  try {
    const files = group.procsFiles();
    // The parent exits at once; the orphans it leaves (reparented away from it) stay in the cgroup.
    const script = 'for i in 1 2 3 4 5 6 7 8 9 10; do (sleep 300 &); done';
    const child = spawn(
      LAUNCHER_SHELL,
      [
        '--norc',
        '--noprofile',
        '-c',
        LAUNCHER,
        'unit',
        String(process.pid),
        String(files.length),
        ...files,
        '/bin/sh',
        '-c',
        script,
      ],
      { stdio: 'ignore' },
    );
    await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(group.pids().length, 10, 'ten orphans run without their parent');
    await group.killAll();
    assert.deepEqual(group.pids(), []);
    assert.ok(group.counters().pidsLimitHits >= 0);
  } finally {
    await group.destroy();
  }
});
