// What every tier's environment shares: the cgroup, the workspace, the sandbox uid and the teardown
// order (processes first, then the mount, then the uid). Tiers add how a command is launched and
// how pausing works.
import { KeelError } from '../domain/keel-error.ts';
import { Cgroup, detectCgroups, type CgroupCounters } from './cgroup.ts';
import type { EnvironmentSpec } from './driver.ts';
import { ensureReaper } from './reaper.ts';
import { allocateUid, releaseUid } from './uid-pool.ts';
import { Workspace } from './workspace.ts';

export interface EnvironmentParts {
  cgroup: Cgroup;
  workspace: Workspace;
  uid: number;
  /** The uid came from the pool (and goes back to it); false for a spec's fixed uid. */
  pooledUid: boolean;
}

/**
 * Creates the cgroup, uid and workspace for an environment; undoes what it made if a later part
 * fails.
 */
export async function createParts(
  spec: EnvironmentSpec,
  root: string,
  pidsOverhead = 0,
): Promise<EnvironmentParts> {
  const cgroups = detectCgroups();
  if (!cgroups.ok)
    throw new KeelError('sandbox_unavailable', `cannot create sandbox cgroups: ${cgroups.reason}`);
  ensureReaper(cgroups.version); // before the cgroup exists: no sandbox ever runs untied to Keel
  const fixedUid = spec.workspaceBind?.uid;
  const uid = fixedUid ?? allocateUid();
  const release = () => {
    if (fixedUid === undefined) releaseUid(uid);
  };
  let cgroup: Cgroup | undefined;
  try {
    cgroup = Cgroup.create(spec.id, cgroups.version, {
      memoryBytes: spec.limits.memoryBytes,
      pidsMax: spec.limits.pidsMax + pidsOverhead,
      cpus: spec.limits.cpus,
    });
    const workspace = await Workspace.create({
      root,
      id: spec.id,
      uid,
      diskBytes: spec.limits.diskBytes,
    });
    return { cgroup, workspace, uid, pooledUid: fixedUid === undefined };
  } catch (error) {
    await cgroup?.destroy().catch(() => undefined);
    release();
    throw error;
  }
}

export async function destroyParts(parts: EnvironmentParts): Promise<void> {
  await parts.cgroup.destroy();
  await parts.workspace.destroy();
  if (parts.pooledUid) releaseUid(parts.uid);
}

export function countersOf(parts: EnvironmentParts): CgroupCounters {
  return parts.cgroup.counters();
}

/**
 * Limits a launcher applies with prlimit before the tier's command: file size, open files, no core
 * dumps.
 */
export function prlimitArgs(spec: EnvironmentSpec): string[] {
  return [
    '/usr/bin/prlimit',
    `--fsize=${spec.limits.fileBytes}`,
    `--nofile=${spec.limits.openFilesMax}`,
    '--core=0',
    '--',
  ];
}

export function assertNoNetworkAllowlist(spec: EnvironmentSpec, tier: string): void {
  if (spec.network.allow.length > 0) {
    throw new KeelError(
      'sandbox_network_unsupported',
      `tier ${tier} cannot enforce a network allowlist yet; only "no network" is supported`,
      {
        details: { allow: spec.network.allow },
      },
    );
  }
}

/**
 * What every tier's environment shares: its spec, its parts (cgroup, workspace, uid), identity, and
 * the cgroup-level controls (counters, CPU freeze/thaw). Tiers add how commands are launched,
 * paused and reset.
 */
export abstract class CgroupEnvironment {
  readonly createdAt = Date.now();
  readonly id: string;
  readonly workspaceDir: string;
  protected readonly spec: EnvironmentSpec;
  protected readonly parts: EnvironmentParts;

  constructor(spec: EnvironmentSpec, parts: EnvironmentParts) {
    this.spec = spec;
    this.parts = parts;
    this.id = spec.id;
    this.workspaceDir = spec.workspaceBind?.hostDir ?? parts.workspace.dir;
  }

  get uid(): number {
    return this.parts.uid;
  }

  counters(): CgroupCounters {
    return countersOf(this.parts);
  }

  freezeCpu(): void {
    this.parts.cgroup.freeze();
  }

  thawCpu(): void {
    this.parts.cgroup.thaw();
  }
}
