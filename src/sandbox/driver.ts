// The one interface every isolation tier implements. A driver creates environments; an environment
// owns a cgroup, a workspace and (when it keeps processes between calls) a long-lived holder, and
// runs commands in them. Nothing above this interface knows which tier it talks to, except through
// the capability flags here.
import type { Readable, Writable } from 'node:stream';
import { KeelError } from '../domain/keel-error.ts';
import type { CgroupCounters } from './cgroup.ts';
import type { ExecResult } from './launch.ts';
import type { OutputListener } from './output-capture.ts';
import type { Limits } from './limits.ts';
import type { Tier, TierAvailability } from './tiers.ts';

export interface NetworkPolicy {
  /** Hosts/ports the sandbox may reach; empty (the default) means no network at all. */
  allow: Array<{ host: string; port: number }>;
}

export interface EnvironmentSpec {
  id: string;
  limits: Limits;
  network: NetworkPolicy;
  /**
   * The host directory where Keel's egress proxy listens for this sandbox (egress/egress-proxy.ts),
   * when the allowlist is not empty; a tier that can use it binds it in and starts the relay.
   */
  egress?: { dir: string } | undefined;
  /**
   * Keep processes alive between commands (resident, pause and auto policies); one-shot
   * environments do not.
   */
  keepProcesses: boolean;
  /**
   * Host path of a built environment image's root filesystem, mounted read-only as `/` with
   * private tmpfs over /tmp and /var/tmp; undefined: the host's /usr and a few /etc files.
   */
  rootfs?: string | undefined;
  /**
   * Host paths made visible read-only inside (a program and its files that live outside the
   * image or the host's /usr), each at `target`. Tiers that cannot bind them refuse the spec.
   */
  readOnlyBinds?: ReadonlyArray<{ source: string; target: string }> | undefined;
  /**
   * A host directory holding the materialized shared space of the run's tree (shared-mount.ts),
   * bound read-only at SANDBOX_SHARED. Its content changes between commands, never during the
   * environment's creation; tiers that cannot bind it refuse the spec.
   */
  sharedDir?: string | undefined;
  /**
   * A host directory bound writable at /workspace instead of the environment's own, and the fixed
   * uid the sandbox then runs as, so that what it writes keeps one owner from one environment to
   * the next. For long-lived services on an operator's directory (an MCP file server), never for
   * a run's workspace.
   */
  workspaceBind?: { hostDir: string; uid: number } | undefined;
}

export interface ExecCommand {
  argv: string[];
  /** Variables for the program; nothing of Keel's own environment is ever passed. */
  env?: Record<string, string> | undefined;
  stdin?: string | undefined;
  deadlineMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /**
   * The graceful stop (a cancel's first phase): the program gets SIGTERM and may wrap up until
   * `signal` kills it.
   */
  stopRequested?: AbortSignal | undefined;
  /**
   * The program's stdout and stderr as they arrive (decoded text, within the output limit), for live
   * followers; the result still carries the whole captured output.
   */
  onOutput?: OutputListener | undefined;
}

/** A long-lived program in an environment, talking over its standard streams (an MCP server). */
export interface ServiceCommand {
  argv: string[];
  /** Variables for the program; nothing of Keel's own environment is ever passed. */
  env?: Record<string, string> | undefined;
}

export interface ServiceProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the program has exited (its code, or the signal that ended it). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Ends the program and everything it started (the environment's teardown kills the rest). */
  kill(): void;
}

export interface SandboxEnvironment {
  readonly id: string;
  readonly tier: Tier;
  /** Host path of the workspace; `/workspace` inside the sandbox. */
  readonly workspaceDir: string;
  /** The unprivileged host uid the sandbox's programs run as (and that owns the workspace). */
  readonly uid: number;
  readonly createdAt: number;
  /**
   * True when pause() releases the environment's memory (a checkpoint), false when it only freezes
   * CPU.
   */
  readonly pauseFreesMemory: boolean;
  exec(command: ExecCommand): Promise<ExecResult>;
  /**
   * Starts a long-lived program with its stdin and stdout as pipes, inside the environment's limits
   * (its cgroup, namespaces and egress). Tiers that cannot leave it undefined.
   */
  serve?(command: ServiceCommand): Promise<ServiceProcess>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  counters(): CgroupCounters;
  /**
   * Stops (or restarts) every process's CPU without releasing anything: used to take a consistent
   * snapshot.
   */
  freezeCpu(): void;
  thawCpu(): void;
  destroy(): Promise<void>;
}

export interface SandboxDriver {
  readonly tier: Tier;
  availability(): TierAvailability;
  create(spec: EnvironmentSpec): Promise<SandboxEnvironment>;
}

/** Inside-sandbox path of the workspace for every tier. */
export const SANDBOX_WORKSPACE = '/workspace';
/** Inside-sandbox path of the run tree's shared space (read-only), on profiles that ask for it. */
export const SANDBOX_SHARED = '/shared';
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The program's environment: a fixed PATH/HOME plus exactly the variables the caller allowed. */
export function programEnv(extra: Record<string, string> | undefined): Record<string, string> {
  return { PATH: SANDBOX_PATH, HOME: SANDBOX_WORKSPACE, LANG: 'C.UTF-8', ...extra };
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Refuses what no tier can pass on intact, the same on every tier: a NUL inside an argument or a
 * variable (a C string ends there; gVisor cut argv at it silently) and a variable name that is not
 * one (`A=B` as a name would set another variable).
 */
export function assertCommandPassable(command: Pick<ExecCommand, 'argv' | 'env'>): void {
  const bad = (what: string) => {
    throw new KeelError('sandbox_command_invalid', `the command's ${what}`);
  };
  if (command.argv.length === 0) bad('argv is empty');
  command.argv.forEach((arg, i) => {
    if (arg.includes('\0')) bad(`argv[${i}] contains a NUL byte`);
  });
  for (const [name, value] of Object.entries(command.env ?? {})) {
    if (!ENV_NAME.test(name)) bad(`environment variable name ${JSON.stringify(name)} is invalid`);
    if (value.includes('\0')) bad(`environment variable ${name} contains a NUL byte`);
  }
}
