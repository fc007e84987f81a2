// Turns an image spec into a root filesystem directory with Debian's mmdebstrap: the suite's
// packages from the mirror, then the spec's files, then its setup commands (each as root, chrooted
// in the image), then the mount point of the workspace. It writes only inside the directory it is
// given and reports progress as mmdebstrap's phases; it never decides where an image is cached
// (image-cache.ts does, and moves the finished directory into place).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeelError } from '../../domain/keel-error.ts';
import { SANDBOX_WORKSPACE } from '../driver.ts';
import type { ImageSpec } from './image-spec.ts';

export const MMDEBSTRAP = '/usr/bin/mmdebstrap';
/** Lines of mmdebstrap's output an `image_build_failed` error carries. */
const BUILD_LOG_TAIL_LINES = 30;

/** mmdebstrap's phases, in order, as its `I:` lines announce them. */
export const BUILD_STAGES = [
  { match: 'running apt-get update', label: 'apt-get update' },
  { match: 'downloading packages', label: 'downloading packages' },
  { match: 'extracting archives', label: 'extracting archives' },
  { match: 'installing essential packages', label: 'installing essential packages' },
  { match: 'installing remaining packages', label: 'installing packages' },
  { match: 'running --customize-hook', label: 'files and setup' },
  { match: 'cleaning package lists', label: 'cleaning up' },
] as const;

export interface BuildProgress {
  /** 1-based index of the phase among BUILD_STAGES (0 before the first). */
  stage: number;
  stages: number;
  label: string;
}

export interface BuildRootfsOptions {
  spec: ImageSpec;
  mirror: string;
  /** An empty directory of its own: the root filesystem goes to `<workDir>/rootfs`. */
  workDir: string;
  onProgress?: (progress: BuildProgress) => void;
  signal?: AbortSignal;
}

/** `s` as one single-quoted shell word. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** mmdebstrap's argv for the spec; files and setup scripts are written to `workDir` first. */
export function mmdebstrapArgs(spec: ImageSpec, mirror: string, workDir: string): string[] {
  const hooks: string[] = [
    `mkdir -p "$1${SANDBOX_WORKSPACE}"`,
    // mmdebstrap writes no /etc/hosts: without one, `localhost` would go to DNS, which a sandbox
    // cannot reach (a spec's own file replaces this one).
    `[ -e "$1/etc/hosts" ] || printf '127.0.0.1 localhost\\n::1 localhost ip6-localhost ip6-loopback\\n' > "$1/etc/hosts"`,
  ];
  spec.files.forEach((file, i) => {
    const host = join(workDir, `file-${i}`);
    writeFileSync(host, file.content, { mode: 0o600 });
    // Written from inside the chroot, so a link the packages put on the path resolves in the image,
    // never on the host.
    hooks.push(
      `chroot "$1" /bin/sh -ec 'mkdir -p "$(dirname "$0")"; cat > "$0"; chmod ${file.mode.toString(8)} "$0"' ${shellQuote(file.path)} < ${shellQuote(host)}`,
    );
  });
  spec.setup.forEach((command, i) => {
    const host = join(workDir, `setup-${i}.sh`);
    writeFileSync(host, `${command}\n`, { mode: 0o600 });
    hooks.push(`chroot "$1" /bin/sh -e < ${shellQuote(host)}`);
  });
  return [
    `--variant=${spec.variant}`,
    ...(spec.packages.length > 0 ? [`--include=${spec.packages.join(',')}`] : []),
    ...hooks.map((hook) => `--customize-hook=${hook}`),
    spec.suite,
    join(workDir, 'rootfs'),
    spec.mirror ?? mirror,
  ];
}

/**
 * Builds the spec's root filesystem into `<workDir>/rootfs`. A failure is `image_build_failed` with
 * the tail of mmdebstrap's output; the caller removes the work directory.
 */
export async function buildRootfs(options: BuildRootfsOptions): Promise<void> {
  if (!existsSync(MMDEBSTRAP))
    throw new KeelError(
      'image_build_failed',
      'mmdebstrap is not installed (fix: apt-get install -y mmdebstrap)',
      {
        details: { image: options.spec.name },
      },
    );
  mkdirSync(options.workDir, { recursive: true, mode: 0o700 });
  const args = mmdebstrapArgs(options.spec, options.mirror, options.workDir);
  const log: string[] = [];
  let stage = 0;
  const report = (label: string) =>
    options.onProgress?.({ stage, stages: BUILD_STAGES.length, label });
  report('starting');
  // setpriv --pdeathsig: mmdebstrap dies with Keel, rather than writing on into a directory a later
  // build will remove. Its own environment only: Keel's variables never reach maintainer scripts.
  const child = spawn('/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', MMDEBSTRAP, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: {
      PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
      LANG: 'C.UTF-8',
      HOME: '/root',
      TMPDIR: options.workDir,
    },
  });
  const onAbort = () => {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort(); // stopped while it was being spawned: a listener added now never fires
  let partial = '';
  const onData = (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      log.push(line);
      if (log.length > BUILD_LOG_TAIL_LINES) log.shift();
      const next = BUILD_STAGES.findIndex((s, i) => i >= stage && line.includes(s.match));
      if (line.startsWith('I: ') && next >= 0) {
        stage = next + 1;
        report(BUILD_STAGES[next]!.label);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => resolve({ code, signal }));
    },
  ).finally(() => options.signal?.removeEventListener('abort', onAbort));
  if (options.signal?.aborted)
    throw new KeelError(
      'image_build_failed',
      `the build of image ${options.spec.name} was stopped`,
      {
        details: { image: options.spec.name },
      },
    );
  if (exit.code !== 0) {
    if (partial !== '') log.push(partial);
    throw new KeelError(
      'image_build_failed',
      `mmdebstrap failed for image ${options.spec.name} (${exit.code ?? exit.signal}): ${log.join('\n').trim()}`,
      { details: { image: options.spec.name, log: log.join('\n') } },
    );
  }
  stage = BUILD_STAGES.length;
  report('done');
}

/** Mount points under `dir` in this process's mount namespace (a build must leave none). */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .map((path) =>
      path.replace(/\\(\d{3})/g, (_, octal: string) =>
        String.fromCharCode(Number.parseInt(octal, 8)),
      ),
    )
    .filter((path) => path === dir || path.startsWith(prefix));
}
