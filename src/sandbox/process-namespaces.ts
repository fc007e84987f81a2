// The namespaces the `process` tier's commands run in, built as root before the drop to the sandbox
// uid: new user (an identity map, with nested user namespaces forbidden), mount, IPC and network
// namespaces, and inside them private, empty `/tmp`, `/var/tmp`, `/dev/shm` and `/run` (so no host
// socket under /run, such as PostgreSQL's, is reachable, and nothing written there outlives the
// command) with Keel's data directory covered except for the workspace. It writes no host path.

/**
 * `perl -e USERNS -- COMMAND...`: forks a child that unshares user, mount, IPC and network
 * namespaces; the parent (still root in the host's user namespace, which the kernel requires)
 * writes the child's identity uid/gid maps, lets it exec COMMAND, and exits as it did. Perl because
 * util-linux's unshare maps ranges only through newuidmap (package uidmap), and perl-base is
 * essential on Debian.
 */
export const USERNS_LAUNCHER = [
  'pipe(my $r1, my $w1) or die "pipe: $!"; pipe(my $r2, my $w2) or die "pipe: $!";',
  'my $pid = fork // die "fork: $!";',
  'if ($pid == 0) {',
  '  close $r1; close $w2;',
  // CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWNET, through unshare(2) (x86_64: 272).
  '  syscall(272, 0x20000 | 0x08000000 | 0x10000000 | 0x40000000) == 0 or die "unshare: $!";',
  '  syswrite $w1, "u"; close $w1;',
  '  sysread $r2, my $go, 1; $go eq "m" or exit 125;',
  '  exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!";',
  '}',
  'close $w1; close $r2;',
  'sysread $r1, my $ready, 1; $ready eq "u" or exit 125;',
  'for my $f ("uid_map", "gid_map") {',
  '  open(my $m, ">", "/proc/$pid/$f") or die "$f: $!"; print $m "0 0 4294967295\\n"; close $m or die "$f: $!";',
  '}',
  'syswrite $w2, "m"; close $w2;',
  'waitpid($pid, 0);',
  'if ($? & 127) { $SIG{$_} = "DEFAULT" for keys %SIG; kill($? & 127, $$); }',
  'exit($? >> 8);',
].join('\n');

/**
 * Run as root of the new user namespace: `keel-setup WORKSPACE DATA_DIR SIZE -- COMMAND...`. It
 * forbids user namespaces below this one (the kernel checks every ancestor's limit), makes every
 * mount private, parks the workspace on the new /run while the paths that could hold it (/tmp, the
 * data dir) are covered, and moves it back to its own path. Every mount is a new tmpfs or the
 * workspace's own bind.
 */
export const PROCESS_SETUP =
  'set -e; ws=$1; data=$2; size=$3; shift 4; ' +
  'echo 0 > /proc/sys/user/max_user_namespaces; /usr/bin/mount --make-rprivate /; ' +
  'm() { /usr/bin/mount -t tmpfs -o "nosuid,nodev,size=$size,$1" "$2" "$3"; }; ' +
  'm mode=0755 keel-run /run; /usr/bin/mkdir /run/.keel-ws; /usr/bin/mount --bind "$ws" /run/.keel-ws; ' +
  'for d in /tmp /var/tmp /dev/shm; do if [ -d "$d" ]; then m mode=1777 keel-tmp "$d"; fi; done; ' +
  'if [ -d "$data" ]; then m mode=0711 keel-data "$data"; fi; ' +
  '/usr/bin/mkdir -p "$ws"; /usr/bin/mount --move /run/.keel-ws "$ws"; /usr/bin/rmdir /run/.keel-ws; ' +
  'exec "$@"';

/** Size of each private tmpfs: its pages count toward the sandbox's memory limit. */
export const PRIVATE_TMP_BYTES_MAX = 64 * 1024 * 1024;

/** The command line that puts `command` (still root) into the process tier's namespaces. */
export function processNamespaceArgs(options: {
  workspaceDir: string;
  dataDir: string;
  tmpBytes: number;
}): string[] {
  return [
    '/usr/bin/perl',
    '-e',
    USERNS_LAUNCHER,
    '--',
    '/usr/bin/bash',
    '--norc',
    '--noprofile',
    '-c',
    PROCESS_SETUP,
    'keel-setup',
    options.workspaceDir,
    options.dataDir,
    String(options.tmpBytes),
    '--',
  ];
}
