// The `gvisor` tier: runsc (ptrace platform, no network) runs the program on a user-space kernel,
// over a read-only root that holds only /usr and a few /etc entries (or is an environment image,
// with a private /var/tmp), with the workspace as its one
// writable bind mount. runsc runs inside the environment's cgroup, so the host limits cover the
// sentry and gofer too; output travels through pipes, never files. Pausing is a real checkpoint
// (`runsc checkpoint`, later `runsc restore`): memory is released while the run waits. It never
// shares the host's network or exposes Keel's environment. A command's argv and variables reach runsc
// only in files (mode 0600, in a directory only root can enter), never on runsc's command line,
// which every host user can read in /proc.
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KeelError } from '../domain/keel-error.ts';
import type { EnvironmentSpec, ExecCommand, SandboxDriver, SandboxEnvironment } from './driver.ts';
import { assertCommandPassable, programEnv, SANDBOX_SHARED, SANDBOX_WORKSPACE } from './driver.ts';
import {
  CgroupEnvironment,
  assertNoNetworkAllowlist,
  createParts,
  destroyParts,
  type EnvironmentParts,
} from './environment-base.ts';
import {
  behindRelay,
  prepareEgressDir,
  proxyEnv,
  SANDBOX_EGRESS_DIR,
} from './egress/sandbox-relay.ts';
import { launch, type ExecResult } from './launch.ts';
import { RUNSC_STATE_DIR } from './stale-sweep.ts';
import { tierAvailability } from './tiers.ts';

const run = promisify(execFile);
/**
 * Host threads and stub processes the sentry needs beyond the program's own pids (ptrace platform).
 */
const GVISOR_PIDS_OVERHEAD = 256;
const ETC_FILES = ['passwd', 'group', 'nsswitch.conf', 'hosts', 'ld.so.cache'];
const HOLDER_ARGS = ['/bin/sh', '-c', 'exec sleep infinity'];
/** Files holding argv and variables: readable by root only. */
const SPEC_FILE_MODE = 0o600;

export class GvisorDriver implements SandboxDriver {
  readonly tier = 'gvisor' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  availability() {
    return tierAvailability('gvisor');
  }

  async create(spec: EnvironmentSpec): Promise<SandboxEnvironment> {
    // An allowlist is enforced by Keel's egress proxy, reached through the relay; without one, none.
    if (spec.egress === undefined) assertNoNetworkAllowlist(spec, this.tier);
    const parts = await createParts(spec, this.root, GVISOR_PIDS_OVERHEAD);
    if (spec.egress !== undefined) prepareEgressDir(spec.egress.dir, parts.uid);
    const environment = new GvisorEnvironment(spec, parts, this.root);
    if (spec.keepProcesses) {
      try {
        await environment.startHolder();
      } catch (error) {
        await environment.destroy();
        throw error;
      }
    }
    return environment;
  }
}

/**
 * The shared, empty root filesystem: mount points and the usual /bin → usr/bin links, nothing else.
 */
function ensureRootfs(root: string): string {
  const rootfs = join(root, '.gvisor-rootfs');
  if (existsSync(join(rootfs, 'workspace'))) return rootfs;
  for (const dir of ['usr', 'etc', 'proc', 'dev', 'tmp'])
    mkdirSync(join(rootfs, dir), { recursive: true });
  for (const [link, target] of [
    ['bin', 'usr/bin'],
    ['sbin', 'usr/sbin'],
    ['lib', 'usr/lib'],
    ['lib64', 'usr/lib64'],
  ] as const) {
    if (!existsSync(join(rootfs, link))) symlinkSync(target, join(rootfs, link));
  }
  mkdirSync(join(rootfs, 'workspace'));
  return rootfs;
}

/** The host's /usr and a few /etc files, read-only, over the shared empty root. */
function hostMounts() {
  return [
    { destination: '/usr', type: 'bind', source: '/usr', options: ['rbind', 'ro'] },
    ...ETC_FILES.filter((file) => existsSync(`/etc/${file}`)).map((file) => ({
      destination: `/etc/${file}`,
      type: 'bind',
      source: `/etc/${file}`,
      options: ['bind', 'ro'],
    })),
  ];
}

/** The mount point of /run's private tmpfs in the shared root (made once; older roots lack it). */
function ensureRunMountPoint(rootfs: string): void {
  const point = join(rootfs, 'run');
  if (!existsSync(point)) mkdirSync(point, { recursive: true });
}

/** The mount point of the shared space in the shared root (made once; older roots lack it). */
function ensureSharedMountPoint(rootfs: string): void {
  const point = join(rootfs, SANDBOX_SHARED);
  if (!existsSync(point)) mkdirSync(point, { recursive: true });
}

/** The mount point of the egress directory in the shared root (made once; older roots lack it). */
function ensureEgressMountPoint(rootfs: string): void {
  const point = join(rootfs, SANDBOX_EGRESS_DIR);
  if (!existsSync(point)) mkdirSync(point, { recursive: true });
}

class GvisorEnvironment extends CgroupEnvironment implements SandboxEnvironment {
  readonly tier = 'gvisor' as const;
  readonly pauseFreesMemory = true;
  private readonly stateDir: string;
  private readonly bundleDir: string;
  private readonly imageDir: string;
  private readonly rootfs: string;
  private holding = false;
  private paused = false;
  /** Numbers the process files of `runsc exec`, one per command. */
  private execs = 0;

  constructor(spec: EnvironmentSpec, parts: EnvironmentParts, root: string) {
    super(spec, parts);
    this.stateDir = join(root, RUNSC_STATE_DIR);
    this.bundleDir = join(root, `${spec.id}.bundle`);
    this.imageDir = join(root, `${spec.id}.image`);
    this.rootfs = ensureRootfs(root);
    ensureRunMountPoint(this.rootfs);
    if (spec.egress !== undefined) ensureEgressMountPoint(this.rootfs);
    if (spec.sharedDir !== undefined) ensureSharedMountPoint(this.rootfs);
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
  }

  private runsc(): string[] {
    return [
      '/usr/bin/runsc',
      '--root',
      this.stateDir,
      '--platform=ptrace',
      '--network=none',
      '--ignore-cgroups',
      // With egress, the relay inside connects to the proxy's socket bound in from the host: the
      // one host socket it can reach (the network stays `none`: loopback only).
      ...(this.spec.egress === undefined ? [] : ['--host-uds=open']),
    ];
  }

  /**
   * The OCI process that runs `args` as the sandbox uid with exactly `env`: no capabilities, no new
   * privileges, the file and open-files limits.
   */
  private processSpec(args: string[], env: Record<string, string>) {
    return {
      user: { uid: this.parts.uid, gid: this.parts.uid },
      args,
      cwd: SANDBOX_WORKSPACE,
      noNewPrivileges: true,
      capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
      env: Object.entries(env).map(([name, value]) => `${name}=${value}`),
      rlimits: [
        {
          type: 'RLIMIT_FSIZE',
          hard: this.spec.limits.fileBytes,
          soft: this.spec.limits.fileBytes,
        },
        {
          type: 'RLIMIT_NOFILE',
          hard: this.spec.limits.openFilesMax,
          soft: this.spec.limits.openFilesMax,
        },
      ],
    };
  }

  /** Writes the OCI bundle whose process is `args`, as the sandbox uid, with exactly `env`. */
  private writeBundle(args: string[], env: Record<string, string>): void {
    mkdirSync(this.bundleDir, { recursive: true, mode: 0o700 });
    const image = this.spec.rootfs;
    const mounts = [
      { destination: '/proc', type: 'proc', source: 'proc' },
      { destination: '/tmp', type: 'tmpfs', source: 'tmpfs' },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs' },
      // An environment image is the read-only root itself; its /var/tmp is private to the sandbox.
      // (and /run, where the egress socket's mount point is made: the image is read-only). /run is
      // private on the host's files too: declared secret files are placed there (secret-files.ts).
      ...(image === undefined
        ? [...hostMounts(), { destination: '/run', type: 'tmpfs', source: 'tmpfs' }]
        : [
            { destination: '/var/tmp', type: 'tmpfs', source: 'tmpfs' },
            { destination: '/run', type: 'tmpfs', source: 'tmpfs' },
          ]),
      {
        destination: SANDBOX_WORKSPACE,
        type: 'bind',
        source: this.workspaceDir,
        options: ['rbind', 'rw'],
      },
      // The run tree's shared space, refreshed on the host between commands: read-only inside.
      ...(this.spec.sharedDir === undefined
        ? []
        : [
            {
              destination: SANDBOX_SHARED,
              type: 'bind',
              source: this.spec.sharedDir,
              options: ['rbind', 'ro'],
            },
          ]),
      ...(this.spec.egress === undefined
        ? []
        : [
            {
              destination: SANDBOX_EGRESS_DIR,
              type: 'bind',
              source: this.spec.egress.dir,
              options: ['bind', 'ro'],
            },
          ]),
    ];
    const config = {
      ociVersion: '1.0.0',
      hostname: 'sandbox',
      // The container's first process (a one-shot command, or the holder) starts the relay; commands
      // exec'd into a holder find it running.
      process: this.processSpec(this.spec.egress === undefined ? args : behindRelay(args), env),
      root: { path: image ?? this.rootfs, readonly: true },
      mounts,
      linux: { namespaces: ['pid', 'network', 'ipc', 'uts', 'mount'].map((type) => ({ type })) },
    };
    writeFileSync(join(this.bundleDir, 'config.json'), JSON.stringify(config), {
      mode: SPEC_FILE_MODE,
    });
  }

  /**
   * Asks the program to stop (a cancel's graceful phase): `runsc kill` with SIGTERM to every process
   * of a one-shot container, or to the exec'd process (its pid inside the sandbox, from
   * `pidFile`). The host processes in the cgroup are gVisor's own, and a signal to `runsc` itself
   * is not passed on.
   */
  private terminate(pidFile: string | undefined): void {
    let target: string[] = ['--all'];
    if (pidFile !== undefined) {
      try {
        target = ['--pid', readFileSync(pidFile, 'utf8').trim()];
      } catch {
        return; // not started yet: the forced phase will end it
      }
    }
    void run('/usr/bin/runsc', [...this.runsc().slice(1), 'kill', ...target, this.id, 'TERM'], {
      env: {},
    }).catch(() => undefined);
  }

  private launchRunsc(
    argv: string[],
    command: Pick<ExecCommand, 'stdin' | 'signal' | 'stopRequested' | 'deadlineMs' | 'onOutput'>,
    killGroupOnExit: boolean,
    pidFile?: string,
  ): Promise<ExecResult> {
    return launch({
      argv,
      env: {},
      stdin: command.stdin,
      cgroup: this.parts.cgroup,
      workspaceDir: this.workspaceDir,
      signal: command.signal,
      stopRequested: command.stopRequested,
      terminate: () => this.terminate(pidFile),
      onOutput: command.onOutput,
      limits: {
        ...this.spec.limits,
        deadlineMs: command.deadlineMs ?? this.spec.limits.deadlineMs,
      },
      killGroupOnExit,
    });
  }

  async startHolder(): Promise<void> {
    await this.forget();
    this.writeBundle(HOLDER_ARGS, programEnv(undefined));
    const started = await this.launchRunsc(
      [...this.runsc(), 'run', '--detach', '--bundle', this.bundleDir, this.id],
      {},
      false,
    );
    if (started.exitCode !== 0)
      throw new KeelError(
        'sandbox_failed',
        `runsc run failed (${started.exitCode}): ${started.stderr.trim()}`,
      );
    this.holding = true;
  }

  /**
   * Removes runsc's record of the container (after a kill, a limit or a checkpoint), ignoring "does
   * not exist".
   */
  private async forget(): Promise<void> {
    // A `runsc run` that ended by itself removed its record: a `runsc delete` (a Go binary's start,
    // on the call's path) is spent only when some record of this container is left.
    if (!this.hasRecord()) return;
    await run('/usr/bin/runsc', ['--root', this.stateDir, 'delete', '--force', this.id], {
      env: {},
    }).catch(() => undefined);
  }

  /** Whether runsc's state directory holds anything named after this container. */
  private hasRecord(): boolean {
    try {
      return readdirSync(this.stateDir).some((name) => name.startsWith(this.id));
    } catch {
      return true; // unreadable: let runsc decide
    }
  }

  async exec(command: ExecCommand): Promise<ExecResult> {
    assertCommandPassable(command);
    if (this.paused) await this.resume();
    const env = programEnv(
      this.spec.egress === undefined ? command.env : { ...proxyEnv(), ...command.env },
    );
    if (!this.spec.keepProcesses) {
      this.writeBundle(command.argv, env);
      try {
        return await this.launchRunsc(
          [...this.runsc(), 'run', '--bundle', this.bundleDir, this.id],
          command,
          true,
        );
      } finally {
        await this.forget();
        // The spec holds the command's variables (secret ones too): gone once the command is.
        rmSync(join(this.bundleDir, 'config.json'), { force: true });
      }
    }
    if (!this.holding || this.parts.cgroup.pids().length === 0) await this.startHolder();
    const processFile = join(this.bundleDir, `exec-${++this.execs}.json`);
    const pidFile = join(this.bundleDir, `exec-${this.execs}.pid`);
    writeFileSync(processFile, JSON.stringify(this.processSpec(command.argv, env)), {
      mode: SPEC_FILE_MODE,
      flag: 'wx',
    });
    let result: ExecResult;
    try {
      result = await this.launchRunsc(
        [
          ...this.runsc(),
          'exec',
          '--internal-pid-file',
          pidFile,
          '--process',
          processFile,
          this.id,
        ],
        command,
        false,
        pidFile,
      );
    } finally {
      rmSync(processFile, { force: true });
      rmSync(pidFile, { force: true });
    }
    if (result.limit !== null) this.holding = false; // the limit's kill took the sentry down with the program
    return result;
  }

  /** Checkpoints the sandbox to disk and lets it exit: its memory is released until resume(). */
  async pause(): Promise<void> {
    if (!this.holding || this.paused) return;
    rmSync(this.imageDir, { recursive: true, force: true });
    await run(
      '/usr/bin/runsc',
      [...this.runsc().slice(1), 'checkpoint', '--image-path', this.imageDir, this.id],
      { env: {} },
    ).catch((error: { stderr?: string }) => {
      throw new KeelError(
        'sandbox_failed',
        `runsc checkpoint failed: ${error.stderr ?? String(error)}`,
      );
    });
    await this.parts.cgroup.killAll();
    await this.forget();
    this.paused = true;
  }

  async resume(): Promise<void> {
    if (!this.paused) return;
    const restored = await this.launchRunsc(
      [
        ...this.runsc(),
        'restore',
        '--image-path',
        this.imageDir,
        '--bundle',
        this.bundleDir,
        '--detach',
        this.id,
      ],
      {},
      false,
    );
    if (restored.exitCode !== 0)
      throw new KeelError(
        'sandbox_failed',
        `runsc restore failed (${restored.exitCode}): ${restored.stderr.trim()}`,
      );
    rmSync(this.imageDir, { recursive: true, force: true });
    this.paused = false;
  }

  async destroy(): Promise<void> {
    await this.parts.cgroup.killAll();
    await this.forget();
    rmSync(this.bundleDir, { recursive: true, force: true });
    rmSync(this.imageDir, { recursive: true, force: true });
    await destroyParts(this.parts);
  }
}
