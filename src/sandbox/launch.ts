// Starts one sandboxed program inside a cgroup and watches it until it ends: the launcher shell
// joins the cgroup before it execs the tier's command line, so no descendant is ever outside the
// count. It enforces the deadline, the output cap and the pids limit, and names the reason when
// Keel ended the program. It never decides isolation: the tier builds the command line.
import { spawn, type ChildProcess } from 'node:child_process';
import { statfsSync } from 'node:fs';
import type { Cgroup, CgroupCounters } from './cgroup.ts';
import type { LimitReason, Limits } from './limits.ts';
import { OutputCapture, type OutputListener } from './output-capture.ts';

/** How often the cgroup's OOM and pids counters are read while a program runs. */
const LIMIT_POLL_MS = 50;
/** After the main process exits, how long background holders of its pipes may keep them open. */
const PIPE_GRACE_MS = 50;
/** Free space under which a failed program is said to have hit the workspace quota. */
const DISK_FULL_SLACK_BYTES = 64 * 1024;

export interface LaunchSpec {
  /** The tier's command line, run after the launcher has joined the cgroup. */
  argv: string[];
  env: Record<string, string>;
  stdin?: string | undefined;
  cgroup: Cgroup;
  limits: Limits;
  workspaceDir: string;
  /**
   * One-shot programs take their whole cgroup down with them; resident ones leave background work
   * running.
   */
  killGroupOnExit: boolean;
  signal?: AbortSignal | undefined;
  /**
   * The graceful stop: when it fires the program gets SIGTERM (through `terminate`, or to its
   * processes in the cgroup) and may wrap up until `signal` kills it.
   */
  stopRequested?: AbortSignal | undefined;
  /**
   * How this tier asks its program to stop (default: SIGTERM to the program's processes in the
   * cgroup, Cgroup.signalPrograms).
   */
  terminate?: ((child: ChildProcess) => void) | undefined;
  /** The program's output as it arrives (what the capture keeps, never more). */
  onOutput?: OutputListener | undefined;
  /**
   * How to start the program without the launcher shell, when the tier can keep it inside the
   * cgroup by other means: a helper of Keel's own whose first act is to join the cgroup, as the
   * launcher shell does (the bwrap entry, bwrap-entry.ts; the namespace entry, enter-namespaces.ts).
   * It may resolve with a child that has already exited.
   */
  start?: (() => Promise<ChildProcess>) | undefined;
}

export interface ExecResult {
  exitCode: number | null;
  signal: string | null;
  /** Set when Keel ended the program for exceeding a limit. */
  limit: LimitReason | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  wallMs: number;
  cpuSeconds: number;
  peakMemoryBytes: number;
}

/**
 * `bash -c LAUNCHER keel-launch OWNER N file1..fileN argv...`: joins the cgroup (one procs file per
 * v1 controller), stops unless its parent is still OWNER (the Keel process whose reaper kills the
 * cgroup's members once it is gone: a launcher joining after that would run untied), closes every descriptor above 2 (Keel may itself have inherited some without
 * close-on-exec: they must not reach the sandbox), forgets the PWD the shell exported, then becomes
 * the tier's command. bash rather than sh because dash cannot close descriptors above 9;
 * hand-written rather than cgexec, so no extra package is needed.
 */
export const LAUNCHER =
  'owner=$1; n=$2; shift 2; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; ' +
  // Its parent read live (bash's $PPID is fixed at its start): an owner gone may have been reaped past it.
  'read -r _ _ _ ppid _ < /proc/$$/stat; [ "$ppid" = "$owner" ] || exit 125; ' +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: `${fd##*/}` is the shell's parameter expansion, not a template.
  'for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; unset PWD OLDPWD; exec "$@"';
export const LAUNCHER_SHELL = '/usr/bin/bash';

function startWithLauncher(spec: LaunchSpec): ChildProcess {
  const files = spec.cgroup.procsFiles();
  return spawn(
    LAUNCHER_SHELL,
    [
      '--norc',
      '--noprofile',
      '-c',
      LAUNCHER,
      'keel-launch',
      String(process.pid),
      String(files.length),
      ...files,
      ...spec.argv,
    ],
    {
      env: spec.env,
      cwd: '/',
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    },
  );
}

export async function launch(spec: LaunchSpec): Promise<ExecResult> {
  const before = spec.cgroup.counters();
  const started = performance.now();
  const child = spec.start === undefined ? startWithLauncher(spec) : await spec.start();
  return watch(spec, child, before, started);
}

function watch(
  spec: LaunchSpec,
  child: ChildProcess,
  before: CgroupCounters,
  started: number,
): Promise<ExecResult> {
  let ended: LimitReason | 'aborted' | null = null;
  let killing: Promise<void> = Promise.resolve();
  const end = (reason: LimitReason | 'aborted') => {
    if (ended !== null) return;
    ended = reason;
    killing = spec.cgroup.killAll().catch(() => undefined);
  };
  const capture = new OutputCapture(
    spec.limits.outputMaxBytes,
    () => end('output_limit'),
    spec.onOutput,
  );
  capture.attach(child.stdout!, 'stdout');
  capture.attach(child.stderr!, 'stderr');
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(spec.stdin ?? '');
  const deadline = setTimeout(() => end('timeout'), spec.limits.deadlineMs);
  const poll = setInterval(() => {
    const crossed = limitCrossed(before, safeCounters(spec.cgroup));
    if (crossed !== null) end(crossed);
  }, LIMIT_POLL_MS);
  const onAbort = () => end('aborted');
  const onStopRequested = () => {
    if (ended !== null) return;
    if (spec.terminate !== undefined) spec.terminate(child);
    else spec.cgroup.signalPrograms('SIGTERM');
  };
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  if (spec.stopRequested?.aborted) onStopRequested();
  else spec.stopRequested?.addEventListener('abort', onStopRequested, { once: true });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(deadline);
      clearInterval(poll);
      spec.signal?.removeEventListener('abort', onAbort);
      spec.stopRequested?.removeEventListener('abort', onStopRequested);
      void settle(child, spec).then(async () => {
        // A limit the poll had not seen yet (the program failed of it and exited first) ends the
        // cgroup as the poll would have: what it left running (a fork bomb's other branches, still
        // holding every pid) must not meet the next command of an environment that keeps processes.
        const crossed = limitCrossed(before, safeCounters(spec.cgroup));
        if (crossed === 'oom' || (crossed === 'pids_limit' && (code !== 0 || signal !== null)))
          end(crossed);
        await killing; // the next command must not start while this one's kill is still sweeping the cgroup
        // The environment may be torn down meanwhile (its cgroup gone): the last counters stand.
        const after = safeCounters(spec.cgroup) ?? before;
        const limit = reasonFor(ended, before, after, code, signal, spec);
        if (ended === 'aborted') reject(spec.signal?.reason ?? new Error('aborted'));
        else
          resolve({
            exitCode: code,
            signal,
            limit,
            stdout: capture.text('stdout'),
            stderr: capture.text('stderr'),
            truncated: capture.truncated,
            wallMs: performance.now() - started,
            cpuSeconds: Math.max(0, after.cpuSeconds - before.cpuSeconds),
            peakMemoryBytes: after.peakMemoryBytes,
          });
      }, reject);
    };
    // A start that resolves only after the program's exit (a short program under a tier that
    // waits for a report first) hands over a child that has already exited.
    if (child.exitCode !== null || child.signalCode !== null)
      onExit(child.exitCode, child.signalCode);
    else child.once('exit', onExit);
  });
}

/** Waits for the pipes to drain, but not for background processes that inherited them. */
async function settle(child: ChildProcess, spec: LaunchSpec): Promise<void> {
  const streams = [child.stdout!, child.stderr!];
  const closed = Promise.all(
    streams.map((s) =>
      s.readableEnded || s.destroyed ? Promise.resolve() : new Promise((r) => s.once('close', r)),
    ),
  );
  if (spec.killGroupOnExit) {
    await spec.cgroup.killAll();
    await closed;
    return;
  }
  const grace = new Promise((r) => setTimeout(r, PIPE_GRACE_MS).unref());
  await Promise.race([closed, grace]);
  for (const stream of streams) stream.destroy();
}

function reasonFor(
  ended: LimitReason | 'aborted' | null,
  before: CgroupCounters,
  after: CgroupCounters,
  code: number | null,
  signal: string | null,
  spec: LaunchSpec,
): LimitReason | null {
  if (after.oomKills > before.oomKills) return 'oom';
  if (after.pidsLimitHits > before.pidsLimitHits && (ended !== null || code !== 0))
    return 'pids_limit';
  if (ended !== null && ended !== 'aborted') return ended;
  const failed = code !== 0 || signal !== null;
  if (failed && (signal === 'SIGXFSZ' || code === 128 + 25 || workspaceFull(spec.workspaceDir)))
    return 'disk_limit';
  return null;
}

function workspaceFull(dir: string): boolean {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize < DISK_FULL_SLACK_BYTES;
  } catch {
    return false;
  }
}

/** The limit the cgroup's counters say was hit since `before`, if any. */
function limitCrossed(
  before: CgroupCounters,
  now: CgroupCounters | undefined,
): 'oom' | 'pids_limit' | null {
  if (now === undefined) return null;
  if (now.oomKills > before.oomKills) return 'oom';
  if (now.pidsLimitHits > before.pidsLimitHits) return 'pids_limit';
  return null;
}

function safeCounters(cgroup: Cgroup): CgroupCounters | undefined {
  try {
    return cgroup.counters();
  } catch {
    return undefined;
  }
}
