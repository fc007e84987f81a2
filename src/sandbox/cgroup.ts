// One sandbox's control group, on cgroup v1 (one directory per controller) or v2 (one unified
// directory), detected at first use. It owns limits (memory, pids, CPU), usage counters, freezing
// and killing. Killing never trusts one SIGKILL: a fork bomb's children outlive their parent, so it
// freezes, kills every member, thaws and repeats until cgroup.procs is empty. It must never touch a
// cgroup it did not create.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** Parent directory (per controller on v1) under which every Keel sandbox cgroup lives. */
const KEEL_PARENT = 'keel-sandbox';
const V1_CONTROLLERS = ['memory', 'pids', 'cpu', 'cpuacct', 'freezer'] as const;
const CFS_PERIOD_US = 100_000;
const KILL_ROUNDS_MAX = 200;

export type CgroupVersion = 'v1' | 'v2';

export interface CgroupLimits {
  memoryBytes: number;
  pidsMax: number;
  /** CPU share as a number of cores (0.5 = half a core). */
  cpus: number;
}

export interface CgroupCounters {
  memoryBytes: number;
  peakMemoryBytes: number;
  cpuSeconds: number;
  oomKills: number;
  pidsLimitHits: number;
}

/** Which cgroup layout this host has, or why sandboxes cannot get one. */
export function detectCgroups():
  | { ok: true; version: CgroupVersion }
  | { ok: false; reason: string } {
  if (existsSync(join(CGROUP_ROOT, 'cgroup.controllers'))) {
    const controllers = readFileSync(join(CGROUP_ROOT, 'cgroup.controllers'), 'utf8');
    for (const needed of ['memory', 'pids', 'cpu']) {
      if (!controllers.includes(needed))
        return { ok: false, reason: `cgroup v2 controller ${needed} is not enabled` };
    }
    return { ok: true, version: 'v2' };
  }
  for (const controller of V1_CONTROLLERS) {
    if (!existsSync(join(CGROUP_ROOT, controller, 'cgroup.procs'))) {
      return {
        ok: false,
        reason: `cgroup v1 controller ${controller} is not mounted at ${join(CGROUP_ROOT, controller)}`,
      };
    }
  }
  return { ok: true, version: 'v1' };
}

export class Cgroup {
  readonly name: string;
  readonly version: CgroupVersion;
  /** One directory per v1 controller, or the single v2 directory under every key. */
  private readonly dirs: Record<(typeof V1_CONTROLLERS)[number], string>;
  private removed = false;

  private constructor(name: string, version: CgroupVersion) {
    this.name = name;
    this.version = version;
    const dir = (controller: string) =>
      version === 'v2'
        ? join(CGROUP_ROOT, KEEL_PARENT, name)
        : join(CGROUP_ROOT, controller, KEEL_PARENT, name);
    this.dirs = {
      memory: dir('memory'),
      pids: dir('pids'),
      cpu: dir('cpu'),
      cpuacct: dir('cpuacct'),
      freezer: dir('freezer'),
    };
  }

  static create(name: string, version: CgroupVersion, limits: CgroupLimits): Cgroup {
    const group = new Cgroup(name, version);
    if (version === 'v2') {
      const parent = join(CGROUP_ROOT, KEEL_PARENT);
      if (!existsSync(parent)) {
        mkdirSync(parent);
        writeFileSync(join(parent, 'cgroup.subtree_control'), '+memory +pids +cpu');
      }
    }
    for (const dir of group.uniqueDirs()) mkdirSync(dir, { recursive: true });
    group.applyLimits(limits);
    return group;
  }

  /** Names of the sandbox cgroups that exist on this host (any Keel process's). */
  static existingNames(version: CgroupVersion): string[] {
    const parent =
      version === 'v2' ? join(CGROUP_ROOT, KEEL_PARENT) : join(CGROUP_ROOT, 'memory', KEEL_PARENT);
    if (!existsSync(parent)) return [];
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  }

  /**
   * Where the sandbox cgroups' members (`procs`, the pids controller on v1) and freezers are
   * listed, one directory per cgroup below each.
   */
  static parentDirs(version: CgroupVersion): { procs: string; freezer: string } {
    if (version === 'v2') {
      const parent = join(CGROUP_ROOT, KEEL_PARENT);
      return { procs: parent, freezer: parent };
    }
    return {
      procs: join(CGROUP_ROOT, 'pids', KEEL_PARENT),
      freezer: join(CGROUP_ROOT, 'freezer', KEEL_PARENT),
    };
  }

  /** A handle on an existing sandbox cgroup, to sweep one whose owner died. */
  static existing(name: string, version: CgroupVersion): Cgroup {
    return new Cgroup(name, version);
  }

  /**
   * Files a launcher writes its own pid into before exec'ing the sandboxed program, so nothing
   * escapes the count.
   */
  procsFiles(): string[] {
    return this.uniqueDirs().map((dir) => join(dir, 'cgroup.procs'));
  }

  private uniqueDirs(): string[] {
    return [...new Set(Object.values(this.dirs))];
  }

  private applyLimits(limits: CgroupLimits): void {
    const quotaUs = Math.max(1000, Math.round(limits.cpus * CFS_PERIOD_US));
    if (this.version === 'v2') {
      writeFileSync(join(this.dirs.memory, 'memory.max'), String(limits.memoryBytes));
      writeFileSync(join(this.dirs.memory, 'memory.swap.max'), '0');
      writeFileSync(join(this.dirs.pids, 'pids.max'), String(limits.pidsMax));
      writeFileSync(join(this.dirs.cpu, 'cpu.max'), `${quotaUs} ${CFS_PERIOD_US}`);
      return;
    }
    writeFileSync(join(this.dirs.memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
    writeFileSync(join(this.dirs.pids, 'pids.max'), String(limits.pidsMax));
    writeFileSync(join(this.dirs.cpu, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
    writeFileSync(join(this.dirs.cpu, 'cpu.cfs_quota_us'), String(quotaUs));
  }

  counters(): CgroupCounters {
    if (this.version === 'v2') {
      const memory = this.readNumber(this.dirs.memory, 'memory.current');
      const peak = existsSync(join(this.dirs.memory, 'memory.peak'))
        ? this.readNumber(this.dirs.memory, 'memory.peak')
        : memory;
      const cpuUsec = keyed(this.read(this.dirs.cpu, 'cpu.stat'), 'usage_usec');
      return {
        memoryBytes: memory,
        peakMemoryBytes: peak,
        cpuSeconds: cpuUsec / 1e6,
        oomKills: keyed(this.read(this.dirs.memory, 'memory.events'), 'oom_kill'),
        pidsLimitHits: keyed(this.read(this.dirs.pids, 'pids.events'), 'max'),
      };
    }
    return {
      memoryBytes: this.readNumber(this.dirs.memory, 'memory.usage_in_bytes'),
      peakMemoryBytes: this.readNumber(this.dirs.memory, 'memory.max_usage_in_bytes'),
      cpuSeconds: this.readNumber(this.dirs.cpuacct, 'cpuacct.usage') / 1e9,
      oomKills: keyed(this.read(this.dirs.memory, 'memory.oom_control'), 'oom_kill'),
      pidsLimitHits: keyed(this.read(this.dirs.pids, 'pids.events'), 'max'),
    };
  }

  pids(): number[] {
    const text = this.read(this.dirs.pids, 'cgroup.procs');
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map(Number);
  }

  /** Stops every member's CPU. Frees no memory: the accounting keeps charging a frozen sandbox. */
  freeze(): void {
    if (this.version === 'v2') writeFileSync(join(this.dirs.freezer, 'cgroup.freeze'), '1');
    else writeFileSync(join(this.dirs.freezer, 'freezer.state'), 'FROZEN');
  }

  thaw(): void {
    if (this.version === 'v2') writeFileSync(join(this.dirs.freezer, 'cgroup.freeze'), '0');
    else writeFileSync(join(this.dirs.freezer, 'freezer.state'), 'THAWED');
  }

  /**
   * Sends `signal` (a graceful one: SIGTERM) once to the sandboxed program's processes: members not
   * running as Keel's own user (the launchers and namespace entries that run as it) and, when some
   * member is inside a pid namespace of the sandbox's own, only those inside it but its init. The
   * tier's holders (bwrap) stay out of it: SIGTERM would end them and, through their parent-death
   * signal, kill the program at once. `spareHolder`: the namespace's init runs a holder program of
   * the tier's own (commands are entered beside it), spared too — its end would end the namespace.
   */
  signalPrograms(signal: NodeJS.Signals, options: { spareHolder?: boolean } = {}): number {
    const members = this.pids().map((pid) => ({ pid, ...identity(pid) }));
    const nested = members.some((m) => m.nsPids.length > 1);
    const init = members.find((m) => m.nsPids.length > 1 && m.nsPids.at(-1) === 1)?.pid;
    const keel = process.getuid?.();
    let sent = 0;
    for (const { pid, nsPids, uid, ppid } of members) {
      if (uid === undefined || uid === keel) continue;
      if (nested && (nsPids.length < 2 || pid === init)) continue;
      if (options.spareHolder === true && ppid === init) continue;
      try {
        process.kill(pid, signal);
        sent++;
      } catch {
        // already gone
      }
    }
    return sent;
  }

  /**
   * Kills every member until none is left (freeze → SIGKILL all → thaw, repeated), then returns.
   */
  async killAll(): Promise<void> {
    for (let round = 0; round < KILL_ROUNDS_MAX; round++) {
      let members = this.pids();
      if (members.length === 0) return;
      this.freeze();
      members = this.pids();
      for (const pid of members) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      this.thaw();
      if (round > 0) await delay(Math.min(20, round));
    }
    throw new Error(`cgroup ${this.name} still has members after ${KILL_ROUNDS_MAX} kill rounds`);
  }

  /** Kills what is left and removes the directories; safe to call twice. */
  async destroy(): Promise<void> {
    if (this.removed) return;
    await this.killAll();
    for (const dir of this.uniqueDirs()) {
      // The kernel may still be reaping the last member for a moment after cgroup.procs reads
      // empty.
      for (let attempt = 0; ; attempt++) {
        try {
          if (existsSync(dir)) rmdirSync(dir);
          break;
        } catch (error) {
          if (attempt >= 50) throw error;
          await delay(5);
        }
      }
    }
    this.removed = true;
  }

  private read(dir: string, file: string): string {
    return readFileSync(join(dir, file), 'utf8');
  }

  private readNumber(dir: string, file: string): number {
    return Number(this.read(dir, file).trim());
  }
}

function keyed(text: string, key: string): number {
  for (const line of text.split('\n')) {
    const [name, value] = line.split(' ');
    if (name === key && value !== undefined) return Number(value);
  }
  return 0;
}

/**
 * A process's real uid, its parent, and its pid in each pid namespace it is in, outermost first
 * (`Uid`, `PPid` and `NSpid` in /proc/PID/status); nothing when it is gone.
 */
function identity(pid: number): {
  uid: number | undefined;
  ppid: number | undefined;
  nsPids: number[];
} {
  try {
    const lines = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n');
    const field = (name: string) =>
      lines
        .find((l) => l.startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim()
        .split(/\s+/)
        .map(Number);
    return { uid: field('Uid')?.[0], ppid: field('PPid')?.[0], nsPids: field('NSpid') ?? [pid] };
  } catch {
    return { uid: undefined, ppid: undefined, nsPids: [] };
  }
}
