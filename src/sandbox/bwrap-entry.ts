// How bwrap starts inside its environment's cgroup: one short Perl program, spawned by Keel as root,
// whose first act is to join the cgroup (one procs file per v1 controller), so bwrap, its namespace
// init and the program are born in it — nothing of the sandbox ever runs outside it, with no
// --block-fd hand-over that a killed Keel would release (its end of the pipe closes, bwrap reads
// end of file and runs the program outside the cgroup, untied to anything). Once in, it checks that
// its parent is still the Keel process that owns the sandbox (and it dies with it): the owner's
// reaper (reaper.ts) kills every member once the owner is gone, so a helper that joins after that
// must not go on. Then it forks: the child sets the file-size, open-files and core limits (what
// prlimit did), clears the supplementary groups, becomes the sandbox uid and execs bwrap; the
// helper stays as a child subreaper, so bwrap's namespace init, which bwrap leaves behind as a
// zombie, is reaped at once instead of by the host's init (slow on some hosts, and each unreaped
// one counts against the sandbox's pids.max), and exits as bwrap did. It loads no Perl module but
// strict, and never puts a program variable on a command line (bwrap reads them from --args).
import { KeelError } from '../domain/keel-error.ts';
import { PERL } from './env-carrier.ts';
import type { Limits } from './limits.ts';

/**
 * Syscall numbers per architecture (prctl, setgroups, setresgid, setresuid, prlimit64, close), from the
 * kernel's tables: Perl's syscall.ph is not in perl-base.
 */
const SYSCALLS: Partial<Record<NodeJS.Architecture, number[]>> = {
  x64: [157, 116, 119, 117, 302, 3],
  arm64: [167, 159, 149, 147, 261, 57],
};

/** Exit status of a helper that could not join the cgroup or whose owner is gone. */
export const ENTRY_REFUSED = 125;

const SCRIPT = String.raw`
use strict;
my ($nrs, $owner, $nfiles) = splice(@ARGV, 0, 3);
my ($PRCTL, $SETGROUPS, $SETRESGID, $SETRESUID, $PRLIMIT, $CLOSE) = split(/,/, $nrs);
# Dies with Keel (PR_SET_PDEATHSIG, SIGKILL), checked below once it is in the cgroup.
syscall($PRCTL, 1, 9, 0, 0, 0) == 0 or exit ${ENTRY_REFUSED};
for my $file (splice(@ARGV, 0, $nfiles)) {
  open(my $procs, '>', $file) or exit ${ENTRY_REFUSED};
  print $procs $$ or exit ${ENTRY_REFUSED};
  close($procs) or exit ${ENTRY_REFUSED};
}
# In the cgroup: from here on the owner's reaper sees this process. An owner already gone may have
# been reaped past it: nothing starts.
exit ${ENTRY_REFUSED} if getppid() != $owner;
my ($fsize, $nofile, $id, @argv) = @ARGV;
$id += 0;
# The orphans below (bwrap's namespace init outlives bwrap for a moment) are reaped here, at once,
# rather than by the host's init, which may take its time while they count against pids.max.
syscall($PRCTL, 36, 1, 0, 0, 0) == 0 or die "keel-bwrap: subreaper: $!\n";
my $helper = $$;
my $child = fork() // die "keel-bwrap: fork: $!\n";
if ($child == 0) {
  # RLIMIT_FSIZE (1), RLIMIT_CORE (4), RLIMIT_NOFILE (7): soft and hard, as prlimit --X=N sets them.
  for my $limit ([1, $fsize], [4, 0], [7, $nofile]) {
    my $value = pack('QQ', $limit->[1], $limit->[1]);
    syscall($PRLIMIT, 0, $limit->[0], $value, 0) == 0 or die "keel-bwrap: prlimit: $!\n";
  }
  syscall($SETGROUPS, 0, 0) == 0 or die "keel-bwrap: setgroups: $!\n";
  syscall($SETRESGID, $id, $id, $id) == 0 or die "keel-bwrap: setresgid: $!\n";
  syscall($SETRESUID, $id, $id, $id) == 0 or die "keel-bwrap: setresuid: $!\n";
  # bwrap dies with this helper (the uid change cleared the parent-death signal), checked again.
  syscall($PRCTL, 1, 9, 0, 0, 0) == 0 or die "keel-bwrap: pdeathsig: $!\n";
  exit ${ENTRY_REFUSED} if getppid() != $helper;
  exec { $argv[0] } @argv;
  print STDERR "keel-bwrap: $argv[0]: $!\n";
  exit 126;
}
# bwrap's own descriptors (its report, variables and filter) are not this helper's to hold open.
syscall($CLOSE, $_) for 3 .. 6;
$SIG{$_} = 'IGNORE' for qw(INT TERM HUP QUIT PIPE);
my $status = 0;
while ((my $pid = wait()) > 0) { $status = $? if $pid == $child; }
if ($status & 127) {
  $SIG{$_} = 'DEFAULT' for keys %SIG;
  kill($status & 127, $$);
  exit(128 + ($status & 127));
}
exit($status >> 8);
`;

/**
 * The command line that joins the cgroup through `procsFiles`, checks this process still owns it,
 * sets `limits`' file-size and open-files limits (no core dumps), becomes `uid` (and gid) and
 * execs `bwrap` (its full argv). Spawned as root with an empty environment, directly by Keel.
 */
export function bwrapEntryArgv(options: {
  procsFiles: string[];
  limits: Pick<Limits, 'fileBytes' | 'openFilesMax'>;
  uid: number;
  bwrap: string[];
}): string[] {
  return [
    ...cgroupEntryArgv(SCRIPT, SYSCALLS, 'namespace sandboxes', options),
    String(options.uid),
    ...options.bwrap,
  ];
}

/**
 * The start every cgroup-joining Perl entry shares (this one and a kept sandbox's, enter-namespaces.ts):
 * `perl -e script -- <syscall numbers> <owner pid> <n> <procs files…> <file bytes> <open files>`.
 * `what` names the sandboxes for the error on an architecture without a syscall table.
 */
export function cgroupEntryArgv(
  script: string,
  syscalls: Partial<Record<NodeJS.Architecture, number[]>>,
  what: string,
  options: { procsFiles: string[]; limits: Pick<Limits, 'fileBytes' | 'openFilesMax'> },
): string[] {
  const numbers = syscalls[process.arch];
  if (numbers === undefined)
    throw new KeelError('sandbox_unavailable', `${what} are not supported on ${process.arch}`);
  return [
    PERL,
    '-e',
    script,
    '--',
    numbers.join(','),
    String(process.pid),
    String(options.procsFiles.length),
    ...options.procsFiles,
    String(options.limits.fileBytes),
    String(options.limits.openFilesMax),
  ];
}
