// The `namespace` tier: bubblewrap puts the program in new pid, mount, ipc, uts, net, user and cgroup namespaces,
// with read-only system directories, a private /tmp and /proc, the workspace as the only writable host path, no
// network, --die-with-parent and a new session, all inside the environment's cgroup. bwrap is launched with an
// empty environment, because its own environment is readable inside at /proc/1/environ. When the environment keeps
// processes between calls, a holder (`sleep infinity` under bwrap) owns the namespaces and each command enters
// them with nsenter.
import { spawn } from 'node:child_process';
import { KeelError } from '../errors/keel-error.ts';
import type { EnvironmentSpec, ExecCommand, SandboxDriver, SandboxEnvironment } from './driver.ts';
import { programEnv, SANDBOX_WORKSPACE } from './driver.ts';
import { assertNoNetworkAllowlist, countersOf, createParts, destroyParts, prlimitArgs, type EnvironmentParts } from './environment-base.ts';
import { launch, LAUNCHER, LAUNCHER_SHELL, type ExecResult } from './launch.ts';
import { tierAvailability } from './tiers.ts';

/** /etc entries programs need to run (dynamic loader, users, locale, TLS roots); the rest of /etc stays hidden. */
const ETC_ENTRIES = ['ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'passwd', 'group', 'nsswitch.conf', 'hosts', 'localtime', 'ssl', 'ca-certificates', 'alternatives'];
const HOLDER_START_TIMEOUT_MS = 5_000;

export class NamespaceDriver implements SandboxDriver {
  readonly tier = 'namespace' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  availability() {
    return tierAvailability('namespace');
  }

  async create(spec: EnvironmentSpec): Promise<SandboxEnvironment> {
    assertNoNetworkAllowlist(spec, this.tier);
    const parts = createParts(spec, this.root);
    const environment = new NamespaceEnvironment(spec, parts);
    if (spec.keepProcesses) {
      try {
        await environment.startHolder();
      } catch (error) {
        await destroyParts(parts);
        throw error;
      }
    }
    return environment;
  }
}

/** The bwrap command line up to (not including) the program: mounts, namespaces, the empty environment. */
export function bwrapArgs(workspaceDir: string, env: Record<string, string>): string[] {
  const args = [
    '/usr/bin/bwrap', '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'sandbox',
    '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin', '--symlink', 'usr/lib', '/lib',
    '--symlink', 'usr/lib64', '/lib64', '--dir', '/etc',
  ];
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', workspaceDir, SANDBOX_WORKSPACE, '--chdir', SANDBOX_WORKSPACE, '--clearenv');
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  args.push('--');
  return args;
}

class NamespaceEnvironment implements SandboxEnvironment {
  readonly tier = 'namespace' as const;
  readonly pauseFreesMemory = false;
  readonly createdAt = Date.now();
  readonly id: string;
  readonly workspaceDir: string;
  private readonly spec: EnvironmentSpec;
  private readonly parts: EnvironmentParts;
  /** Host pid of the holder inside the namespaces (its pid 2), when the environment keeps processes. */
  private holderPid: number | undefined;

  constructor(spec: EnvironmentSpec, parts: EnvironmentParts) {
    this.spec = spec;
    this.parts = parts;
    this.id = spec.id;
    this.workspaceDir = parts.workspace.dir;
  }

  private dropTo(): string[] {
    const uid = String(this.parts.uid);
    return ['/usr/bin/setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];
  }

  /**
   * Starts the holder under bwrap in the cgroup: its pid comes from bwrap's --info-fd, and it is ready when it has
   * printed a line from inside (namespaces, mounts and id maps all in place; entering earlier can find them half-made).
   */
  async startHolder(): Promise<void> {
    const files = this.parts.cgroup.procsFiles();
    const argv = [...this.dropTo(), ...bwrapArgs(this.workspaceDir, {}).slice(0, -1), '--info-fd', '3', '--', '/bin/sh', '-c', 'echo ready; exec sleep infinity'];
    const child = spawn(LAUNCHER_SHELL, ['-c', LAUNCHER.replace('[ "$fd" -gt 2 ]', '[ "$fd" -gt 3 ]'), 'keel-holder', String(files.length), ...files, ...argv], {
      env: {}, cwd: '/', stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true,
    });
    let info = '';
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.holderPid = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new KeelError('sandbox_failed', `bwrap holder did not start: ${stderr}`)), HOLDER_START_TIMEOUT_MS);
      const check = () => {
        const match = /"child-pid":\s*(\d+)/.exec(info);
        if (match === null || !stdout.includes('ready')) return;
        clearTimeout(timer);
        resolve(Number(match[1]));
      };
      (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => { info += chunk.toString(); check(); });
      child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); check(); });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new KeelError('sandbox_failed', `bwrap holder exited with ${code}: ${stderr}`));
      });
    });
    for (const stream of [child.stdout!, child.stderr!, child.stdio[3] as NodeJS.ReadableStream & { destroy(): void }]) stream.destroy();
    child.unref();
  }

  async exec(command: ExecCommand): Promise<ExecResult> {
    // A limit or a cancel kills the whole cgroup, holder included; the workspace survives, so start a new holder.
    if (this.holderPid !== undefined && !this.parts.cgroup.pids().includes(this.holderPid)) await this.startHolder();
    const env = programEnv(command.env);
    const argv = this.holderPid === undefined
      ? [...prlimitArgs(this.spec), ...this.dropTo(), ...bwrapArgs(this.workspaceDir, env), ...command.argv]
      : [...prlimitArgs(this.spec), '/usr/bin/nsenter', '-t', String(this.holderPid), '--all', '-S', String(this.parts.uid), '-G', String(this.parts.uid), '-w', '--', ...command.argv];
    return launch({
      argv, env: this.holderPid === undefined ? {} : env, stdin: command.stdin, cgroup: this.parts.cgroup, workspaceDir: this.workspaceDir,
      signal: command.signal, limits: { ...this.spec.limits, deadlineMs: command.deadlineMs ?? this.spec.limits.deadlineMs },
      killGroupOnExit: this.holderPid === undefined,
    });
  }

  async pause(): Promise<void> {
    this.parts.cgroup.freeze();
  }

  async resume(): Promise<void> {
    this.parts.cgroup.thaw();
  }

  get uid(): number {
    return this.parts.uid;
  }

  counters() {
    return countersOf(this.parts);
  }

  freezeCpu(): void {
    this.parts.cgroup.freeze();
  }

  thawCpu(): void {
    this.parts.cgroup.thaw();
  }

  async resetAndVerify(): Promise<boolean> {
    await this.parts.cgroup.killAll();
    this.holderPid = undefined;
    this.parts.workspace.wipe();
    const clean = this.parts.cgroup.pids().length === 0 && this.parts.workspace.isClean();
    if (clean && this.spec.keepProcesses) await this.startHolder();
    return clean;
  }

  destroy(): Promise<void> {
    this.holderPid = undefined;
    return destroyParts(this.parts);
  }
}

