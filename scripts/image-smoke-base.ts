// The local stand-in for `node:24-bookworm-slim` that scripts/image-smoke.ts builds the image on when no registry is
// reachable: a Debian bookworm root filesystem from mmdebstrap (the `minbase` variant, as Debian's slim images),
// this checkout's Node 24 binary in /usr/local/bin, the host's npm in /usr/local/lib/node_modules, and a `node`
// user (uid 1000), as the official image has. It owns the recipe, its content key (the image is reused while the
// key is unchanged) and the safe removal of its work directory.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Bump when the recipe changes in a way the content key does not see. */
const RECIPE_VERSION = 1;
const MMDEBSTRAP = '/usr/bin/mmdebstrap';
const SUITE = 'bookworm';
/** Where the base puts the host's extra CA certificates, for Node (and npm) through NODE_EXTRA_CA_CERTS. */
const EXTRA_CA_PATH = '/usr/local/share/keel-base/extra-ca.pem';
const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface BaseInputs {
  /** A real Node 24 ELF binary (symlinks followed). */
  node: string;
  nodeVersion: string;
  /** The npm package directory (holds package.json and bin/npm-cli.js). */
  npmDir: string;
  npmVersion: string;
  /** The host's NODE_EXTRA_CA_CERTS file, when set: a TLS-intercepting egress needs it in the image too. */
  extraCa: string | undefined;
  mirror: string;
}

/** The inputs of the base image found on this machine, or why there are none. */
export function findBaseInputs(root: string, env: NodeJS.ProcessEnv): BaseInputs {
  const candidates = [join(root, 'node_modules', 'node', 'bin', 'node'), process.execPath];
  const node = candidates
    .filter((path) => existsSync(path))
    .map((path) => realpathSync(path))
    .find((path) => isElf(path) && nodeMajor(path) === 24);
  if (node === undefined)
    throw new Error(
      `no Node 24 ELF binary among ${candidates.join(', ')} (the devDependency \`node\` provides one)`,
    );
  const npmCli = realpathSync(
    execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim(),
  );
  const npmDir = dirname(dirname(npmCli)); // <npm>/bin/npm-cli.js
  const npmPackage = JSON.parse(readFileSync(join(npmDir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  if (npmPackage.name !== 'npm')
    throw new Error(`npm resolves to ${npmCli}, not inside an npm package`);
  const extraCa = env.NODE_EXTRA_CA_CERTS;
  return {
    node,
    nodeVersion: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
    npmDir,
    npmVersion: npmPackage.version,
    extraCa: extraCa !== undefined && extraCa !== '' && existsSync(extraCa) ? extraCa : undefined,
    mirror: env.KEEL_SMOKE_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian',
  };
}

function isElf(path: string): boolean {
  const head = readFileSync(path).subarray(0, 4);
  return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
}

function nodeMajor(path: string): number {
  try {
    return Number(
      execFileSync(path, ['--version'], { encoding: 'utf8' }).trim().slice(1).split('.')[0],
    );
  } catch {
    return 0;
  }
}

/** The image tag for these inputs: a rebuild happens only when one of them changes. */
export function baseImageTag(inputs: BaseInputs): string {
  const hash = createHash('sha256');
  hash.update(
    JSON.stringify({ RECIPE_VERSION, SUITE, ...inputs, node: undefined, extraCa: undefined }),
  );
  hash.update(readFileSync(inputs.node));
  if (inputs.extraCa !== undefined) hash.update(readFileSync(inputs.extraCa));
  return `localhost/keel-node-base:24-${hash.digest('hex').slice(0, 12)}`;
}

/** mmdebstrap's argv, writing the root filesystem as a tarball (no target directory is left to remove). */
export function mmdebstrapArgs(inputs: BaseInputs, tarball: string): string[] {
  const hooks = [
    `copy-in ${inputs.node} /usr/local/bin`,
    'mkdir -p "$1/usr/local/lib/node_modules"',
    `copy-in ${inputs.npmDir} /usr/local/lib/node_modules`,
    'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"',
    'ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
    'chroot "$1" groupadd --gid 1000 node',
    'chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
  ];
  if (inputs.extraCa !== undefined)
    hooks.push(
      `mkdir -p "$1${dirname(EXTRA_CA_PATH)}" && cp ${inputs.extraCa} "$1${EXTRA_CA_PATH}"`,
    );
  return [
    '--variant=minbase',
    '--include=passwd',
    // Debian's slim images leave documentation out.
    '--dpkgopt=path-exclude=/usr/share/doc/*',
    '--dpkgopt=path-include=/usr/share/doc/*/copyright',
    '--dpkgopt=path-exclude=/usr/share/man/*',
    '--dpkgopt=path-exclude=/usr/share/locale/*',
    ...hooks.map((hook) => `--customize-hook=${hook}`),
    SUITE,
    tarball,
    inputs.mirror,
  ];
}

/** `podman import`'s image settings: PATH and Node's extra CAs, as the official image sets its own. */
export function importChanges(inputs: BaseInputs): string[] {
  const changes = [`ENV PATH=${IMAGE_PATH}`, 'CMD ["node"]'];
  if (inputs.extraCa !== undefined) changes.push(`ENV NODE_EXTRA_CA_CERTS=${EXTRA_CA_PATH}`);
  return changes;
}

/** Mount points at or under `dir` (an mmdebstrap killed mid-build leaves /dev, /proc... bound in its tree). */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined)
    .map((point) => point.replaceAll('\\040', ' '))
    .filter((point) => point === dir || point.startsWith(prefix));
}

/**
 * Removes a work directory, but never across a mount: with anything mounted under it, the directory stays and the
 * error says what to unmount (a recursive removal would go on into the host's /dev/shm).
 */
export function removeWorkDir(dir: string): void {
  const mounts = mountsUnder(dir);
  if (mounts.length > 0)
    throw new Error(
      `left ${dir} in place: ${mounts.join(', ')} still mounted under it (unmount with \`umount -R <path>\`, then remove it)`,
    );
  rmSync(dir, { recursive: true, force: true });
}

/** Builds the base with mmdebstrap and imports it as `tag`; `log` gets mmdebstrap's progress lines. */
export async function buildBaseImage(
  inputs: BaseInputs,
  tag: string,
  log: (line: string) => void,
): Promise<void> {
  if (!existsSync(MMDEBSTRAP))
    throw new Error('mmdebstrap is not installed (apt-get install -y mmdebstrap)');
  const workDir = mkdtempSync(join(tmpdir(), 'keel-image-base-'));
  try {
    const tarball = join(workDir, 'rootfs.tar');
    // setpriv --pdeathsig TERM: mmdebstrap stops (and unmounts) with this script. TMPDIR: its chroot lives in our
    // work directory, where removeWorkDir sees a mount a killed build left.
    await spawnLogged(
      '/usr/bin/setpriv',
      ['--pdeathsig', 'TERM', '--', MMDEBSTRAP, ...mmdebstrapArgs(inputs, tarball)],
      { ...process.env, TMPDIR: workDir },
      log,
    );
    execFileSync(
      'podman',
      ['import', ...importChanges(inputs).flatMap((c) => ['--change', c]), tarball, tag],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } finally {
    removeWorkDir(workDir);
  }
}

async function spawnLogged(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const tail: string[] = [];
  const onLine = (line: string) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    if (line.startsWith('I: ')) log(line.slice(3));
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
  }
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`mmdebstrap failed (${code}):\n${tail.join('\n')}`);
}
