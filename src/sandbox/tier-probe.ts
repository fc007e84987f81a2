// Proves a tier works on this host by doing what a tool call does: create a sandbox, run `true` in
// it, destroy it. A binary that is installed but cannot run (user namespaces disabled, no ptrace)
// is reported with its own error.
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxDriver } from './driver.ts';
import { GvisorDriver } from './gvisor-driver.ts';
import { resolveLimits } from './limits.ts';
import { NamespaceDriver } from './namespace-driver.ts';
import { ProcessDriver } from './process-driver.ts';
import { TIERS, tierAvailability, type Tier } from './tiers.ts';

export interface TierReport {
  tier: Tier;
  ok: boolean;
  /** Version and cgroup layout when it works, the failure otherwise. */
  detail: string;
  fix?: string;
  coldStartMs?: number;
}

const DRIVERS: Record<Tier, (root: string) => SandboxDriver> = {
  process: (root) => new ProcessDriver(root),
  namespace: (root) => new NamespaceDriver(root),
  gvisor: (root) => new GvisorDriver(root),
};

export async function probeTiers(): Promise<TierReport[]> {
  const base = mkdtempSync(join(tmpdir(), 'keel-doctor-'));
  chmodSync(base, 0o711);
  try {
    const reports: TierReport[] = [];
    for (const tier of TIERS) reports.push(await probeTier(tier, join(base, 'sandboxes')));
    return reports;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

async function probeTier(tier: Tier, root: string): Promise<TierReport> {
  const availability = tierAvailability(tier);
  if (!availability.ok)
    return { tier, ok: false, detail: availability.reason, fix: availability.fix };
  const started = performance.now();
  try {
    const env = await DRIVERS[tier](root).create({
      id: `doctor-${tier}-${process.pid}`,
      limits: resolveLimits({ deadlineMs: 20_000 }),
      network: { allow: [] },
      keepProcesses: false,
    });
    try {
      const result = await env.exec({ argv: ['/bin/true'] });
      if (result.exitCode !== 0)
        return {
          tier,
          ok: false,
          detail: `a test command failed (exit ${result.exitCode}): ${result.stderr.trim().slice(0, 300)}`,
        };
    } finally {
      await env.destroy();
    }
    return {
      tier,
      ok: true,
      detail: availability.detail,
      coldStartMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    return {
      tier,
      ok: false,
      detail: `creating a sandbox failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
