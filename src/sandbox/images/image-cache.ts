// The content-addressed cache of built images: `<dir>/<sha256 of the spec>/rootfs` (read-only to
// every sandbox, shared by all of them) and `image.json` beside it. An image is built once: builds
// of one spec share one promise in this process and one file lock across processes, and the second
// waiter finds the first one's result. A build happens in `.build-<hash>-<random>` and is renamed
// into place only when complete, so a failed, stopped or crashed build never leaves a half image
// where a sandbox would find it (its leftovers are removed by the next build of that spec, under
// the lock). It never deletes an image a sandbox asked for, except through remove().
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IMAGE_BUILD_WAIT_MS_DEFAULT } from '../../config/defaults.ts';
import { isKeelError, KeelError } from '../../domain/keel-error.ts';
import { hostDebianMirror } from './apt-mirror.ts';
import { buildRootfs, mountsUnder, type BuildProgress } from './image-builder.ts';
import { acquireFileLock } from './image-lock.ts';
import { imageHash, normalizeImageSpec, type ImageSpec, type ProfileImage } from './image-spec.ts';

const run = promisify(execFile);
const META_FILE = 'image.json';
/**
 * The cache and every image directory: sandbox uids traverse them to the root filesystem (bwrap
 * binds it as that uid), but cannot list them.
 */
const IMAGE_DIR_MODE = 0o711;
const HASH = /^[0-9a-f]{64}$/;
/** Shortest hash prefix `keel images rm` accepts. */
const HASH_PREFIX_MIN_CHARS = 12;

export interface BuiltImage {
  hash: string;
  /** Names the image was built or asked for under (one spec may have several). */
  names: string[];
  /** Host path of the read-only root filesystem. */
  rootfs: string;
  spec: ReturnType<typeof normalizeImageSpec>;
  builtAt: string;
  buildSeconds: number;
  sizeBytes: number;
}

export interface BuildOutcome {
  image: BuiltImage;
  /** True when the image was already built (by an earlier build, another process, or a concurrent caller). */
  cached: boolean;
  /** Time this call took, build or lookup. */
  seconds: number;
}

export interface ImageCacheOptions {
  /** Where images live: the configured image directory, else `<dataDir>/images`. */
  dir: string;
  /** The Debian mirror for specs that name none; default: the host's apt source. */
  mirror?: string | undefined;
  /** Default wait of ensure(); 0: a sandbox never builds an image, it fails with image_not_built. */
  buildWaitMs?: number | undefined;
}

export class ImageCache {
  readonly dir: string;
  readonly mirror: string;
  readonly buildWaitMs: number;
  private readonly inFlight = new Map<string, Promise<BuildOutcome>>();
  private readonly stopping = new AbortController();

  constructor(options: ImageCacheOptions) {
    this.dir = options.dir;
    this.mirror = options.mirror ?? hostDebianMirror();
    this.buildWaitMs = options.buildWaitMs ?? IMAGE_BUILD_WAIT_MS_DEFAULT;
  }

  hashOf(spec: ImageSpec): string {
    return imageHash(spec, this.mirror);
  }

  /** Host path of the image's root filesystem (built or not); undefined for `host`. */
  rootfsOf(image: ProfileImage): string | undefined {
    return image === 'host' ? undefined : join(this.dir, this.hashOf(image), 'rootfs');
  }

  get(hash: string): BuiltImage | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, hash, META_FILE), 'utf8')) as BuiltImage;
    } catch {
      return undefined;
    }
  }

  /** Every complete image in the cache, newest first. */
  list(): BuiltImage[] {
    let entries: string[];
    try {
      entries = readdirSync(this.dir);
    } catch {
      return [];
    }
    return entries
      .filter((entry) => HASH.test(entry))
      .map((hash) => this.get(hash))
      .filter((image): image is BuiltImage => image !== undefined)
      .sort((a, b) => (a.builtAt < b.builtAt ? 1 : -1));
  }

  /**
   * The image's root filesystem for a sandbox: at once when built; otherwise built now, waiting at
   * most `waitMs`. Past the wait: `image_not_built` (retryable; the build goes on, and a later call
   * finds it). A build that fails: `image_build_failed`.
   */
  async ensure(image: ProfileImage, waitMs = this.buildWaitMs): Promise<string | undefined> {
    if (image === 'host') return undefined;
    const hash = this.hashOf(image);
    if (this.get(hash) !== undefined) return join(this.dir, hash, 'rootfs');
    const notBuilt = (why: string) =>
      new KeelError(
        'image_not_built',
        `image ${image.name} (${hash.slice(0, 12)}) is not built: ${why}`,
        {
          retryable: true,
          details: { image: image.name, hash, fix: 'keel images build' },
        },
      );
    if (waitMs <= 0)
      throw notBuilt('sandboxes do not build images here (build wait 0): run `keel images build`');
    const building = this.build(image);
    building.catch(() => undefined); // whoever waits longest sees the outcome; nobody may be left
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(notBuilt(`its build did not finish within ${waitMs} ms and goes on`)),
        waitMs,
      );
    });
    try {
      return (await Promise.race([building, timeout])).image.rootfs;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Builds the image unless it is built; one build per spec at a time, in and across processes. */
  build(
    spec: ImageSpec,
    options: { onProgress?: (progress: BuildProgress) => void } = {},
  ): Promise<BuildOutcome> {
    if (this.stopping.signal.aborted)
      return Promise.reject(new KeelError('image_build_failed', 'the image cache is closed'));
    const hash = this.hashOf(spec);
    let building = this.inFlight.get(hash);
    if (building === undefined) {
      building = this.buildOnce(spec, hash, options.onProgress).finally(() =>
        this.inFlight.delete(hash),
      );
      this.inFlight.set(hash, building);
    }
    return building;
  }

  private async buildOnce(
    spec: ImageSpec,
    hash: string,
    onProgress: ((progress: BuildProgress) => void) | undefined,
  ): Promise<BuildOutcome> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const found = this.get(hash);
    if (found !== undefined)
      return { image: this.named(found, spec.name), cached: true, seconds: seconds() };
    mkdirSync(this.dir, { recursive: true, mode: IMAGE_DIR_MODE });
    chmodSync(this.dir, IMAGE_DIR_MODE);
    const lock = await acquireFileLock(join(this.dir, `.lock-${hash}`), this.stopping.signal);
    try {
      const builtMeanwhile = this.get(hash);
      if (builtMeanwhile !== undefined)
        return { image: this.named(builtMeanwhile, spec.name), cached: true, seconds: seconds() };
      // Under the lock no other build of this spec runs: what a crashed one left can go.
      for (const entry of readdirSync(this.dir))
        if (entry.startsWith(`.build-${hash}-`)) removeTree(join(this.dir, entry));
      const workDir = join(this.dir, `.build-${hash}-${randomBytes(4).toString('hex')}`);
      try {
        await buildRootfs({
          spec,
          mirror: this.mirror,
          workDir,
          onProgress,
          signal: this.stopping.signal,
        });
        const image: BuiltImage = {
          hash,
          names: [spec.name],
          rootfs: join(this.dir, hash, 'rootfs'),
          spec: normalizeImageSpec(spec, this.mirror),
          builtAt: new Date().toISOString(),
          buildSeconds: Math.round(seconds() * 10) / 10,
          sizeBytes: await treeBytes(join(workDir, 'rootfs')),
        };
        for (const entry of readdirSync(workDir))
          if (entry !== 'rootfs') rmSync(join(workDir, entry), { force: true });
        writeFileSync(join(workDir, META_FILE), `${JSON.stringify(image, null, 2)}\n`, {
          mode: 0o644,
        });
        chmodSync(workDir, IMAGE_DIR_MODE);
        chmodSync(join(workDir, 'rootfs'), 0o755);
        renameSync(workDir, join(this.dir, hash)); // the image appears whole, or not at all
        return { image, cached: false, seconds: seconds() };
      } catch (error) {
        removeTree(workDir);
        if (isKeelError(error)) throw error;
        throw new KeelError(
          'image_build_failed',
          `image ${spec.name}: ${(error as Error).message}`,
          {
            cause: error,
            details: { image: spec.name, hash },
          },
        );
      }
    } finally {
      lock.release();
    }
  }

  /** Records another name for an image (one spec declared under two names), keeping the file whole. */
  private named(image: BuiltImage, name: string): BuiltImage {
    if (image.names.includes(name)) return image;
    const renamed = { ...image, names: [...image.names, name] };
    const file = join(this.dir, image.hash, META_FILE);
    writeFileSync(`${file}.tmp`, `${JSON.stringify(renamed, null, 2)}\n`, { mode: 0o644 });
    renameSync(`${file}.tmp`, file);
    return renamed;
  }

  /**
   * The images a name or hash (a prefix of at least 12 characters) refers to. Names are the ones
   * recorded when the image was built.
   */
  find(nameOrHash: string): BuiltImage[] {
    const images = this.list();
    if (/^[0-9a-f]+$/.test(nameOrHash) && nameOrHash.length >= HASH_PREFIX_MIN_CHARS) {
      const byHash = images.filter((image) => image.hash.startsWith(nameOrHash));
      if (byHash.length > 0) return byHash;
    }
    return images.filter((image) => image.names.includes(nameOrHash));
  }

  /**
   * Removes a built image (under its build lock: never one being built). Sandboxes already running
   * on it keep working only as long as they need no file that is gone: remove images nobody uses.
   */
  async remove(hash: string): Promise<boolean> {
    if (!HASH.test(hash) || this.get(hash) === undefined) return false;
    const lock = await acquireFileLock(join(this.dir, `.lock-${hash}`), this.stopping.signal);
    try {
      if (this.get(hash) === undefined) return false;
      const doomed = join(this.dir, `.rm-${hash}-${randomBytes(4).toString('hex')}`);
      renameSync(join(this.dir, hash), doomed); // gone for new sandboxes at once
      removeTree(doomed);
      return true;
    } finally {
      lock.release();
    }
  }

  /** Stops builds in progress (their work directories are removed) and waits for them. */
  async close(): Promise<void> {
    this.stopping.abort(new KeelError('image_build_failed', 'the image cache is closing'));
    await Promise.allSettled([...this.inFlight.values()]);
  }
}

/**
 * Deletes a build's directory tree, never through a mount point: mmdebstrap mounts /proc, /sys,
 * /dev/pts and /dev/shm inside the root it builds, and one killed mid-build leaves them mounted
 * (seen here). They are unmounted first (deepest first, lazily); if any is still there, nothing is
 * deleted.
 */
function removeTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const mount of mountsUnder(dir).sort((a, b) => b.length - a.length)) {
    try {
      execFileSync('/usr/bin/umount', ['--lazy', mount], { stdio: 'ignore' });
    } catch {
      // checked below
    }
  }
  const mounts = mountsUnder(dir);
  if (mounts.length > 0)
    throw new KeelError(
      'image_build_failed',
      `refusing to delete ${dir}: mount points under it (${mounts.join(', ')})`,
    );
  rmSync(dir, { recursive: true, force: true });
}

async function treeBytes(dir: string): Promise<number> {
  try {
    const { stdout } = await run('/usr/bin/du', ['-sb', dir]);
    return Number.parseInt(stdout, 10) || 0;
  } catch {
    return 0;
  }
}
