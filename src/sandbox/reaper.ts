// Ties every sandbox of this Keel process to its life, whatever the tier (a detached runsc, a
// process-tier command in its own session, a kept holder): one small watcher per Keel process
// holds the read end of a pipe whose write end only Keel has; when Keel dies — even by SIGKILL —
// the kernel closes it, and the watcher — once Keel has finished exiting — kills every member of
// every sandbox cgroup named after Keel's pid (`k<pid>-…`), freezing each first so nothing forks
// away. Every launcher joins its cgroup first and then checks that its parent is still Keel
// (launch.ts, bwrap-entry.ts, enter-namespaces.ts), so none can slip in after the last round. It removes nothing else:
// cgroups, mounts and runsc records are the start-up sweep's (stale-sweep.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { Cgroup, type CgroupVersion } from './cgroup.ts';
import { maskedStdio } from './inherited-fds.ts';

/** Kill rounds before the watcher gives up (the start-up sweep still removes what is left). */
const REAPER_ROUNDS_MAX = 200;
/** Checks (10 ms apart) that the owner has finished exiting before the first round. */
const OWNER_EXIT_WAITS_MAX = 500;

/**
 * `bash -c REAPER keel-reaper OWNER VERSION PROCS_PARENT FREEZER_PARENT`: waits for end of file on
 * stdin, then freezes, SIGKILLs and thaws each `k<OWNER>-*` cgroup until none has a member.
 */
export const REAPER =
  'owner=$1; version=$2; procs=$3; freezer=$4; read -r _; ' +
  // Until the owner has finished exiting (gone, or a zombie with no thread left, so its children
  // are reparented): a launcher that passed its parent check joined the cgroup before that, so
  // every round below sees it.
  `for wait in $(seq ${OWNER_EXIT_WAITS_MAX}); do read -r stat < "/proc/$owner/stat" 2>/dev/null || break; ` +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: `${stat##*) }` is the shell's parameter expansion.
  'state=${stat##*) }; tasks=(/proc/"$owner"/task/*); ' +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: `${#tasks[@]}` is the shell's array length.
  '[ "${state%% *}" = Z ] && [ "${#tasks[@]}" -le 1 ] && break; sleep 0.01; done; ' +
  'freeze() { if [ "$version" = v2 ]; then echo "$2" > "$procs/$1/cgroup.freeze"; ' +
  'else echo "$3" > "$freezer/$1/freezer.state"; fi; } 2>/dev/null; ' +
  `for round in $(seq ${REAPER_ROUNDS_MAX}); do left=0; ` +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: `${dir##*/}` is the shell's parameter expansion.
  'for dir in "$procs"/k"$owner"-*; do [ -f "$dir/cgroup.procs" ] || continue; name=${dir##*/}; ' +
  'freeze "$name" 1 FROZEN; ' +
  'while read -r pid; do kill -9 "$pid" 2>/dev/null; left=1; done < "$dir/cgroup.procs"; ' +
  'freeze "$name" 0 THAWED; done; [ "$left" = 0 ] && exit 0; sleep 0.02; done';

let watcher: ChildProcess | undefined;

/** Starts this process's watcher once; every sandbox cgroup is created after it is running. */
export function ensureReaper(version: CgroupVersion): void {
  if (watcher !== undefined && watcher.exitCode === null && watcher.signalCode === null) return;
  const { procs, freezer } = Cgroup.parentDirs(version);
  watcher = spawn(
    '/usr/bin/bash',
    [
      '--norc',
      '--noprofile',
      '-c',
      REAPER,
      'keel-reaper',
      String(process.pid),
      version,
      procs,
      freezer,
    ],
    {
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      detached: true, // its own session: a signal to Keel's process group does not end it too
      stdio: maskedStdio(['pipe', 'ignore', 'ignore']),
    },
  );
  watcher.on('error', () => undefined);
  watcher.stdin!.on('error', () => undefined);
  // Neither the watcher nor its pipe keeps Keel alive; the pipe stays open until Keel exits.
  watcher.unref();
  (watcher.stdin as unknown as { unref?: () => void }).unref?.();
}
