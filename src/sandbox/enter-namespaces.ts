// How a command enters a kept namespace sandbox (its holder's namespaces): one short Perl program,
// spawned directly by Keel, because nsenter cannot do it safely. Entering a user namespace resets
// the bounding set to full and nsenter (util-linux before 2.39) cannot keep the capabilities needed
// to drop it again, so the command would run without no_new_privs and with every capability
// bounded in. This helper first joins the sandbox's cgroup (nothing of the command runs outside
// it) and checks its parent is still the Keel that owns the sandbox (else its reaper may have been
// past already: it stops), closes every inherited descriptor above 2 and sets the file-size, open-files and core
// limits (what the launcher shell and prlimit did, in the same order, without their two execs);
// then it does the setns calls itself and, still holding capabilities inside the sandbox's user
// namespace, sets no_new_privs, empties the bounding set, becomes the sandbox uid, loads the tier's
// seccomp filter (seccomp-filter.ts, the same bwrap loads for one-shot commands) and execs the
// command. It never runs anything of its own after that exec; it only waits and passes the exit
// status on. It loads no Perl module but strict (POSIX alone cost more than the rest of its start).
import { cgroupEntryArgv } from './bwrap-entry.ts';
import { SANDBOX_WORKSPACE } from './driver.ts';
import { RESTORE_ENV_PERL } from './env-carrier.ts';
import type { Limits } from './limits.ts';
import { seccompFilter } from './seccomp-filter.ts';

/**
 * Syscall numbers per architecture (setns, prctl, setgroups, setresgid, setresuid, prlimit64,
 * close_range, exit_group), from the kernel's tables: Perl's syscall.ph is not in perl-base, which
 * every Debian system has.
 */
const SYSCALLS: Partial<Record<NodeJS.Architecture, number[]>> = {
  x64: [308, 157, 116, 119, 117, 302, 436, 231],
  arm64: [268, 167, 159, 149, 147, 261, 436, 94],
};

const SCRIPT = String.raw`
use strict;
my ($nrs, $owner, $nfiles) = splice(@ARGV, 0, 3);
my ($SETNS, $PRCTL, $SETGROUPS, $SETRESGID, $SETRESUID, $PRLIMIT, $CLOSE_RANGE, $EXIT) = split(/,/, $nrs);
# Into the sandbox's cgroup first (one procs file per v1 controller): everything below is counted.
for my $file (splice(@ARGV, 0, $nfiles)) {
  open(my $procs, '>', $file) or exit 125;
  print $procs $$ or exit 125;
  close($procs) or exit 125;
}
# In the cgroup, so the owner's reaper sees it; an owner already gone may have been reaped past it.
exit 125 if getppid() != $owner;
# Descriptors Keel may have inherited without close-on-exec must not reach the sandbox.
syscall($CLOSE_RANGE, 3, 0xffffffff, 0) == 0 or die "keel-enter: close_range: $!\n";
my ($fsize, $nofile, $pid, $id, $cwd, $seccomp, @argv) = @ARGV;
$id += 0;
# RLIMIT_FSIZE (1), RLIMIT_CORE (4), RLIMIT_NOFILE (7): soft and hard, as prlimit --X=N sets them.
for my $limit ([1, $fsize], [4, 0], [7, $nofile]) {
  my $value = pack('QQ', $limit->[1], $limit->[1]);
  syscall($PRLIMIT, 0, $limit->[0], $value, 0) == 0 or die "keel-enter: prlimit: $!\n";
}
# The program's variables arrive prefixed, so none of them (LD_PRELOAD, PERL5OPT, BASH_ENV…) acts on
# this helper, which runs as root on the host.
${RESTORE_ENV_PERL}
# Supplementary groups can only be cleared before entering: the sandbox's user namespace denies setgroups.
syscall($SETGROUPS, 0, 0) == 0 or die "keel-enter: setgroups: $!\n";
# The user namespace last: bwrap's --disable-userns nests the holder's user namespace below the one that owns
# the others, so only host root (not root of the holder's namespace) may still enter those.
my @ns;
for my $kind (qw(ipc uts net pid cgroup mnt user)) {
  open(my $fh, '<', "/proc/$pid/ns/$kind") or die "keel-enter: $kind namespace of $pid: $!\n";
  push @ns, [$kind, $fh];
}
for my $entry (@ns) {
  syscall($SETNS, fileno($entry->[1]), 0) == 0 or die "keel-enter: setns $entry->[0]: $!\n";
  close($entry->[1]);
}
my $child = fork() // die "keel-enter: fork: $!\n";
if ($child == 0) {
  syscall($PRCTL, 38, 1, 0, 0, 0) == 0 or die "keel-enter: no_new_privs: $!\n";
  for my $cap (0 .. 63) {
    next if syscall($PRCTL, 23, $cap, 0, 0, 0) != 1;
    syscall($PRCTL, 24, $cap, 0, 0, 0) == 0 or die "keel-enter: bounding set: $!\n";
  }
  syscall($SETRESGID, $id, $id, $id) == 0 or die "keel-enter: setresgid: $!\n";
  syscall($SETRESUID, $id, $id, $id) == 0 or die "keel-enter: setresuid: $!\n";
  chdir($cwd) or die "keel-enter: chdir $cwd: $!\n";
  # The tier's seccomp filter (struct sock_filter[] as hex; empty: none), last: nothing after it but exec.
  if (length $seccomp) {
    my $filter = pack('H*', $seccomp);
    my $fprog = pack('S x![P] P', length($filter) / 8, $filter);
    syscall($PRCTL, 22, 2, $fprog, 0, 0) == 0 or die "keel-enter: seccomp: $!\n";
  }
  exec { $argv[0] } @argv;
  my $missing = $! == 2; # ENOENT
  print STDERR "keel-enter: $argv[0]: $!\n";
  syscall($EXIT, $missing ? 127 : 126);
}
$SIG{$_} = 'IGNORE' for qw(INT TERM HUP QUIT PIPE);
waitpid($child, 0) == $child or die "keel-enter: waitpid: $!\n";
my $status = $?;
if ($status & 127) {
  $SIG{$_} = 'DEFAULT' for keys %SIG;
  kill($status & 127, $$);
  syscall($EXIT, 128 + ($status & 127));
}
syscall($EXIT, $status >> 8);
`;

/**
 * The command line that joins the cgroup through `procsFiles`, sets `limits`' file-size and
 * open-files limits (no core dumps) and runs `argv` inside the namespaces of `holderPid` as `uid`
 * (and gid), in the workspace, with no_new_privs, an empty bounding set and the tier's seccomp
 * filter. Spawned as root with the program's variables carried (env-carrier.ts).
 */
export function enterArgv(options: {
  procsFiles: string[];
  limits: Pick<Limits, 'fileBytes' | 'openFilesMax'>;
  holderPid: number;
  uid: number;
  argv: string[];
}): string[] {
  return [
    ...cgroupEntryArgv(SCRIPT, SYSCALLS, 'kept namespace sandboxes', options),
    String(options.holderPid),
    String(options.uid),
    SANDBOX_WORKSPACE,
    SECCOMP_HEX,
    ...options.argv,
  ];
}

const SECCOMP_HEX = seccompFilter()?.toString('hex') ?? '';
