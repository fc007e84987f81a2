// Environment lifecycle through the real engine: an agent writes a file in round 1, waits for a
// human, and reads it in round 2 — under every policy. While it waits, the environment is observed:
// destroyed (one-shot, rebuild), frozen or checkpointed (pause), alive (resident). `auto` is
// checked against the inequality with given costs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { POLICIES, type LifecyclePolicy } from '../src/sandbox/lifecycle-policy.ts';
import { defineSandboxProfile, type SandboxProfileInput } from '../src/sandbox/profile.ts';
import { releaseEnvironmentsOnRunEnd } from '../src/sandbox/run-endings.ts';
import type { SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import type { Tier } from '../src/sandbox/tiers.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';
import { newManager, skipUnless } from './support/sandbox.ts';

const { manager, cleanup } = newManager();
after(cleanup);

function scribe(name: string, profile: SandboxProfileInput) {
  const tools = sandboxTools({ manager, profile: defineSandboxProfile(profile) });
  return defineAgent({
    name,
    version: '1',
    async run(ctx, input: { text: string }) {
      await ctx.tool(tools.exec, {
        argv: [
          '/bin/sh',
          '-c',
          'mkdir -p notes && printf "%s" "$1" > notes/round1.txt',
          'sh',
          input.text,
        ],
      });
      const go = await ctx.waitForInput<string>('go');
      const read = await ctx.tool(tools.read_file, { path: 'notes/round1.txt' });
      const listed = await ctx.tool(tools.list_files, {});
      return { round1: read.content, go, files: listed.files.map((f) => f.path) };
    },
  });
}

function freezerState(envId: string): string {
  for (const path of [
    `/sys/fs/cgroup/freezer/keel-sandbox/${envId}/freezer.state`,
    `/sys/fs/cgroup/keel-sandbox/${envId}/cgroup.freeze`,
  ]) {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      // the other cgroup layout
    }
  }
  return 'absent';
}

/** What must be true of the environment while the run waits for its human. */
function assertWhileWaiting(
  policy: LifecyclePolicy,
  tier: Tier,
  m: SandboxManager,
  runId: string,
): void {
  const state = m.stateOf(runId);
  const env = m.environmentOf(runId);
  switch (policy) {
    case 'one-shot':
    case 'rebuild':
      assert.equal(state, 'released', 'the sandbox is destroyed while the run waits');
      assert.equal(env, undefined);
      return;
    case 'pause':
      assert.equal(state, 'paused');
      if (tier === 'gvisor')
        assert.equal(
          env!.counters().memoryBytes < 48 * 1024 * 1024 && freezerState(env!.id) !== 'FROZEN',
          true,
          'checkpointed: no sandbox process holds memory',
        );
      else assert.match(freezerState(env!.id), /FROZEN|^1$/, 'frozen by the cgroup freezer');
      return;
    case 'resident':
    case 'auto':
      assert.equal(state, 'idle', 'resident: kept alive across the wait');
      assert.ok(env !== undefined);
      return;
  }
}

for (const tier of ['namespace', 'gvisor'] as const) {
  describe(`round 1 writes, the run waits, round 2 reads — ${tier}`, {
    skip: skipUnless(tier),
  }, () => {
    const policies = tier === 'namespace' ? POLICIES : (['rebuild', 'pause'] as const);
    for (const policy of policies) {
      test(`policy ${policy}`, async (t) => {
        const name = `scribe-${tier}-${policy}`;
        // auto with a memory price of zero: holding is free, so it keeps the environment (the
        // inequality is tested below)
        const agent = scribe(name, {
          name,
          tier,
          policy,
          auto: { memoryPricePerGiBSecond: 0, transitionPricePerSecond: 1, expectedIdleSeconds: 1 },
        });
        const keel = await startKeel({ agents: [agent] });
        const unbind = releaseEnvironmentsOnRunEnd(keel.store, manager);
        t.after(async () => {
          unbind();
          await keel.close();
        });
        const id = (
          await keel.request('POST', '/v1/runs', {
            agent: name,
            input: { text: `written under ${policy}` },
          })
        ).body.id;
        await keel.waitForRun(
          id,
          (run) => run.status === 'waiting' || TERMINAL.has(run.status),
          60_000,
        );
        assertWhileWaiting(policy, tier, manager, id);
        assert.equal(
          (await keel.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: 'yes' })).status,
          202,
        );
        const done = await keel.waitForRun(id, (run) => TERMINAL.has(run.status), 60_000);
        assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
        assert.deepEqual(done.result, {
          round1: `written under ${policy}`,
          go: 'yes',
          files: ['notes', 'notes/round1.txt'],
        });
        const journal = await keel.store.loadJournal(id);
        const exec = journal.find((entry) => entry.kind === 'tool' && entry.name === 'exec');
        assert.match(
          (exec?.result as any)?.workspace.manifest,
          /^[0-9a-f]{64}$/,
          'the manifest is committed with the step',
        );
        await waitFor(
          () => manager.stateOf(id) === 'released',
          'the environment is released when the run ends',
        );
      });
    }
  });
}

describe('auto decides from memoryPrice × memoryGiB × expectedIdle > transitionCost', () => {
  const holdMemory = ['/bin/sh', '-c', 'head -c 33554432 /dev/zero > /tmp/hold; echo held'];
  const cases = [
    {
      tier: 'namespace',
      expect: 'keep',
      auto: { memoryPricePerGiBSecond: 1, expectedIdleSeconds: 10, rebuildCost: 100 },
    },
    {
      tier: 'namespace',
      expect: 'rebuild',
      auto: { memoryPricePerGiBSecond: 1, expectedIdleSeconds: 10, rebuildCost: 0.01 },
    },
    // A freeze frees nothing: however cheap the pause, auto must not pick it on the namespace tier.
    {
      tier: 'namespace',
      expect: 'rebuild',
      auto: {
        memoryPricePerGiBSecond: 1,
        expectedIdleSeconds: 10,
        pauseCost: 0,
        rebuildCost: 0.01,
      },
    },
    {
      tier: 'gvisor',
      expect: 'pause',
      auto: {
        memoryPricePerGiBSecond: 1,
        expectedIdleSeconds: 10,
        pauseCost: 0.01,
        rebuildCost: 100,
      },
    },
  ] as const;
  for (const [i, c] of cases.entries()) {
    test(`${c.tier}: ${JSON.stringify(c.auto)} → ${c.expect}`, {
      skip: skipUnless(c.tier),
    }, async () => {
      const profile = defineSandboxProfile({
        name: `auto-${i}`,
        tier: c.tier,
        policy: 'auto',
        auto: c.auto,
      });
      const runId = `auto-run-${i}-${process.pid}`;
      await manager.call(runId, profile, (env) => env.exec({ argv: [...holdMemory] }));
      const [decision] = manager.decisionsOf(runId);
      assert.equal(decision!.action, c.expect, decision!.reason);
      // The inequality with the measured memory: ≥ 32 MiB held → hold value ≥ 1 × 0.03125 × 10
      assert.ok(decision!.holdValue >= 0.3, `hold value ${decision!.holdValue}`);
      assert.equal(
        manager.stateOf(runId),
        c.expect === 'keep' ? 'idle' : c.expect === 'pause' ? 'paused' : 'released',
      );
      await manager.endRun(runId);
    });
  }
});

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('cancelling a run kills its sandboxed command at once and releases the environment', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const tools = sandboxTools({
    manager,
    profile: defineSandboxProfile({ name: 'sleeper', tier: 'namespace', policy: 'resident' }),
  });
  const sleeper = defineAgent({
    name: 'sleeper',
    version: '1',
    async run(ctx) {
      await ctx.tool(tools.exec, { argv: ['/bin/sleep', '600'] });
      return 'woke';
    },
  });
  const keel = await startKeel({ agents: [sleeper] });
  const unbind = releaseEnvironmentsOnRunEnd(keel.store, manager);
  t.after(async () => {
    unbind();
    await keel.close();
  });
  const id = (await keel.request('POST', '/v1/runs', { agent: 'sleeper' })).body.id;
  await waitFor(() => manager.stateOf(id) === 'busy', 'the command is running');
  const env = manager.environmentOf(id)!;
  const started = Date.now();
  assert.equal((await keel.request('POST', `/v1/runs/${id}/cancel`)).status < 300, true);
  const done = await keel.waitForRun(id, (run) => TERMINAL.has(run.status), 30_000);
  assert.equal(done.status, 'cancelled');
  assert.ok(Date.now() - started < 10_000, 'the sleep did not run to its end');
  await waitFor(() => manager.stateOf(id) === 'released', 'the environment is released');
  assert.throws(() => env.counters(), 'its cgroup is gone');
});

test('rebuild with prewarm: rebuilt before the next call is expected, warm for it, released again if it does not come', {
  skip: skipUnless('namespace'),
}, async () => {
  const profile = defineSandboxProfile({
    name: 'prewarmed',
    tier: 'namespace',
    policy: 'rebuild',
    prewarm: true,
    auto: { expectedIdleSeconds: 0.5 },
  });
  const runId = `prewarm-${process.pid}`;
  await manager.call(runId, profile, (env) =>
    env.exec({ argv: ['/bin/sh', '-c', 'echo kept > /workspace/note'] }),
  );
  assert.equal(manager.stateOf(runId), 'released', 'destroyed while the model thinks');
  await waitFor(() => manager.stateOf(runId) === 'idle', 'pre-warmed without a call');
  const second = await manager.call(runId, profile, (env) =>
    env.exec({ argv: ['/bin/cat', '/workspace/note'] }),
  );
  assert.equal(second.cold, false, 'the call found its environment ready');
  assert.equal(
    second.value.stdout,
    'kept\n',
    'the pre-warmed environment was restored from the manifest',
  );
  // No third call: the next pre-warmed environment is released again after its hold time.
  await waitFor(() => manager.stateOf(runId) === 'idle', 'pre-warmed again');
  await waitFor(
    () => manager.stateOf(runId) === 'released',
    'released when the expected call did not come',
    15_000,
  );
  await manager.endRun(runId);
});
