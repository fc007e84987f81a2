// A cross-process exclusive lock on a file, held by a small child: util-linux `flock` takes the
// kernel lock and then waits on `cat` reading a pipe only this process writes to. Releasing closes
// the pipe; if this process dies, even by SIGKILL, the kernel closes it too, `cat` and `flock` exit
// and the lock is free. So two Keel processes (or `keel images build` beside `keel dev`) never build
// the same image at once, and a crashed builder never leaves a lock that needs a staleness guess.
import { spawn } from 'node:child_process';
import { KeelError } from '../../domain/keel-error.ts';

const FLOCK = '/usr/bin/flock';
const LOCKED = 'locked\n';

export interface HeldLock {
  release(): void;
}

/** Waits (without a bound: an image build holds it for minutes) until the lock on `file` is held. */
export function acquireFileLock(file: string, signal?: AbortSignal): Promise<HeldLock> {
  const child = spawn(
    FLOCK,
    ['--exclusive', file, '/bin/sh', '-c', `printf '${LOCKED.trim()}\\n'; exec cat >/dev/null`],
    { stdio: ['pipe', 'pipe', 'pipe'], env: {} },
  );
  child.stdin.on('error', () => undefined);
  const release = () => {
    child.stdin.end();
    child.stdout.destroy();
    child.stderr.destroy();
  };
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const onAbort = () => {
      child.kill('SIGKILL');
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', (error) =>
      reject(
        new KeelError('image_build_failed', `cannot take the image lock ${file}: ${error.message}`),
      ),
    );
    child.once('exit', (code) => {
      signal?.removeEventListener('abort', onAbort);
      reject(
        new KeelError(
          'image_build_failed',
          `cannot take the image lock ${file} (${code}): ${err.trim()}`,
        ),
      );
    });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out !== LOCKED) return;
      signal?.removeEventListener('abort', onAbort);
      child.removeAllListeners('exit');
      child.unref();
      resolve({ release });
    });
  });
}
