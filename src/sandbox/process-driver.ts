// The `process` tier: the program runs as its own unprivileged uid, in its own cgroup and its own
// user (no nested ones), network, mount and IPC namespaces (process-namespaces.ts: private /tmp,
// /var/tmp, /dev/shm and /run per command, Keel's data directory hidden), with rlimits and a
// scrubbed environment. It still sees the host's other files and its processes, so it is NOT a
// security boundary: use it for trusted tools and development, never for model-written code. The
// program's variables travel prefixed (env-carrier) until the last step, which already runs as the
// sandbox uid: none acts on the root-run launchers (LD_PRELOAD, BASH_ENV, PERL5OPT).
import { dirname, join } from 'node:path';
import { KeelError } from '../domain/keel-error.ts';
import type { EnvironmentSpec, ExecCommand, SandboxDriver, SandboxEnvironment } from './driver.ts';
import { assertCommandPassable, programEnv } from './driver.ts';
import { carrierEnv, execWithCarriedEnv } from './env-carrier.ts';
import {
  CgroupEnvironment,
  assertNoNetworkAllowlist,
  createParts,
  destroyParts,
  prlimitArgs,
  type EnvironmentParts,
} from './environment-base.ts';
import { launch, type ExecResult } from './launch.ts';
import { PRIVATE_TMP_BYTES_MAX, processNamespaceArgs } from './process-namespaces.ts';
import { tierAvailability } from './tiers.ts';

export class ProcessDriver implements SandboxDriver {
  readonly tier = 'process' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  availability() {
    return tierAvailability('process');
  }

  async create(spec: EnvironmentSpec): Promise<SandboxEnvironment> {
    assertNoNetworkAllowlist(spec, this.tier);
    // The process tier has no mount namespace of its own to bind a read-only directory into.
    if (spec.sharedDir !== undefined)
      throw new KeelError(
        'sandbox_tier_unsupported',
        'tier process cannot mount the shared space; use tier namespace or gvisor',
        { details: { tier: this.tier } },
      );
    return new ProcessEnvironment(spec, await createParts(spec, this.root), dirname(this.root));
  }
}

class ProcessEnvironment extends CgroupEnvironment implements SandboxEnvironment {
  readonly tier = 'process' as const;
  readonly pauseFreesMemory = false;
  /** Keel's data directory (the parent of the sandbox root), hidden from the command. */
  private readonly dataDir: string;

  constructor(spec: EnvironmentSpec, parts: EnvironmentParts, dataDir: string) {
    super(spec, parts);
    this.dataDir = dataDir;
  }

  async exec(command: ExecCommand): Promise<ExecResult> {
    assertCommandPassable(command);
    const uid = String(this.parts.uid);
    const tmpBytes = Math.min(PRIVATE_TMP_BYTES_MAX, this.spec.limits.diskBytes);
    const argv = [
      ...processNamespaceArgs({ workspaceDir: this.workspaceDir, dataDir: this.dataDir, tmpBytes }),
      ...prlimitArgs(this.spec),
      '/usr/bin/setpriv',
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
      ...execWithCarriedEnv(this.workspaceDir, command.argv),
    ];
    const env = { ...programEnv(command.env), HOME: this.workspaceDir };
    return launch({
      argv,
      env: carrierEnv(env),
      stdin: command.stdin,
      cgroup: this.parts.cgroup,
      workspaceDir: this.workspaceDir,
      signal: command.signal,
      stopRequested: command.stopRequested,
      onOutput: command.onOutput,
      limits: {
        ...this.spec.limits,
        deadlineMs: command.deadlineMs ?? this.spec.limits.deadlineMs,
      },
      killGroupOnExit: !this.spec.keepProcesses,
    });
  }

  async pause(): Promise<void> {
    this.parts.cgroup.freeze();
  }

  async resume(): Promise<void> {
    this.parts.cgroup.thaw();
  }

  destroy(): Promise<void> {
    return destroyParts(this.parts);
  }
}

export const workspaceRootUnder = (dataDir: string): string => join(dataDir, 'sandboxes');
