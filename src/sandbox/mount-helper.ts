// Workspace mounts without a process per mount: one small Perl helper per Keel process, started on
// first use, does the mount(2) and umount2(2) calls Keel asks for on its stdin, one at a time, and
// answers each with the errno (0: done). A `mount` or `umount` spawned from Node cost ~6 ms each on
// the path of every sandbox start and teardown; a request here costs a pipe round trip. The helper
// runs as Keel's own user (root) in Keel's mount namespace, reads nothing but its requests (fields
// hex-encoded, so no path can break the framing) and exits when its stdin closes, that is when
// Keel exits. Where it cannot run (no syscall table for this architecture, or it died), callers fall
// back to the mount and umount programs.
import { spawn, type ChildProcess } from 'node:child_process';
import { PERL } from './env-carrier.ts';
import { maskedStdio } from './inherited-fds.ts';

/** mount, umount2 syscall numbers per architecture. */
const SYSCALLS: Partial<Record<NodeJS.Architecture, number[]>> = {
  x64: [165, 166],
  arm64: [40, 39],
};

const SCRIPT = String.raw`
use strict;
my ($MOUNT, $UMOUNT2) = split(/,/, shift);
my $fstype = 'tmpfs'; # a variable: syscall() may not be handed a read-only string
$| = 1;
while (my $line = <STDIN>) {
  chomp $line;
  my ($op, @f) = map { pack('H*', $_) } split(/ /, $line);
  my $ok;
  # MS_NOSUID (2) | MS_NODEV (4); MNT_DETACH (2).
  if ($op eq 'mount') { $ok = syscall($MOUNT, $f[0], $f[1], $fstype, 6, $f[2]) == 0; }
  elsif ($op eq 'umount') { $ok = syscall($UMOUNT2, $f[0], 2) == 0; }
  print(($ok ? 0 : ($! + 0) || 1), "\n");
}
`;

interface Pending {
  resolve(): void;
  reject(error: Error): void;
}

let helper: { child: ChildProcess; pending: Pending[]; buffered: string } | undefined;

function start(): typeof helper {
  const numbers = SYSCALLS[process.arch];
  if (numbers === undefined) return undefined;
  const child = spawn(PERL, ['-e', SCRIPT, '--', numbers.join(',')], {
    env: {},
    cwd: '/',
    stdio: maskedStdio(['pipe', 'pipe', 'ignore']),
  });
  const started = { child, pending: [] as Pending[], buffered: '' };
  const fail = (why: string) => {
    if (helper === started) helper = undefined;
    for (const waiter of started.pending.splice(0))
      waiter.reject(new Error(`mount helper: ${why}`));
  };
  child.on('error', (error) => fail(error.message));
  child.on('exit', (code, signal) => fail(`exited (${code ?? signal})`));
  child.stdin!.on('error', () => undefined);
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    started.buffered += chunk;
    for (let end = started.buffered.indexOf('\n'); end >= 0; ) {
      const errno = Number(started.buffered.slice(0, end));
      started.buffered = started.buffered.slice(end + 1);
      const waiter = started.pending.shift();
      if (errno === 0) waiter?.resolve();
      else waiter?.reject(Object.assign(new Error(`errno ${errno}`), { errno }));
      end = started.buffered.indexOf('\n');
    }
    if (started.pending.length === 0) idle(started);
  });
  idle(started);
  return started;
}

/** Nothing pending: the helper does not keep Keel alive. */
function idle(h: NonNullable<typeof helper>): void {
  h.child.unref();
  (h.child.stdout as unknown as { unref?: () => void }).unref?.();
}

function busy(h: NonNullable<typeof helper>): void {
  h.child.ref();
  (h.child.stdout as unknown as { ref?: () => void }).ref?.();
}

/**
 * Runs one request; rejects with the errno's error, or when there is no helper (the caller then
 * uses the mount programs).
 */
function request(fields: string[]): Promise<void> {
  helper ??= start();
  const h = helper;
  if (h === undefined) return Promise.reject(new Error('mount helper: unsupported here'));
  return new Promise((resolve, reject) => {
    h.pending.push({ resolve, reject });
    busy(h);
    h.child.stdin!.write(`${fields.map((f) => Buffer.from(f).toString('hex')).join(' ')}\n`);
  });
}

/** Mounts a nosuid, nodev tmpfs named `source` at `dir` with `options` (mount(8)'s -o string). */
export function mountTmpfs(source: string, dir: string, options: string): Promise<void> {
  return request(['mount', source, dir, options]);
}

/** Detaches the mount at `dir` (umount -l). */
export function unmountLazy(dir: string): Promise<void> {
  return request(['umount', dir]);
}
