// Sandbox scenario: cold start-to-exit per tier (create a sandbox, run /bin/true, see it exit;
// teardown is timed apart since it is off the call's path), warm-pool acquisition and warm
// start-to-exit, namespace sandboxes per second with a few in flight, and the memory an idle
// resident sandbox holds (from its cgroup). A tier missing on this host is recorded as skipped with
// the reason. It renders its own RESULTS.md section.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SandboxDriver, SandboxEnvironment } from '../../src/sandbox/driver.ts';
import { GvisorDriver } from '../../src/sandbox/gvisor-driver.ts';
import { resolveLimits } from '../../src/sandbox/limits.ts';
import { NamespaceDriver } from '../../src/sandbox/namespace-driver.ts';
import { ProcessDriver } from '../../src/sandbox/process-driver.ts';
import { spliceSection } from '../support.ts';
import { tierAvailability, type Tier } from '../../src/sandbox/tiers.ts';
import { WarmPool } from '../../src/sandbox/warm-pool.ts';
import { progress } from '../support.ts';

const COLD_SAMPLES: Record<Tier, number> = { process: 60, namespace: 60, gvisor: 20 };
const WARM_SAMPLES = 200;
const WARM_POOL_SIZE = 4;
const THROUGHPUT_SECONDS = 5;
const THROUGHPUT_IN_FLIGHT = 4;
const IDLE_SANDBOXES: Record<Tier, number> = { process: 0, namespace: 20, gvisor: 4 };

export const SANDBOX_TARGETS = {
  warmP50Ms: 2,
  namespaceColdP50Ms: 15,
  namespacePerSecond: 100,
  gvisorColdP50Ms: 250,
} as const;

type Percentiles = { p50: number; p90: number; p99: number; n: number };
export interface SandboxBenchResult {
  tiers: Record<
    Tier,
    | { skipped: string }
    | { coldStartMs: Percentiles; teardownMs: Percentiles; idleMemoryBytes?: number }
  >;
  warm: { acquisitionMs: Percentiles; startToExitMs: Percentiles } | { skipped: string };
  namespacePerSecond: number | { skipped: string };
  /**
   * What this host gives at best right now: spawning /bin/true, and bwrap running /bin/true with no
   * Keel around it.
   */
  floor: { spawnTrueMs: Percentiles; bareBwrapMs: Percentiles | undefined };
  loadAverage: number;
}

export async function runSandboxBench(options: { quick: boolean }): Promise<SandboxBenchResult> {
  const base = mkdtempSync(join(tmpdir(), 'keel-bench-sbx-'));
  chmodSync(base, 0o711);
  const root = join(base, 'sandboxes');
  const drivers: Record<Tier, SandboxDriver> = {
    process: new ProcessDriver(root),
    namespace: new NamespaceDriver(root),
    gvisor: new GvisorDriver(root),
  };
  const scale = options.quick ? 0.2 : 1;
  try {
    const tiers = {} as SandboxBenchResult['tiers'];
    for (const tier of ['process', 'namespace', 'gvisor'] as const) {
      const availability = tierAvailability(tier);
      if (!availability.ok) {
        tiers[tier] = { skipped: `${availability.reason} (fix: ${availability.fix})` };
        continue;
      }
      progress(`sandbox: ${tier} cold starts`);
      const cold = await coldStarts(
        drivers[tier],
        Math.max(5, Math.round(COLD_SAMPLES[tier] * scale)),
      );
      const idle =
        IDLE_SANDBOXES[tier] === 0
          ? undefined
          : await idleMemory(drivers[tier], Math.max(2, Math.round(IDLE_SANDBOXES[tier] * scale)));
      tiers[tier] = { ...cold, ...(idle === undefined ? {} : { idleMemoryBytes: idle }) };
    }
    const namespaceOk = tierAvailability('namespace').ok;
    const skipped = { skipped: 'namespace tier unavailable' };
    progress('sandbox: warm pool');
    const warm = namespaceOk
      ? await warmPool(drivers.namespace, Math.round(WARM_SAMPLES * scale))
      : skipped;
    progress('sandbox: namespace sandboxes per second');
    const perSecond = namespaceOk
      ? await throughput(drivers.namespace, options.quick ? 2 : THROUGHPUT_SECONDS)
      : skipped;
    progress('sandbox: floor (bare spawn, bare bwrap)');
    const floor = await floorOf(namespaceOk, options.quick ? 10 : 40);
    return { tiers, warm, namespacePerSecond: perSecond, floor, loadAverage: loadavg()[0]! };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const spec = (keepProcesses: boolean) => ({
  id: `b${randomBytes(6).toString('hex')}`,
  limits: resolveLimits({}),
  network: { allow: [] as Array<{ host: string; port: number }> },
  keepProcesses,
});

async function coldStarts(
  driver: SandboxDriver,
  samples: number,
): Promise<{ coldStartMs: Percentiles; teardownMs: Percentiles }> {
  const cold: number[] = [];
  const teardown: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const env = await driver.create(spec(false));
    const result = await env.exec({ argv: ['/bin/true'] });
    cold.push(performance.now() - started);
    if (result.exitCode !== 0)
      throw new Error(`${driver.tier}: /bin/true failed: ${result.stderr}`);
    const destroying = performance.now();
    await env.destroy();
    teardown.push(performance.now() - destroying);
  }
  return { coldStartMs: percentiles(cold), teardownMs: percentiles(teardown) };
}

async function warmPool(driver: SandboxDriver, samples: number) {
  const pool = new WarmPool({
    driver,
    size: WARM_POOL_SIZE,
    specOf: () => spec(true),
  });
  const acquisition: number[] = [];
  const startToExit: number[] = [];
  try {
    await pool.refill();
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      const env = pool.take();
      acquisition.push(performance.now() - started);
      if (env === undefined)
        throw new Error(
          'warm pool empty: the benchmark returns every sandbox before the next take',
        );
      await env.exec({ argv: ['/bin/true'] });
      startToExit.push(performance.now() - started);
      await pool.giveBack(env);
      await pool.refill(); // its replacement, started by take(), is ready before the next take
    }
    return {
      acquisitionMs: percentiles(acquisition),
      startToExitMs: percentiles(startToExit),
    };
  } finally {
    await pool.close();
  }
}

async function throughput(driver: SandboxDriver, seconds: number): Promise<number> {
  let completed = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: THROUGHPUT_IN_FLIGHT }, async () => {
      while (performance.now() < until) {
        const env = await driver.create(spec(false));
        await env.exec({ argv: ['/bin/true'] });
        await env.destroy();
        completed++;
      }
    }),
  );
  return completed / ((performance.now() - started) / 1000);
}

function spawnToExit(file: string, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'ignore', env: {} });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}

/**
 * The host's own floor at this moment, to read the tier figures against: a bare spawn, and bwrap
 * alone.
 */
async function floorOf(withBwrap: boolean, samples: number): Promise<SandboxBenchResult['floor']> {
  const spawnTrue: number[] = [];
  const bare: number[] = [];
  const bwrap = [
    '--unshare-all',
    '--die-with-parent',
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--',
    '/bin/true',
  ];
  for (let i = 0; i < samples; i++) {
    spawnTrue.push(await spawnToExit('/bin/true', []));
    if (withBwrap) bare.push(await spawnToExit('/usr/bin/bwrap', bwrap));
  }
  return {
    spawnTrueMs: percentiles(spawnTrue),
    bareBwrapMs: withBwrap ? percentiles(bare) : undefined,
  };
}

/**
 * Memory charged to each idle resident sandbox's cgroup (holder, namespaces, page tables),
 * averaged.
 */
async function idleMemory(driver: SandboxDriver, count: number): Promise<number> {
  const envs: SandboxEnvironment[] = [];
  try {
    for (let i = 0; i < count; i++) envs.push(await driver.create(spec(true)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    return envs.reduce((sum, env) => sum + env.counters().memoryBytes, 0) / envs.length;
  } finally {
    await Promise.all(envs.map((env) => env.destroy()));
  }
}

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), n: sorted.length };
}

const ms = (value: number) => `${value < 1 ? value.toFixed(3) : value.toFixed(1)} ms`;
const met = (ok: boolean) => (ok ? 'met' : '**not met**');

/** The RESULTS.md section for this scenario. */
export function renderSandboxSection(
  result: SandboxBenchResult | { skipped: true; reason: string },
): string {
  if ('skipped' in result && result.skipped === true)
    return `## Sandboxes\n\nSkipped: ${result.reason}\n`;
  const r = result as SandboxBenchResult;
  const lines = [
    '## Sandboxes',
    '',
    `Measured by \`bench/scenarios/sandbox.ts\` on this host (load average ${r.loadAverage.toFixed(2)} at the end: the machine is shared, so`,
    'these are upper bounds of what an idle host gives). Cold start-to-exit = create the sandbox (cgroup, tmpfs workspace, uid) + run',
    '`/bin/true` in it until it has exited; teardown is timed apart, since it happens after the call has returned.',
    '',
    '| Target | Measured | Met? |',
    '|---|---|---|',
  ];
  const warm = 'skipped' in r.warm ? undefined : r.warm;
  const ns = r.tiers.namespace;
  const gv = r.tiers.gvisor;
  lines.push(
    `| Warm-pool acquisition p50 ≤ ${SANDBOX_TARGETS.warmP50Ms} ms | ${warm ? `${ms(warm.acquisitionMs.p50)} (p99 ${ms(warm.acquisitionMs.p99)})` : 'skipped'} | ${warm ? met(warm.acquisitionMs.p50 <= SANDBOX_TARGETS.warmP50Ms) : '—'} |`,
  );
  lines.push(
    `| \`namespace\` cold start p50 ≤ ${SANDBOX_TARGETS.namespaceColdP50Ms} ms | ${'skipped' in ns ? ns.skipped : ms(ns.coldStartMs.p50)} | ${'skipped' in ns ? '—' : met(ns.coldStartMs.p50 <= SANDBOX_TARGETS.namespaceColdP50Ms)} |`,
  );
  const perSecond = typeof r.namespacePerSecond === 'number' ? r.namespacePerSecond : undefined;
  lines.push(
    `| ≥ ${SANDBOX_TARGETS.namespacePerSecond} \`namespace\` sandboxes/s | ${perSecond === undefined ? 'skipped' : `${perSecond.toFixed(1)}/s (${THROUGHPUT_IN_FLIGHT} in flight, create + run + destroy)`} | ${perSecond === undefined ? '—' : met(perSecond >= SANDBOX_TARGETS.namespacePerSecond)} |`,
  );
  lines.push(
    `| \`gvisor\` cold start p50 ≤ ${SANDBOX_TARGETS.gvisorColdP50Ms} ms | ${'skipped' in gv ? gv.skipped : ms(gv.coldStartMs.p50)} | ${'skipped' in gv ? '—' : met(gv.coldStartMs.p50 <= SANDBOX_TARGETS.gvisorColdP50Ms)} |`,
  );
  lines.push(
    '',
    '| Tier | Cold start p50 | p90 | Teardown p50 | Idle resident sandbox memory | Samples |',
    '|---|---|---|---|---|---|',
  );
  for (const [tier, value] of Object.entries(r.tiers)) {
    if ('skipped' in value) lines.push(`| ${tier} | skipped: ${value.skipped} | | | | |`);
    else
      lines.push(
        `| ${tier} | ${ms(value.coldStartMs.p50)} | ${ms(value.coldStartMs.p90)} | ${ms(value.teardownMs.p50)} | ${value.idleMemoryBytes === undefined ? '—' : `${(value.idleMemoryBytes / 1024 / 1024).toFixed(2)} MiB`} | ${value.coldStartMs.n} |`,
      );
  }
  const floor = r.floor;
  lines.push(
    '',
    `Floor on this host during the run: spawning \`/bin/true\` from Node p50 ${ms(floor.spawnTrueMs.p50)} (p90 ${ms(floor.spawnTrueMs.p90)})` +
      (floor.bareBwrapMs === undefined
        ? '.'
        : `; bare \`bwrap --unshare-all … /bin/true\` (as root, no cgroup, no workspace, no uid drop) p50 ${ms(floor.bareBwrapMs.p50)} (p90 ${ms(floor.bareBwrapMs.p90)}).`) +
      " The difference to the tier figures is Keel's own work: cgroup, tmpfs workspace (a mount(2) by Keel's mount helper), uid, the Perl entry that joins the cgroup, sets the rlimits and drops to the sandbox uid before it execs bwrap, the seccomp filter, and Node's own spawn.",
  );
  if (warm)
    lines.push(
      '',
      `Warm pool (${WARM_POOL_SIZE} resident namespace sandboxes, each used once and replaced): acquisition p50 ${ms(warm.acquisitionMs.p50)}, p99 ${ms(warm.acquisitionMs.p99)}; acquisition + run \`/bin/true\` p50 ${ms(warm.startToExitMs.p50)}, p99 ${ms(warm.startToExitMs.p99)}.`,
    );
  return `${lines.join('\n')}\n`;
}

const SECTION_START = '<!-- sandbox section: written by bench/scenarios/sandbox.ts -->';
const SECTION_END = '<!-- end of sandbox section -->';

/**
 * `report` with the sandbox section replaced (or appended): lets the scenario be refreshed alone.
 */
export function spliceSandboxSection(report: string, result: SandboxBenchResult): string {
  return spliceSection(report, SECTION_START, SECTION_END, renderSandboxSection(result));
}
