import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { resolveLimits } from './limits.ts';
import { NamespaceDriver } from './namespace-driver.ts';
import { tierAvailability } from './tiers.ts';
import { WarmPool } from './warm-pool.ts';
import { sandboxRoot } from '../../test/support/sandbox.ts';

const availability = tierAvailability('namespace');
const skip = availability.ok ? undefined : availability.reason;

function pool(singleUse: boolean, size = 1) {
  const { root, cleanup } = sandboxRoot();
  const driver = new NamespaceDriver(root);
  const specOf = () => ({
    id: `pool-${randomBytes(4).toString('hex')}`,
    limits: resolveLimits({}),
    network: { allow: [] },
    keepProcesses: true,
  });
  return { pool: new WarmPool({ driver, size, singleUse, specOf }), cleanup };
}

test('a used sandbox returns to the pool only after a verified clean: no process, no file, fresh holder', {
  skip,
}, async () => {
  const { pool: warm, cleanup } = pool(false);
  try {
    await warm.refill();
    const env = warm.take()!;
    assert.ok(env !== undefined);
    await env.exec({
      argv: ['/bin/sh', '-c', 'echo secret > /workspace/left-behind; (sleep 600 &); echo ok'],
    });
    assert.equal(await warm.giveBack(env), true);
    const again = warm.take()!;
    assert.equal(again, env, 'the same sandbox is reused');
    const look = await again.exec({ argv: ['/bin/sh', '-c', 'ls -A /workspace; ps -eo args'] });
    assert.ok(
      !look.stdout.includes('left-behind') && !look.stdout.includes('sleep 600'),
      look.stdout,
    );
    await again.destroy();
  } finally {
    await warm.close();
    cleanup();
  }
});

test('a single-use profile never reuses a sandbox; a sandbox that fails the clean check is destroyed', {
  skip,
}, async () => {
  const single = pool(true);
  try {
    await single.pool.refill();
    const env = single.pool.take()!;
    assert.equal(await single.pool.giveBack(env), false);
  } finally {
    await single.pool.close();
    single.cleanup();
  }
  const dirty = pool(false);
  try {
    await dirty.pool.refill();
    const env = dirty.pool.take()!;
    // Something the reset cannot undo: a mount inside the workspace (its directory cannot be
    // removed while mounted).
    mkdirSync(join(env.workspaceDir, 'stuck'));
    execFileSync('/usr/bin/mount', [
      '-t',
      'tmpfs',
      '-o',
      'size=1m',
      'keel-test',
      join(env.workspaceDir, 'stuck'),
    ]);
    writeFileSync(join(env.workspaceDir, 'stuck', 'x'), 'x');
    assert.equal(await dirty.pool.giveBack(env), false);
    assert.equal(dirty.pool.rejected, 1);
    assert.ok(
      !readFileSync('/proc/self/mountinfo', 'utf8').includes(env.workspaceDir),
      'the refused sandbox was destroyed, mounts and all',
    );
  } finally {
    await dirty.pool.close();
    dirty.cleanup();
  }
});
