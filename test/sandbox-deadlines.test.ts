// Start-up and idle deadlines of sandbox environments (issue 18) on the namespace tier, through a
// real SandboxManager: a start slower than `limits.startupMs` fails the call with
// `sandbox_start_timeout` and the environment that comes up late is torn down; a kept environment
// unused past `limits.idleMs` is reclaimed, and the next call rebuilds it with the workspace the
// run left.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SandboxDriver } from '../src/sandbox/driver.ts';
import { NamespaceDriver } from '../src/sandbox/namespace-driver.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { type SandboxLifecycleEvent, SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import { KeelError } from '../src/domain/keel-error.ts';
import { sandboxRoot, skipUnless } from './support/sandbox.ts';

const skip = skipUnless('namespace');

function scene(t: { after(fn: () => Promise<void>): void }, createDelayMs = 0) {
  const { root, artifacts, cleanup } = sandboxRoot();
  const namespace = new NamespaceDriver(root);
  const created = { count: 0 };
  // The real driver, started late on demand: a host too slow to start a sandbox in time.
  const driver: SandboxDriver = {
    tier: 'namespace',
    availability: () => namespace.availability(),
    async create(spec) {
      await new Promise((resolve) => setTimeout(resolve, createDelayMs));
      const env = await namespace.create(spec);
      created.count++;
      return env;
    },
  };
  const events: SandboxLifecycleEvent[] = [];
  const manager = new SandboxManager({
    root,
    artifacts,
    drivers: { namespace: driver },
    onLifecycle: (event) => events.push(event),
  });
  t.after(async () => {
    await manager.close();
    cleanup();
  });
  return { manager, events, created };
}

const until = async (what: string, check: () => boolean) => {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

test('start-up deadline: a late start fails the call with sandbox_start_timeout; the late environment is torn down', {
  skip,
}, async (t) => {
  const { manager, events, created } = scene(t, 1_500);
  const profile = defineSandboxProfile({
    name: 'slow-start',
    tier: 'namespace',
    limits: { startupMs: 300 },
  });
  await assert.rejects(
    manager.call('run-slow', profile, (env) => env.exec({ argv: ['/bin/true'] })),
    (error: unknown) => error instanceof KeelError && error.code === 'sandbox_start_timeout',
  );
  assert.equal(created.count, 0, 'the call failed at the deadline, before the slow start ended');
  await until('the late environment reclaimed', () =>
    events.some((e) => e.kind === 'reclaimed' && e.ok),
  );
  assert.equal(events.filter((e) => e.kind === 'started').length, 0, 'no start counted');
  assert.equal(manager.environmentOf('run-slow'), undefined);
  assert.equal(manager.environmentCounts().reclaiming, 0);
});

test('idle deadline: a kept environment unused past idleMs is reclaimed; the next call rebuilds it with the workspace', {
  skip,
}, async (t) => {
  const { manager, events } = scene(t);
  const profile = defineSandboxProfile({
    name: 'kept-idle',
    tier: 'namespace',
    policy: 'resident',
    limits: { idleMs: 1_000 },
  });
  await manager.call('run-idle', profile, (env) =>
    env.exec({ argv: ['/bin/sh', '-c', 'echo kept > /workspace/note'] }),
  );
  assert.equal(manager.stateOf('run-idle'), 'idle', 'resident: kept after its call');
  await until('the idle environment reclaimed', () => manager.stateOf('run-idle') === 'released');
  assert.equal(manager.environmentCounts().idle, 0);
  const { value } = await manager.call('run-idle', profile, (env) =>
    env.exec({ argv: ['/bin/cat', '/workspace/note'] }),
  );
  assert.equal(value.stdout, 'kept\n', 'the workspace came back from the manifest');
  assert.deepEqual(
    events.filter((e) => e.kind === 'started').map((e) => (e.kind === 'started' ? e.start : '')),
    ['cold', 'cold'],
    'rebuilt after the idle reclaim',
  );
  assert.ok(events.some((e) => e.kind === 'reclaimed' && e.ok));
});

test('idle deadline: calls in time keep the environment (the deadline restarts with each call)', {
  skip,
}, async (t) => {
  const { manager, events } = scene(t);
  const profile = defineSandboxProfile({
    name: 'kept-busy',
    tier: 'namespace',
    policy: 'resident',
    limits: { idleMs: 1_000 },
  });
  for (let i = 0; i < 4; i++) {
    await manager.call('run-busy', profile, (env) => env.exec({ argv: ['/bin/true'] }));
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.equal(manager.stateOf('run-busy'), 'idle');
  assert.equal(events.filter((e) => e.kind === 'started').length, 1, 'one start, kept throughout');
});
