// Sandbox lifecycle metrics (issue 18) on the namespace tier, through a real SandboxManager and the
// metrics exposition: a call's environment is counted as a cold start, a warm-pool hit or a resumed
// pause, with its start time; a call in progress is `busy`, a paused environment `paused`, a pool's
// ready ones `warm`; every teardown is a reclaim, and one whose teardown fails is counted failed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SandboxDriver, SandboxEnvironment } from '../src/sandbox/driver.ts';
import { NamespaceDriver } from '../src/sandbox/namespace-driver.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import {
  type EnvironmentCounts,
  SandboxManager,
  type SandboxLifecycleEvent,
} from '../src/sandbox/sandbox-manager.ts';
import { Telemetry } from '../src/telemetry/telemetry.ts';
import { sandboxRoot, skipUnless } from './support/sandbox.ts';

/** The value of one sample line (`name{labels}`) in an exposition, or undefined without it. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('lifecycle metrics: cold, warm and resumed starts with their times; busy, paused, warm environments; reclaims ok and failed', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const { root, artifacts, cleanup } = sandboxRoot();
  const namespace = new NamespaceDriver(root);
  // The next environment whose teardown must fail: a reclaim that fails is what the counter is for.
  let failNextDestroy = false;
  const driver: SandboxDriver = {
    tier: 'namespace',
    availability: () => namespace.availability(),
    async create(spec) {
      const env = await namespace.create(spec);
      const destroy = env.destroy.bind(env);
      return Object.assign(env, {
        async destroy() {
          await destroy();
          if (failNextDestroy) {
            failNextDestroy = false;
            throw new Error('teardown failed (injected)');
          }
        },
      }) satisfies SandboxEnvironment;
    },
  };
  const events: SandboxLifecycleEvent[] = [];
  const telemetry = new Telemetry();
  const manager = new SandboxManager({
    root,
    artifacts,
    drivers: { namespace: driver },
    onLifecycle: (event) => {
      events.push(event);
      telemetry.sandboxLifecycle(event);
    },
  });
  telemetry.attachSandboxes(() => manager.environmentCounts());
  t.after(async () => {
    await manager.close();
    cleanup();
  });
  const oneShot = defineSandboxProfile({ name: 'lm-once', tier: 'namespace' });
  const pooled = defineSandboxProfile({ name: 'lm-pooled', tier: 'namespace', warm: 1 });
  const pausing = defineSandboxProfile({ name: 'lm-pause', tier: 'namespace', policy: 'pause' });
  const exec = (env: SandboxEnvironment) => env.exec({ argv: ['/bin/true'] });

  let during: EnvironmentCounts | undefined;
  await manager.call('run-cold', oneShot, async (env) => {
    during = manager.environmentCounts();
    return exec(env);
  });
  assert.equal(during?.busy, 1, 'a call in progress is busy');

  await manager.prewarm(pooled);
  assert.equal(manager.environmentCounts().warm, 1, "the pool's ready environment is warm");
  await manager.call('run-warm', pooled, exec);

  await manager.call('run-pause', pausing, exec);
  assert.equal(manager.environmentCounts().paused, 1, 'paused after its call');
  await manager.call('run-pause', pausing, exec);

  failNextDestroy = true;
  await manager.endRun('run-pause');

  const starts = events.filter((e) => e.kind === 'started');
  assert.deepEqual(
    starts.map((e) => e.start),
    ['cold', 'warm', 'cold', 'resumed'],
  );
  assert.ok(starts.every((e) => e.seconds > 0 && e.tier === 'namespace'));
  const reclaims = events.filter((e) => e.kind === 'reclaimed');
  assert.deepEqual(
    reclaims.map((e) => e.ok),
    [true, true, false],
    'one-shot and pooled calls reclaim at once; the paused one at its run end, where teardown failed',
  );

  const { body } = await telemetry.render();
  const starts_ = (start: string) =>
    sample(body, `keel_sandbox_starts_total{tier="namespace",start="${start}"}`);
  assert.deepEqual([starts_('cold'), starts_('warm'), starts_('resumed')], [2, 1, 1]);
  assert.equal(sample(body, 'keel_sandbox_start_seconds_count{tier="namespace",start="cold"}'), 2);
  assert.ok(
    (sample(body, 'keel_sandbox_start_seconds_sum{tier="namespace",start="cold"}') ?? 0) > 0,
  );
  assert.equal(sample(body, 'keel_sandbox_reclaims_total{tier="namespace",outcome="ok"}'), 2);
  assert.equal(sample(body, 'keel_sandbox_reclaims_total{tier="namespace",outcome="failed"}'), 1);
  // Now: nothing busy, paused or reclaiming; the pool has started a replacement (or is starting it).
  assert.equal(sample(body, 'keel_sandbox_environments{state="busy"}'), 0);
  assert.equal(sample(body, 'keel_sandbox_environments{state="paused"}'), 0);
  assert.equal(sample(body, 'keel_sandbox_environments{state="reclaiming"}'), 0);
  assert.notEqual(sample(body, 'keel_sandbox_environments{state="warm"}'), undefined);
});
