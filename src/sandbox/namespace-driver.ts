// The `namespace` tier: bubblewrap puts the program in new pid, mount, ipc, uts, net, user and
// cgroup namespaces, with read-only system directories (the host's /usr, or an environment image as
// the whole root, with a private /var/tmp), a private /tmp and /proc, the workspace as
// the only writable host path, no network, --die-with-parent and a new session, all inside the
// environment's cgroup (bwrap is exec'd by a helper already in it, bwrap-entry.ts). bwrap is launched
// with an empty environment, because its own environment is readable inside at /proc/1/environ.
// The program's variables reach bwrap through a pipe (--args), never its command line, which every
// host user can read in /proc. When the environment keeps processes between calls, a holder (`sleep
// infinity` under bwrap) owns the namespaces and each command enters them through enter-namespaces
// (no_new_privs, empty bounding set, variables never seen by the host-side launchers). Every program
// runs under the tier's seccomp filter (seccomp-filter.ts), loaded by bwrap or by the entry helper.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { finished } from 'node:stream/promises';
import { KeelError } from '../domain/keel-error.ts';
import type {
  EnvironmentSpec,
  ExecCommand,
  SandboxDriver,
  SandboxEnvironment,
  ServiceCommand,
  ServiceProcess,
} from './driver.ts';
import { assertCommandPassable, programEnv, SANDBOX_SHARED, SANDBOX_WORKSPACE } from './driver.ts';
import { enterArgv } from './enter-namespaces.ts';
import {
  behindRelay,
  prepareEgressDir,
  proxyEnv,
  SANDBOX_EGRESS_DIR,
} from './egress/sandbox-relay.ts';
import { carrierEnv } from './env-carrier.ts';
import {
  CgroupEnvironment,
  assertNoNetworkAllowlist,
  createParts,
  destroyParts,
  type EnvironmentParts,
} from './environment-base.ts';
import { bwrapEntryArgv } from './bwrap-entry.ts';
import { maskedStdio } from './inherited-fds.ts';
import { seccompFilter } from './seccomp-filter.ts';
import { launch, type ExecResult } from './launch.ts';
import { tierAvailability } from './tiers.ts';

/**
 * /etc entries programs need to run (dynamic loader, users, locale, TLS roots); the rest of /etc
 * stays hidden.
 */
const ETC_ENTRIES = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'localtime',
  'ssl',
  'ca-certificates',
  'alternatives',
];
const BWRAP_START_TIMEOUT_MS = 10_000;
/** The descriptor bwrap reports its child's pid on (`--info-fd`). */
const INFO_FD = 3;
/** The descriptor bwrap reads the program's variables from (`--args`). */
const ARGS_FD = 5;
/** The descriptor bwrap reads the seccomp filter from (`--seccomp`). */
const SECCOMP_FD = 6;
/** This host's filter (undefined: no table for its architecture, no filter). */
const SECCOMP = seccompFilter();

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
    // An allowlist is enforced by Keel's egress proxy, reached through the relay; without one, none.
    if (spec.egress === undefined) assertNoNetworkAllowlist(spec, this.tier);
    // One process more than the program's: the entry helper that reaps bwrap's leftovers.
    const parts = await createParts(spec, this.root, 1);
    if (spec.egress !== undefined) prepareEgressDir(spec.egress.dir, parts.uid);
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

/**
 * The bwrap command line up to (not including) the program: mounts, namespaces, the empty
 * environment. The program's variables are not in it: see envArgsData.
 */
export function bwrapArgs(
  workspaceDir: string,
  options: {
    rootfs?: string | undefined;
    egressDir?: string | undefined;
    readOnlyBinds?: EnvironmentSpec['readOnlyBinds'];
    sharedDir?: string | undefined;
  } = {},
): string[] {
  const { rootfs, egressDir, sharedDir } = options;
  const readOnlyBinds = [
    ...(options.readOnlyBinds ?? []),
    ...(sharedDir === undefined ? [] : [{ source: sharedDir, target: SANDBOX_SHARED }]),
  ];
  const args = [
    '/usr/bin/bwrap',
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
    ...(rootfs === undefined
      ? hostRootArgs()
      : readOnlyBinds.length === 0
        ? imageRootArgs(rootfs)
        : imageEntriesArgs(rootfs)),
    ...readOnlyBinds.flatMap(({ source, target }) => ['--ro-bind', source, target]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    ...(egressDir === undefined ? [] : ['--ro-bind', egressDir, SANDBOX_EGRESS_DIR]),
    '--bind',
    workspaceDir,
    SANDBOX_WORKSPACE,
    '--chdir',
    SANDBOX_WORKSPACE,
    '--clearenv',
    '--',
  ];
  return args;
}

/**
 * An environment image as the root: read-only, shared by every sandbox; /var/tmp gets a private
 * tmpfs (and /tmp, /proc, /dev theirs below), so what the sandbox uid may write lands in its own
 * layer.
 */
function imageRootArgs(rootfs: string): string[] {
  // /run is a private tmpfs too: the egress socket's mount point is made there (the image is
  // read-only, so a mount point it lacks could not be created).
  return ['--ro-bind', rootfs, '/', '--tmpfs', '/var/tmp', '--tmpfs', '/run'];
}

/**
 * The image's top-level entries each bound read-only on bwrap's own root, instead of the image as
 * the root: the same files, but host paths can then be bound in at paths the image lacks (a
 * read-only root has no room for their mount points). Used only when there are such binds.
 */
function imageEntriesArgs(rootfs: string): string[] {
  const args: string[] = [];
  for (const entry of readdirSync(rootfs, { withFileTypes: true })) {
    const path = join(rootfs, entry.name);
    if (entry.isSymbolicLink()) args.push('--symlink', readlinkSync(path), `/${entry.name}`);
    else if (entry.isDirectory()) args.push('--ro-bind', path, `/${entry.name}`);
  }
  return [...args, '--tmpfs', '/var/tmp', '--tmpfs', '/run'];
}

/** The host's /usr read-only, the usual /bin → usr/bin links and a few /etc entries. */
function hostRootArgs(): string[] {
  const args = [
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/sbin',
    '/sbin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--dir',
    '/etc',
  ];
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  // A private /run, as on an image: where declared secret files are placed (secret-files.ts).
  args.push('--tmpfs', '/run');
  return args;
}

/** bwrap's `--setenv` options for `env`, NUL-separated, as `--args FD` reads them. */
export function envArgsData(env: Record<string, string>): Buffer {
  const parts = Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]);
  return Buffer.from(parts.map((part) => `${part}\0`).join(''), 'utf8');
}

class NamespaceEnvironment extends CgroupEnvironment implements SandboxEnvironment {
  readonly tier = 'namespace' as const;
  readonly pauseFreesMemory = false;
  /**
   * Host pid of the holder inside the namespaces (its pid 2), when the environment keeps processes.
   */
  private holderPid: number | undefined;

  constructor(spec: EnvironmentSpec, parts: EnvironmentParts) {
    super(spec, parts);
  }

  /**
   * Starts bwrap as the sandbox uid through the entry helper (bwrap-entry.ts), which joins the
   * cgroup before it execs bwrap: nothing of the sandbox ever runs outside the cgroup, and nothing
   * waits on Keel to be let in (a --block-fd hand-over would let a killed Keel's sandbox run on,
   * outside the cgroup). Resolves once bwrap reports its child on --info-fd (namespaces made), or
   * rejects with bwrap's stderr when it exits before.
   */
  private startBlocked(
    program: string[],
    env: Record<string, string>,
  ): Promise<{ child: ChildProcess; childPid: number }> {
    const args = [
      ...bwrapArgs(this.workspaceDir, {
        rootfs: this.spec.rootfs,
        egressDir: this.spec.egress?.dir,
        readOnlyBinds: this.spec.readOnlyBinds,
        sharedDir: this.spec.sharedDir,
      }).slice(0, -1),
      '--args',
      String(ARGS_FD),
      '--info-fd',
      String(INFO_FD),
      ...(SECCOMP === undefined ? [] : ['--seccomp', String(SECCOMP_FD)]),
      '--',
      ...(this.spec.egress === undefined ? program : behindRelay(program)),
    ];
    const [file, ...entryArgs] = bwrapEntryArgv({
      procsFiles: this.parts.cgroup.procsFiles(),
      limits: this.spec.limits,
      uid: this.parts.uid,
      bwrap: args,
    });
    const child = spawn(file!, entryArgs, {
      env: {},
      cwd: '/',
      detached: true,
      stdio: maskedStdio(['pipe', 'pipe', 'pipe', 'pipe', 'ignore', 'pipe', 'pipe']),
    });
    const envPipe = (child.stdio as unknown as Writable[])[ARGS_FD]!;
    envPipe.on('error', () => undefined); // bwrap gone early: its exit is reported below
    envPipe.end(envArgsData(env));
    const seccompPipe = (child.stdio as unknown as Writable[])[SECCOMP_FD]!;
    seccompPipe.on('error', () => undefined);
    seccompPipe.end(SECCOMP ?? Buffer.alloc(0));
    const info = child.stdio[INFO_FD] as Readable;
    // bwrap closes its end once it has used it; a reset then is expected, not an error.
    info.on('error', () => undefined);
    return new Promise((resolve, reject) => {
      let childPid: number | undefined;
      let settled = false;
      let report = '';
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new KeelError('sandbox_failed', message));
      };
      const succeed = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ child, childPid: childPid! });
      };
      const timer = setTimeout(
        () => fail(`bwrap did not start within ${BWRAP_START_TIMEOUT_MS} ms`),
        BWRAP_START_TIMEOUT_MS,
      );
      child.once('error', (error) => fail(`bwrap could not be started: ${error.message}`));
      info.on('data', (chunk: Buffer) => {
        if (childPid !== undefined) return; // bwrap may write the rest of its JSON later: keep reading, or it dies of SIGPIPE
        report += chunk.toString();
        const match = /"child-pid":\s*(\d+)/.exec(report);
        if (match === null) return;
        childPid = Number(match[1]);
        succeed();
      });
      // Nothing waits on Keel, so a short program may be done before its report is read: the report
      // decides, once read to its end, whether the program ran (its exit is then the result's) or
      // bwrap failed before it (its stderr, not read by anyone else then, says why).
      child.once('exit', (code) => {
        if (childPid !== undefined) return;
        void finished(info)
          .catch(() => undefined)
          .then(async () => {
            if (childPid !== undefined) return succeed();
            const stderr = await text(child.stderr!).catch(() => '');
            fail(`bwrap exited with ${code} before the program started: ${stderr.trim()}`);
          });
      });
    });
  }

  /**
   * Starts the holder and waits until it has printed a line from inside (namespaces, mounts and id
   * maps in place).
   */
  async startHolder(): Promise<void> {
    const { child, childPid } = await this.startBlocked(
      ['/bin/sh', '-c', 'echo ready; exec sleep infinity'],
      {},
    );
    await new Promise<void>((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(
        () => reject(new KeelError('sandbox_failed', 'the bwrap holder did not become ready')),
        BWRAP_START_TIMEOUT_MS,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(
          new KeelError(
            'sandbox_failed',
            `the bwrap holder exited with ${code} (${child.signalCode})`,
          ),
        );
      });
    });
    // Its output is not needed any more, but reading stays on: a holder that writes to a closed
    // pipe dies of SIGPIPE.
    child.stdout!.resume();
    child.stderr!.resume();
    child.stdin!.destroy();
    child.unref();
    for (const stream of [child.stdout!, child.stderr!, child.stdio[3] as Readable])
      (stream as Readable & { unref?: () => void }).unref?.();
    this.holderPid = childPid;
  }

  async exec(command: ExecCommand): Promise<ExecResult> {
    assertCommandPassable(command);
    // A limit or a cancel kills the whole cgroup, holder included; the workspace survives, so start
    // a new holder.
    if (this.holderPid !== undefined && !this.parts.cgroup.pids().includes(this.holderPid))
      await this.startHolder();
    const env = programEnv(
      this.spec.egress === undefined ? command.env : { ...proxyEnv(), ...command.env },
    );
    const common = {
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
    };
    if (this.holderPid === undefined) {
      return launch({
        ...common,
        argv: [],
        env: {},
        killGroupOnExit: true,
        start: async () => (await this.startBlocked(command.argv, env)).child,
      });
    }
    // The entry joins the cgroup itself, before anything else it does: no launcher shell needed.
    const [file, ...args] = enterArgv({
      procsFiles: this.parts.cgroup.procsFiles(),
      limits: this.spec.limits,
      holderPid: this.holderPid,
      uid: this.parts.uid,
      argv: command.argv,
    });
    return launch({
      ...common,
      argv: [],
      env: {},
      start: async () =>
        spawn(file!, args, {
          env: carrierEnv(env),
          cwd: '/',
          detached: true,
          stdio: maskedStdio(['pipe', 'pipe', 'pipe']),
        }),
      killGroupOnExit: false,
      // Entered beside the holder: its program must not hear the cancel (its end ends the namespace).
      terminate: () => this.parts.cgroup.signalPrograms('SIGTERM', { spareHolder: true }),
    });
  }

  /**
   * The program started as a one-shot command is, but left running with its standard streams open
   * to the caller; it lives until it exits, kill() or the environment's teardown.
   */
  async serve(command: ServiceCommand): Promise<ServiceProcess> {
    assertCommandPassable({ argv: command.argv, env: command.env });
    const env = programEnv(
      this.spec.egress === undefined ? command.env : { ...proxyEnv(), ...command.env },
    );
    const { child } = await this.startBlocked(command.argv, env);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve) => {
        if (child.exitCode !== null || child.signalCode !== null)
          resolve({ code: child.exitCode, signal: child.signalCode });
        else child.once('exit', (code, signal) => resolve({ code, signal }));
      },
    );
    return {
      stdin: child.stdin!,
      stdout: child.stdout!,
      stderr: child.stderr!,
      exited,
      kill: () => {
        // bwrap leads its own process group (detached): end the whole group.
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      },
    };
  }

  async pause(): Promise<void> {
    this.parts.cgroup.freeze();
  }

  async resume(): Promise<void> {
    this.parts.cgroup.thaw();
  }

  destroy(): Promise<void> {
    this.holderPid = undefined;
    return destroyParts(this.parts);
  }
}
