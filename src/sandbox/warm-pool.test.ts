import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sandboxRoot } from '../../test/support/sandbox.ts';
import { resolveLimits } from './limits.ts';
import { NamespaceDriver } from './namespace-driver.ts';
import { tierAvailability } from './tiers.ts';
import { WarmPool } from './warm-pool.ts';

const availability = tierAvailability('namespace');
const skip = availability.ok ? undefined : availability.reason;

test('a used sandbox is never handed on: it is destroyed and a fresh one (new uid, new workspace) takes its place', {
  skip,
}, async () => {
  const { root, cleanup } = sandboxRoot();
  const warm = new WarmPool({
    driver: new NamespaceDriver(root),
    size: 1,
    specOf: () => ({
      id: `pool-${randomBytes(4).toString('hex')}`,
      limits: resolveLimits({}),
      network: { allow: [] },
      keepProcesses: true,
    }),
  });
  try {
    await warm.refill();
    const env = warm.take()!;
    assert.ok(env !== undefined);
    await env.exec({ argv: ['/bin/sh', '-c', 'echo secret > /workspace/left-behind'] });
    await warm.giveBack(env);
    await warm.refill();
    const next = warm.take()!;
    assert.notEqual(next, env);
    assert.notEqual(next.uid, env.uid, 'a fresh uid');
    assert.notEqual(next.workspaceDir, env.workspaceDir, 'a fresh workspace');
    const look = await next.exec({ argv: ['/bin/sh', '-c', 'ls -A /workspace'] });
    assert.equal(look.stdout, '');
    await warm.giveBack(next);
  } finally {
    await warm.close();
    cleanup();
  }
});
