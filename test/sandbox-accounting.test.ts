// Environment memory-time through the real engine: the same agent holds 64 MiB in its sandbox,
// sleeps durably, and runs one more command. Resident keeps the memory through the sleep; rebuild
// destroys the sandbox. The GiB·s difference must match the arithmetic: 64 MiB × the idle seconds,
// give or take sampling. The manager reports that memory-time, labelled with the run's tenant,
// through the callback it is given: after each call and at the run's end.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { SandboxManager, type EnvironmentTime } from '../src/sandbox/sandbox-manager.ts';
import type { ToolContext } from '../src/sdk/types.ts';
import { releaseEnvironmentsOnRunEnd } from '../src/sandbox/run-endings.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';
import { newManager, sandboxRoot, skipUnless } from './support/sandbox.ts';

const HELD_MIB = 64;
const IDLE_MS = 1_500;
const { manager, cleanup } = newManager();
after(cleanup);

function holder(policy: 'resident' | 'rebuild') {
  const tools = sandboxTools({
    manager,
    profile: defineSandboxProfile({
      name: `holder-${policy}`,
      tier: 'namespace',
      policy,
      limits: { fileBytes: 128 * 1024 * 1024 },
    }),
  });
  return defineAgent({
    name: `holder-${policy}`,
    version: '1',
    async run(ctx) {
      // /tmp is the sandbox's private tmpfs: its pages are charged to the sandbox's cgroup and live as long as it does.
      await ctx.tool(tools.exec, {
        argv: ['/bin/sh', '-c', `head -c ${HELD_MIB * 1024 * 1024} /dev/zero > /tmp/held`],
      });
      await ctx.sleep(IDLE_MS);
      await ctx.tool(tools.exec, { argv: ['/bin/true'] });
      return 'done';
    },
  });
}

test('GiB·s: resident holds memory through the wait, rebuild does not, by about held × idle', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const agents = [holder('resident'), holder('rebuild')];
  const keel = await startKeel({ agents });
  const unbind = releaseEnvironmentsOnRunEnd(keel.store, manager);
  t.after(async () => {
    unbind();
    await keel.close();
  });
  const measured: Record<string, { gibSeconds: number; idleSeconds: number }> = {};
  for (const policy of ['resident', 'rebuild'] as const) {
    const id = (await keel.request('POST', '/v1/runs', { agent: `holder-${policy}` })).body.id;
    const done = await keel.waitForRun(id, (run) => TERMINAL.has(run.status), 60_000);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    await manager.endRun(id);
    const tools = (await keel.store.loadJournal(id)).filter((entry) => entry.kind === 'tool');
    const idleSeconds = (tools[1]!.startedAt! - tools[0]!.endedAt!) / 1000;
    measured[policy] = { gibSeconds: manager.accountingOf(id)!.gibSeconds, idleSeconds };
  }
  const resident = measured.resident!;
  const rebuild = measured.rebuild!;
  const heldGiB = HELD_MIB / 1024;
  const predicted = heldGiB * resident.idleSeconds;
  const difference = resident.gibSeconds - rebuild.gibSeconds;
  t.diagnostic(
    `resident ${resident.gibSeconds.toFixed(4)} GiB·s, rebuild ${rebuild.gibSeconds.toFixed(4)} GiB·s, predicted difference ${predicted.toFixed(4)}`,
  );
  assert.ok(
    resident.gibSeconds > rebuild.gibSeconds,
    'resident costs more memory-time than rebuild',
  );
  assert.ok(
    difference > 0.6 * predicted && difference < 1.6 * predicted + 0.01,
    `difference ${difference} vs predicted ${predicted}`,
  );
  assert.ok(
    rebuild.gibSeconds < 0.35 * resident.gibSeconds,
    `rebuild ${rebuild.gibSeconds} should hold memory only during its calls`,
  );
});

test('memory-time reaches onEnvironmentTime with the tenant, after the call and for the idle time until the run ends', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const { root, artifacts, cleanup: removeRoot } = sandboxRoot();
  const reports: EnvironmentTime[] = [];
  const reporting = new SandboxManager({
    root,
    artifacts,
    onEnvironmentTime: (time) => reports.push(time),
  });
  t.after(async () => {
    await reporting.close();
    removeRoot();
  });
  const tools = sandboxTools({
    profile: defineSandboxProfile({
      name: 'reported',
      tier: 'namespace',
      policy: 'resident',
      limits: { fileBytes: 128 * 1024 * 1024 },
    }),
  });
  const runId = `reported-${process.pid}`;
  const ctx: ToolContext = {
    executionId: `${runId}.1`,
    runId,
    tenantId: 'ten_reported',
    attempt: 1,
    signal: new AbortController().signal,
    node: { dataDir: undefined, sandboxManager: () => reporting },
  };
  await tools.exec.run(
    { argv: ['/bin/sh', '-c', `head -c ${HELD_MIB * 1024 * 1024} /dev/zero > /tmp/held`] },
    ctx,
  );
  assert.ok(
    reports.length >= 1 &&
      reports.every((r) => r.runId === runId && r.tenantId === 'ten_reported' && r.gibSeconds > 0),
    JSON.stringify(reports),
  );
  const afterCall = reports.reduce((sum, r) => sum + r.gibSeconds, 0);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS)); // the resident environment holds its memory meanwhile
  await reporting.endRun(runId);
  const total = reports.reduce((sum, r) => sum + r.gibSeconds, 0);
  const accounted = reporting.accountingOf(runId)!.gibSeconds;
  assert.ok(
    Math.abs(total - accounted) < 1e-9,
    `reported ${total} GiB·s = accounted ${accounted} GiB·s`,
  );
  const idleExpected = (HELD_MIB / 1024) * (IDLE_MS / 1000);
  assert.ok(
    total - afterCall > 0.7 * idleExpected,
    `the idle resident time was reported at the run's end: ${total - afterCall} of about ${idleExpected} GiB·s`,
  );
});
