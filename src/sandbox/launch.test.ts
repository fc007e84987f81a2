import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import type { Cgroup, CgroupCounters } from './cgroup.ts';
import { launch } from './launch.ts';
import { resolveLimits } from './limits.ts';

// The cgroup stands in here (the threat suite drives real ones): what is pinned is the order of
// events the kernel's counters cannot be made to produce on demand — the program dies of a limit
// and exits before the next read of the counters.
function cgroupCrossedOnExit(crossed: Partial<CgroupCounters>) {
  const state = { exited: false, kills: 0 };
  const zero = { memoryBytes: 0, peakMemoryBytes: 0, cpuSeconds: 0, oomKills: 0, pidsLimitHits: 0 };
  const cgroup = {
    counters: (): CgroupCounters => (state.exited ? { ...zero, ...crossed } : zero),
    killAll: async () => {
      state.kills++;
    },
  } as unknown as Cgroup;
  return { cgroup, state };
}

function run(cgroup: Cgroup, state: { exited: boolean }, script: string) {
  return launch({
    argv: [],
    env: {},
    cgroup,
    limits: resolveLimits({ deadlineMs: 10_000 }),
    workspaceDir: tmpdir(),
    killGroupOnExit: false,
    start: async () => {
      const child = spawn('/bin/sh', ['-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
      // Registered before launch's own listener: the counters show the limit from the exit on.
      child.once('exit', () => (state.exited = true));
      return child;
    },
  });
}

test('a pids limit the program failed of before the poll saw it still ends the cgroup', async () => {
  const { cgroup, state } = cgroupCrossedOnExit({ pidsLimitHits: 1 });
  const result = await run(cgroup, state, 'exit 2');
  assert.equal(result.limit, 'pids_limit');
  assert.equal(state.kills, 1, "the fork bomb's other branches are killed with the cgroup");
});

test('an OOM kill seen only after the exit ends the cgroup too', async () => {
  const { cgroup, state } = cgroupCrossedOnExit({ oomKills: 1 });
  const result = await run(cgroup, state, 'exit 0');
  assert.equal(result.limit, 'oom');
  assert.equal(state.kills, 1);
});

test('a program that succeeds despite a refused fork keeps its environment', async () => {
  const { cgroup, state } = cgroupCrossedOnExit({ pidsLimitHits: 1 });
  const result = await run(cgroup, state, 'exit 0');
  assert.equal(result.limit, null);
  assert.equal(state.kills, 0);
});
