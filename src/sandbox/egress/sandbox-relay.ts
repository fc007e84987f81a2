// The path out of a sandbox that has only loopback (its own network namespace): the proxy's Unix
// socket is bound into the sandbox at SANDBOX_EGRESS_DIR, and a small relay run by the host's Perl
// (in /usr, which every namespace sandbox sees) listens on 127.0.0.1:RELAY_PORT inside and copies
// each connection to that socket. The relay binds before the program starts (no race), runs in the
// background with its output on /dev/null, and dies with the sandbox. Programs find it through the
// usual proxy variables. It carries bytes only: every decision is the proxy's, outside.
import { chownSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PERL } from '../env-carrier.ts';

/** Where the sandbox's egress directory (holding the proxy's socket) appears inside it. */
export const SANDBOX_EGRESS_DIR = '/run/keel-egress';
export const EGRESS_SOCKET_NAME = 'proxy.sock';
/** The relay's port on the sandbox's own loopback (each sandbox has its own network namespace). */
export const RELAY_PORT = 3128;

const RELAY_PERL = `use strict; use warnings; use POSIX (); use Socket; use IO::Socket::INET; use IO::Socket::UNIX; use IO::Select;
my ($path, $port, @argv) = @ARGV;
my $listen = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp', Listen => 128, ReuseAddr => 1)
  or die "keel-egress-relay: cannot listen on 127.0.0.1:$port: $!\\n";
sub pump { my ($a, $b) = @_; my $sel = IO::Select->new($a, $b); my %open = ($a => 1, $b => 1); my %peer = ($a => $b, $b => $a);
  while (keys %open) { my @ready = $sel->can_read(); for my $from (@ready) { my $n = sysread($from, my $buf, 65536);
    if (!$n) { $sel->remove($from); delete $open{$from}; shutdown($peer{$from}, 1); next; }
    my $off = 0; while ($off < $n) { my $w = syswrite($peer{$from}, $buf, $n - $off, $off); return unless defined $w; $off += $w; } } } }
my $pid = fork();
die "keel-egress-relay: fork: $!\\n" unless defined $pid;
if ($pid == 0) {
  open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
  $SIG{CHLD} = 'IGNORE';
  while (1) { my $client = $listen->accept() or next; my $child = fork();
    if (!defined $child || $child) { close($client); next; }
    close($listen);
    my $up = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or POSIX::_exit(1);
    pump($client, $up); POSIX::_exit(0); }
}
close($listen);
{ no warnings qw(exec); exec { $argv[0] } @argv; }
print STDERR "keel-exec: $argv[0]: $!\\n";
POSIX::_exit($!{ENOENT} ? 127 : 126);`;

/** `argv` started behind the relay: Perl binds 127.0.0.1:RELAY_PORT, forks the relay, execs argv. */
export function behindRelay(argv: string[]): string[] {
  return [
    PERL,
    '-e',
    RELAY_PERL,
    '--',
    `${SANDBOX_EGRESS_DIR}/${EGRESS_SOCKET_NAME}`,
    String(RELAY_PORT),
    ...argv,
  ];
}

/** The variables that send HTTP clients (curl, pip, npm, Python, Node's fetch with them) to the relay. */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${RELAY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: '',
    no_proxy: '',
  };
}

/**
 * Makes the sandbox's egress directory on the host: only the sandbox's uid may enter it (no other
 * sandbox can reach this one's proxy socket); its parent is only traversable (0711), so the tier's
 * launcher, as that uid, can reach it to bind it in.
 */
export function prepareEgressDir(dir: string, uid: number): void {
  mkdirSync(dirname(dir), { recursive: true, mode: 0o711 });
  mkdirSync(dir, { mode: 0o700 });
  chownSync(dir, uid, uid);
}
