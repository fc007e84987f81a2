// `keel images build|list|rm`: the environment images an agents module declares (defineImage),
// built ahead of time into the image cache that sandboxes use (KEEL_IMAGES_DIR, else
// `<data dir>/images`), listed, and removed. It talks to no running Keel: the cache is a
// directory, and builds lock per image, so it can run beside `keel dev` on the same cache.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../config/config.ts';
import { isKeelError } from '../domain/keel-error.ts';
import { ImageCache, type BuiltImage } from '../sandbox/images/image-cache.ts';
import { imagesDefined, type ImageSpec } from '../sandbox/images/image-spec.ts';
import { buildDisplay } from './images-progress.ts';
import { HELP_FLAG, parseFlags } from './kit/args.ts';
import {
  EXIT_FAILURE,
  EXIT_OK,
  isTty,
  printJson,
  StartupError,
  UsageError,
  type CliIo,
} from './kit/output.ts';

export const IMAGES_USAGE = `usage: keel images <command> [options]

  build --agents <file> [name...]   build the images the agents module declares (all, or the ones named);
                                    an image already built is a cache hit
  list [--agents <file>]            built images: name, hash, size, build time; with --agents, also the
                                    declared images not built yet
  rm <name|hash>...                 remove built images (a hash prefix of 12 or more characters will do)

options:
  --agents <file>   the agents module: its defineImage() declarations (exported or not)
  --dir <dir>       the image cache (default: $KEEL_IMAGES_DIR, else <data dir>/images)
  --data <dir>      the data directory (default: $KEEL_DATA_DIR, else ./.keel)
  --mirror <url>    the Debian mirror (default: $KEEL_IMAGE_MIRROR, else the host's apt source)
  --json            machine-readable output
  --help            show this text

Builds need root and mmdebstrap (apt-get install -y mmdebstrap). On a terminal a build shows a progress bar;
otherwise one line per phase. Exit codes: 0 success, 1 a build failed or nothing matched, 2 usage error.`;

const FLAGS = {
  agents: { type: 'string' },
  dir: { type: 'string' },
  data: { type: 'string' },
  mirror: { type: 'string' },
  json: { type: 'boolean', default: false },
  ...HELP_FLAG,
} as const;

export async function runImagesCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseFlags(rest, FLAGS);
  if (sub === undefined || sub === 'help' || values.help) {
    io.stdout.write(`${IMAGES_USAGE}\n`);
    return sub === undefined ? 2 : EXIT_OK;
  }
  const { config } = loadConfig(io.env, {
    dataDir: values.data,
    imagesDir: values.dir,
    imageMirror: values.mirror,
  });
  const cache = new ImageCache({
    dir: resolve(config.imagesDir ?? join(config.dataDir, 'images')),
    mirror: config.imageMirror,
  });
  try {
    switch (sub) {
      case 'build':
        return await build(
          cache,
          await declared(values.agents, '--agents <file> is required'),
          positionals,
          io,
          values.json,
        );
      case 'list':
        return list(
          cache,
          values.agents === undefined ? [] : await declared(values.agents),
          io,
          values.json,
        );
      case 'rm':
        return await remove(cache, positionals, io, values.json);
      default:
        throw new UsageError(
          `unknown images command ${JSON.stringify(sub)}`,
          'keel images build|list|rm (see keel images --help)',
        );
    }
  } finally {
    await cache.close();
  }
}

/** The images the agents module declares, in declaration order. */
async function declared(file: string | undefined, missing?: string): Promise<ImageSpec[]> {
  if (file === undefined) {
    if (missing !== undefined)
      throw new UsageError(missing, 'e.g. keel images build --agents ./agents.ts');
    return [];
  }
  const path = resolve(file);
  if (!existsSync(path))
    throw new StartupError(
      `agents file ${file} does not exist`,
      'pass the module that declares your images',
    );
  try {
    await import(pathToFileURL(path).href);
  } catch (error) {
    throw new StartupError(
      `agents file ${file} does not load: ${(error as Error).message}`,
      `\`node ${file}\` shows the whole error`,
      {
        cause: error,
      },
    );
  }
  return [...imagesDefined().values()];
}

async function build(
  cache: ImageCache,
  specs: ImageSpec[],
  names: string[],
  io: CliIo,
  json: boolean,
): Promise<number> {
  const unknown = names.filter((name) => !specs.some((spec) => spec.name === name));
  if (unknown.length > 0)
    throw new UsageError(
      `no image named ${unknown.join(', ')} is declared`,
      `declared: ${specs.map((spec) => spec.name).join(', ') || 'none'}`,
    );
  const chosen = names.length === 0 ? specs : specs.filter((spec) => names.includes(spec.name));
  if (chosen.length === 0) {
    io.stderr.write('no images declared (defineImage() in the agents module)\n');
    return EXIT_FAILURE;
  }
  const results: Array<Record<string, unknown>> = [];
  let failed = false;
  for (const spec of chosen) {
    const display = json ? undefined : buildDisplay(io.stderr, spec.name, isTty(io.stderr));
    try {
      const outcome = await cache.build(spec, { onProgress: (p) => display?.progress(p) });
      display?.stop();
      results.push({
        name: spec.name,
        ok: true,
        cached: outcome.cached,
        seconds: outcome.seconds,
        ...outcome.image,
      });
      if (!json)
        io.stdout.write(
          outcome.cached
            ? `${spec.name} ${outcome.image.hash.slice(0, 12)} already built (cache hit in ${(outcome.seconds * 1000).toFixed(1)} ms)\n`
            : `${spec.name} ${outcome.image.hash.slice(0, 12)} built in ${outcome.seconds.toFixed(1)} s (${mib(outcome.image.sizeBytes)})\n`,
        );
    } catch (error) {
      display?.stop();
      if (!isKeelError(error)) throw error;
      failed = true;
      results.push({ name: spec.name, ok: false, code: error.code, message: error.message });
      if (!json) io.stderr.write(`${spec.name}: ${error.code}: ${error.message}\n`);
    }
  }
  if (json) printJson(io, results);
  return failed ? EXIT_FAILURE : EXIT_OK;
}

function list(cache: ImageCache, specs: ImageSpec[], io: CliIo, json: boolean): number {
  const built = cache.list();
  const pending = specs.filter((spec) => !built.some((image) => image.hash === cache.hashOf(spec)));
  const rows = [
    ...built.map((image) => ({ ...image, built: true })),
    ...pending.map((spec) => ({ names: [spec.name], hash: cache.hashOf(spec), built: false })),
  ];
  if (json) {
    printJson(io, rows);
    return EXIT_OK;
  }
  if (rows.length === 0) {
    io.stdout.write(`no images in ${cache.dir}\n`);
    return EXIT_OK;
  }
  io.stdout.write(`${'NAME'.padEnd(20)} ${'HASH'.padEnd(12)} ${'SIZE'.padStart(9)}  BUILT\n`);
  for (const image of built)
    io.stdout.write(
      `${image.names.join(',').padEnd(20)} ${image.hash.slice(0, 12)} ${mib(image.sizeBytes).padStart(9)}  ${image.builtAt} (${image.buildSeconds} s)\n`,
    );
  for (const spec of pending)
    io.stdout.write(
      `${spec.name.padEnd(20)} ${cache.hashOf(spec).slice(0, 12)} ${'-'.padStart(9)}  not built\n`,
    );
  return EXIT_OK;
}

async function remove(
  cache: ImageCache,
  refs: string[],
  io: CliIo,
  json: boolean,
): Promise<number> {
  if (refs.length === 0)
    throw new UsageError(
      'name the images to remove',
      'keel images rm <name|hash>... (keel images list shows them)',
    );
  const removed: BuiltImage[] = [];
  const missing: string[] = [];
  for (const ref of refs) {
    const found = cache.find(ref);
    if (found.length === 0) missing.push(ref);
    for (const image of found) if (await cache.remove(image.hash)) removed.push(image);
  }
  if (json)
    printJson(io, {
      removed: removed.map((image) => ({ names: image.names, hash: image.hash })),
      missing,
    });
  else {
    for (const image of removed)
      io.stdout.write(`removed ${image.names.join(',')} ${image.hash.slice(0, 12)}\n`);
    for (const ref of missing) io.stderr.write(`no built image ${ref}\n`);
  }
  return missing.length > 0 ? EXIT_FAILURE : EXIT_OK;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
