// A sandbox dies with the Keel process that owns it, whenever that process is killed — also while
// the sandbox is still being started (the window a `keel node` killed right after admitting a call
// hits): a child process starts a kept and a one-shot sandbox on a tier and SIGKILLs itself after
// a delay, swept over the whole start; afterwards no process of those sandboxes may be left (found
// by the sandbox root in their command line, or the program's marker), within a bounded wait. What
// is left on disk is the start-up sweep's, which runs here as a restarted owner's would. Every tier
// this host has; a missing one is a skip naming why.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sweepStaleSandboxes } from '../src/sandbox/stale-sweep.ts';
import { skipUnless } from './support/sandbox.ts';

const CHILD = fileURLToPath(new URL('./fixtures/owner-death-child.ts', import.meta.url));
const DELAYS_MS: Record<string, number[]> = {
  process: [0, 5, 10, 20, 30, 45, 60, 90, 150],
  namespace: [0, 5, 10, 15, 20, 25, 30, 40, 50, 70, 100],
  gvisor: [0, 20, 50, 100, 200, 350, 600],
};

/** Pids whose command line mentions any of `needles`. */
function processesWith(needles: string[]): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (needles.some((needle) => cmdline.includes(needle))) found.push(`${pid}: ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

for (const tier of ['process', 'namespace', 'gvisor'] as const) {
  describe(`owner death on ${tier}`, { skip: skipUnless(tier) }, () => {
    test('a Keel killed at any point of a sandbox start leaves no sandbox process', async (t) => {
      const base = mkdtempSync(join(tmpdir(), 'keel-owner-death-'));
      chmodSync(base, 0o711);
      const root = join(base, 'sandboxes');
      t.after(async () => {
        await sweepStaleSandboxes(root);
        rmSync(base, { recursive: true, force: true });
      });
      const marker = String(900_000_000 + Math.floor(Math.random() * 90_000_000));
      for (const delay of DELAYS_MS[tier]!) {
        const child = spawn(process.execPath, [CHILD, tier, root, String(delay), marker], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const signal = await new Promise((resolve) => child.once('exit', (_, s) => resolve(s)));
        assert.equal(signal, 'SIGKILL', stderr);
      }
      // Bounded wait: each owner's reaper needs a moment after its owner has gone.
      const needles = [root, `sleep ${marker}`];
      let left = processesWith(needles);
      for (const until = Date.now() + 20_000; left.length > 0 && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        left = processesWith(needles);
      }
      assert.deepEqual(left, [], 'sandbox processes outlived their owner');
      // The start-up sweep removes what is left on disk (cgroups, workspace mounts, runsc records).
      await sweepStaleSandboxes(root);
      const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .filter((line) => line.includes(` ${root}/`));
      assert.deepEqual(mounts, []);
    });
  });
}
