// How a command enters a kept namespace sandbox (its holder's namespaces): a short Perl program,
// because nsenter cannot do it safely. Entering a user namespace resets the bounding set to full
// and nsenter (util-linux before 2.39) cannot keep the capabilities needed to drop it again, so the
// command would run without no_new_privs and with every capability bounded in. This helper does
// the setns calls itself and then, still holding capabilities inside the sandbox's user namespace,
// sets no_new_privs, empties the bounding set, becomes the sandbox uid, loads the tier's seccomp
// filter (seccomp-filter.ts, the same bwrap loads for one-shot commands) and execs the command. It
// never runs anything of its own after that exec; it only waits and passes the exit status on.
import { SANDBOX_WORKSPACE } from './driver.ts';
import { PERL, RESTORE_ENV_PERL } from './env-carrier.ts';
import { seccompFilter } from './seccomp-filter.ts';

/**
 * Syscall numbers per architecture (setns, prctl, setgroups, setresgid, setresuid), from the
 * kernel's tables: Perl's syscall.ph is not in perl-base, which every Debian system has.
 */
const SCRIPT = String.raw`
use strict; use warnings; use POSIX ();
my %nr = (x86_64 => [308, 157, 116, 119, 117], aarch64 => [268, 167, 159, 149, 147]);
my $arch = (POSIX::uname())[4];
my $t = $nr{$arch} or die "keel-enter: unsupported architecture $arch\n";
my ($SETNS, $PRCTL, $SETGROUPS, $SETRESGID, $SETRESUID) = @$t;
my ($pid, $id, $cwd, $seccomp, @argv) = @ARGV;
$id += 0;
# The program's variables arrive prefixed, so none of them (LD_PRELOAD, PERL5OPT, BASH_ENV…) acts on
# the launcher, prlimit or this helper, which run as root on the host.
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
  { no warnings qw(exec); exec { $argv[0] } @argv; }
  print STDERR "keel-enter: $argv[0]: $!\n";
  POSIX::_exit($!{ENOENT} ? 127 : 126);
}
$SIG{$_} = 'IGNORE' for qw(INT TERM HUP QUIT PIPE);
waitpid($child, 0) == $child or die "keel-enter: waitpid: $!\n";
my $status = $?;
if ($status & 127) {
  my $signal = $status & 127;
  POSIX::sigaction($signal, POSIX::SigAction->new('DEFAULT'));
  kill($signal, $$);
  POSIX::_exit(128 + $signal);
}
POSIX::_exit($status >> 8);
`;

/**
 * The command line that runs `argv` inside the namespaces of `holderPid` as `uid` (and gid), in the
 * workspace, with no_new_privs, an empty bounding set and the tier's seccomp filter.
 */
export function enterArgv(holderPid: number, uid: number, argv: string[]): string[] {
  return [
    PERL,
    '-e',
    SCRIPT,
    '--',
    String(holderPid),
    String(uid),
    SANDBOX_WORKSPACE,
    SECCOMP_HEX,
    ...argv,
  ];
}

const SECCOMP_HEX = seccompFilter()?.toString('hex') ?? '';
