// An environment image as a declarative spec: a Debian suite, packages, files and setup commands,
// built into a read-only root filesystem (image-cache.ts). The spec is validated with zod when it
// is defined, and its identity is the sha256 of its normalised form plus the mirror it is built
// from: the same spec always maps to the same cached image, whatever its name or key order. An
// image spec is operator configuration (setup commands run as root while building), never model
// input.
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** Bumped whenever the way a spec becomes a root filesystem changes: every image is rebuilt. */
export const IMAGE_RECIPE_VERSION = 1;
/** The Debian suite of an image that names none. */
export const DEFAULT_IMAGE_SUITE = 'bookworm';
export const IMAGE_FILES_MAX = 64;
export const IMAGE_FILE_MAX_BYTES = 1024 * 1024;
export const IMAGE_SETUP_MAX = 32;
export const IMAGE_PACKAGES_MAX = 512;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A Debian package name, optionally pinned (`python3=3.11.2-1+b1`). */
const PACKAGE = /^[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+~:-]+)?$/;
/** Absolute, no `..` or `.` component, no whitespace or quote: it is written inside the image. */
const FILE_PATH = /^(\/[A-Za-z0-9_+@=,-][A-Za-z0-9._+@=,-]*)+$/;

const ImageFileSchema = z.object({
  path: z
    .string()
    .regex(FILE_PATH, 'must be an absolute path of plain components')
    .refine((path) => !path.split('/').includes('..'), 'must not contain ..'),
  content: z.string().max(IMAGE_FILE_MAX_BYTES),
  /** Permission bits, e.g. 0o644 (the default) or 0o755 for a script. */
  mode: z.number().int().min(0).max(0o7777).default(0o644),
});

export const ImageSpecSchema = z.object({
  /** How profiles, `keel images` and logs name the image; not part of its identity. */
  name: z.string().regex(NAME, 'must be 1-64 letters, digits, ".", "_" or "-"'),
  suite: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/)
    .default(DEFAULT_IMAGE_SUITE),
  /**
   * mmdebstrap's package set before `packages`: `essential` (dpkg and the Essential: yes set, the
   * default and smallest), `apt` (plus apt), `minbase` (plus Priority: required).
   */
  variant: z.enum(['essential', 'apt', 'minbase']).default('essential'),
  packages: z
    .array(z.string().regex(PACKAGE, 'must be a Debian package name'))
    .max(IMAGE_PACKAGES_MAX)
    .default([]),
  /** Files written into the image after the packages, before the setup commands. */
  files: z.array(ImageFileSchema).max(IMAGE_FILES_MAX).default([]),
  /** Shell commands run in order as root inside the image (chroot) after the files; any failure fails the build. */
  setup: z
    .array(
      z
        .string()
        .min(1)
        .max(64 * 1024),
    )
    .max(IMAGE_SETUP_MAX)
    .default([]),
  /** The Debian mirror, when not the one Keel is configured with (KEEL_IMAGE_MIRROR, else the host's apt source). */
  mirror: z.string().url().optional(),
});

export type ImageSpec = z.infer<typeof ImageSpecSchema>;
export type ImageSpecInput = z.input<typeof ImageSpecSchema>;
/** What a profile's `image` holds: a spec, or `host` (the host's /usr and a few /etc files). */
export type ProfileImage = ImageSpec | 'host';

/** The Debian architecture of this host (an image is built for the host it runs on). */
export function debianArch(nodeArch: string = process.arch): string {
  const arch = (
    {
      x64: 'amd64',
      arm64: 'arm64',
      ia32: 'i386',
      arm: 'armhf',
      ppc64: 'ppc64el',
      s390x: 's390x',
    } as const
  )[nodeArch as 'x64'];
  if (arch === undefined) throw new Error(`no Debian architecture for ${nodeArch}`);
  return arch;
}

/**
 * The spec as it is hashed: everything that changes the built root filesystem, nothing that does
 * not (the name, the order packages are listed in, duplicate packages, the order of files).
 */
export function normalizeImageSpec(spec: ImageSpec, mirror: string) {
  return {
    recipe: IMAGE_RECIPE_VERSION,
    arch: debianArch(),
    mirror: (spec.mirror ?? mirror).replace(/\/+$/, ''),
    suite: spec.suite,
    variant: spec.variant,
    packages: [...new Set(spec.packages)].sort(),
    files: [...spec.files]
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((file) => ({ path: file.path, mode: file.mode, content: file.content })),
    setup: spec.setup,
  };
}

/** The image's content address: sha256 (hex) of its normalised spec as JSON. */
export function imageHash(spec: ImageSpec, mirror: string): string {
  return createHash('sha256')
    .update(JSON.stringify(normalizeImageSpec(spec, mirror)))
    .digest('hex');
}

/**
 * Every image defined in this realm so far, by name: `keel images build --agents f` finds the
 * images an agents module declares, exported or not. Keyed on the realm's symbol registry, so two
 * copies of this module (an agents module importing `keel/sandbox` from dist/ while the CLI runs
 * from src/) share one list.
 */
const DEFINED_IMAGES_KEY = Symbol.for('keel.definedImages');
const realm = globalThis as { [DEFINED_IMAGES_KEY]?: Map<string, ImageSpec> };
realm[DEFINED_IMAGES_KEY] ??= new Map<string, ImageSpec>();
const definedImages = realm[DEFINED_IMAGES_KEY];

export function imagesDefined(): ReadonlyMap<string, ImageSpec> {
  return definedImages;
}

/**
 * Declares an environment image: a Debian suite, packages, files and setup commands. A profile
 * names it with `image`; it is built (once, cached by content) the first time a sandbox needs it,
 * or ahead of time with `keel images build`.
 * @example
 * export const python = defineImage({ name: 'python', suite: 'bookworm', packages: ['python3', 'python3-pip', 'python3-venv'] });
 * const tools = sandboxTools({ profile: defineSandboxProfile({ name: 'py', tier: 'namespace', image: python }) });
 */
export function defineImage(input: ImageSpecInput): ImageSpec {
  const spec = Object.freeze(ImageSpecSchema.parse(input));
  const seen = definedImages.get(spec.name);
  if (seen !== undefined && JSON.stringify(seen) !== JSON.stringify(spec))
    throw new Error(`two different images are named ${spec.name}: give each image its own name`);
  definedImages.set(spec.name, spec);
  return spec;
}
