// A sandbox profile: which tier, which limits, which network, which lifecycle policy, how many warm
// sandboxes. Tools and agents name a profile; everything is validated with zod when the profile is
// defined, not mid-run.
import { DELEGATED_SCOPES } from '../domain/delegation.ts';
import { z } from 'zod';
import { SecretHeaderSchema, SecretRef } from '../domain/secrets.ts';
import { ImageSpecSchema } from './images/image-spec.ts';
import { LimitsSchema } from './limits.ts';
import { POLICIES } from './lifecycle-policy.ts';
import { SECRET_FILES_MAX, SecretFilePath } from './secret-files.ts';
import { TIERS } from './tiers.ts';

export const DEFAULT_MEMORY_PRICE_PER_GIB_SECOND = 0.000_003_7; // ≈ $0.0133 per GiB-hour, a typical cloud memory price
export const DEFAULT_TRANSITION_PRICE_PER_SECOND = 0.000_05; // a worker-second spent pausing or rebuilding
export const DEFAULT_EXPECTED_IDLE_SECONDS = 5;
/**
 * Largest arguments (JSON bytes) the profile's built-in tools accept per call, unless the profile
 * says `argumentsMaxBytes`; write_file also fits a file of `limits.fileBytes`.
 */
export const DEFAULT_SANDBOX_ARGUMENTS_MAX_BYTES = 4 * 1024 * 1024;

const SecretEnvSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/), SecretRef);

const EgressRuleSchema = z.object({
  host: z
    .string()
    .regex(/^(\*\.)?[A-Za-z0-9.:-]{1,253}$/, 'a host name, *.suffix or an IP address'),
  port: z.number().int().min(1).max(65535),
  inject: SecretHeaderSchema.optional(),
});

/** Most read-only mounts one profile declares. */
export const READ_ONLY_MOUNTS_MAX = 16;
const AbsolutePath = z
  .string()
  .max(4096)
  .refine((path) => path.startsWith('/') && !path.includes('\0'), {
    message: 'an absolute path (no NUL)',
  })
  .refine((path) => !path.split('/').some((part) => part === '.' || part === '..'), {
    message: 'no "." or ".." segments',
  });
const ReadOnlyMountSchema = z.strictObject({
  source: AbsolutePath,
  target: AbsolutePath.refine(
    (path) => path !== '/' && path !== '/workspace' && !path.startsWith('/workspace/'),
    { message: 'not /, /workspace or under it' },
  ),
});

const ProfileFields = z.object({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
  tier: z.enum(TIERS).default('namespace'),
  policy: z.enum(POLICIES).default('one-shot'),
  /**
   * The environment image: `host` (the host's /usr and a few /etc files, the default) or an image
   * from defineImage(), built once and shared read-only (namespace and gvisor tiers only).
   */
  image: z.union([z.literal('host'), ImageSpecSchema]).default('host'),
  limits: LimitsSchema.default(LimitsSchema.parse({})),
  /**
   * Destinations the sandbox may reach through Keel's egress proxy (none: no network at all), each
   * a host (name, `*.suffix` or IP literal) and port; optionally a credential the proxy adds to
   * plain-HTTP requests there (egress/allowlist.ts).
   */
  network: z.object({ allow: z.array(EgressRuleSchema).default([]) }).default({ allow: [] }),
  /**
   * Secrets of the tenant handed to every `exec`, for credentials the proxy cannot add (HTTPS
   * through CONNECT): `env` as variables (`{ API_TOKEN: 'secret:NAME' }`), `files` as files
   * (`{ '/run/secrets/token': 'secret:NAME' }`, mode 0400, owned by the sandbox uid, on the
   * sandbox's private tmpfs /run: never in the workspace or its snapshots; secret-files.ts). Never
   * on a command line. Namespace and gVisor tiers for files.
   */
  secrets: z
    .object({
      env: SecretEnvSchema.default({}),
      files: z
        .record(SecretFilePath, SecretRef)
        .refine((files) => Object.keys(files).length <= SECRET_FILES_MAX, {
          message: `at most ${SECRET_FILES_MAX} files`,
        })
        .default({}),
    })
    .default({ env: {}, files: {} }),
  /**
   * Per-run delegated token for `exec`'s programs: with scopes here (`runs:read-self`,
   * `runs:child`, `artifacts`), each `exec` sets KEEL_RUN_TOKEN (a short-lived token bound to the
   * run) and KEEL_API_URL, never on a command line; the program reaches the API only if `network`
   * allows its host. Empty (default): no token.
   */
  delegate: z.array(z.enum(DELEGATED_SCOPES)).max(DELEGATED_SCOPES.length).default([]),
  /**
   * The effect class of the built-in `exec` on this profile when a call declares none: what a
   * crash mid-command may do. `side-effect` (default) parks the run as `unknown` for an operator;
   * `read` and `idempotent` run the command again.
   */
  execEffect: z.enum(['read', 'idempotent', 'side-effect']).default('side-effect'),
  /**
   * Largest arguments (bytes of their JSON) one call of the profile's built-in tools may take;
   * larger calls are refused with `tool_arguments_too_large` before they are journaled. Default:
   * DEFAULT_SANDBOX_ARGUMENTS_MAX_BYTES, and for write_file enough for a file of `limits.fileBytes`.
   */
  argumentsMaxBytes: z.number().int().min(1024).optional(),
  /**
   * External host directories or files declared read-only: each `source` (an absolute host path)
   * is visible at `target` (an absolute path in the sandbox, not under /workspace) and cannot be
   * written there. Namespace tier only. The image itself is always the read-only zone.
   */
  readOnlyMounts: z.array(ReadOnlyMountSchema).max(READ_ONLY_MOUNTS_MAX).default([]),
  /**
   * Mount the run tree's shared space (ctx.shared) read-only at /shared: before each call the
   * current version of every shared file is copied into a host directory of the environment (only
   * what changed since the last call), never into the workspace or its snapshots. Programs read
   * it; writes go through ctx.shared.write only. Namespace and gVisor tiers (gVisor: host image).
   */
  sharedSpace: z.boolean().default(false),
  /** Ready sandboxes kept per profile (one-shot policy only). */
  warm: z.number().int().min(0).max(1000).default(0),
  /**
   * Never reuse a sandbox. Kept for compatibility: no warm-pool lease is reused any more (each
   * used sandbox is destroyed and replaced), so this changes nothing.
   */
  singleUse: z.boolean().default(false),
  /**
   * `rebuild` policy: rebuild just before the next call is expected (measured idle gaps), not when
   * it arrives.
   */
  prewarm: z.boolean().default(false),
  auto: z
    .object({
      memoryPricePerGiBSecond: z.number().min(0).default(DEFAULT_MEMORY_PRICE_PER_GIB_SECOND),
      transitionPricePerSecond: z.number().min(0).default(DEFAULT_TRANSITION_PRICE_PER_SECOND),
      /** Used until idle gaps of this profile have been measured. */
      expectedIdleSeconds: z.number().min(0).default(DEFAULT_EXPECTED_IDLE_SECONDS),
      /** Fixed transition costs (same currency as the memory price) instead of measured ones. */
      pauseCost: z.number().min(0).optional(),
      rebuildCost: z.number().min(0).optional(),
    })
    .default({
      memoryPricePerGiBSecond: DEFAULT_MEMORY_PRICE_PER_GIB_SECOND,
      transitionPricePerSecond: DEFAULT_TRANSITION_PRICE_PER_SECOND,
      expectedIdleSeconds: DEFAULT_EXPECTED_IDLE_SECONDS,
    }),
});

const ProfileSchema = ProfileFields.refine(
  (profile) => profile.image === 'host' || profile.tier !== 'process',
  {
    message:
      'an environment image needs tier namespace or gvisor (the process tier sees the host’s files)',
    path: ['image'],
  },
)
  .refine((profile) => profile.readOnlyMounts.length === 0 || profile.tier === 'namespace', {
    message: 'read-only mounts need tier namespace',
    path: ['readOnlyMounts'],
  })
  .refine((profile) => !profile.sharedSpace || profile.tier !== 'process', {
    message:
      'the shared space mount needs tier namespace or gvisor (the process tier has no mounts)',
    path: ['sharedSpace'],
  })
  // gVisor cannot make the /shared mount point in an image's read-only root (bwrap binds the
  // image's entries one by one instead, leaving room for it).
  .refine(
    (profile) => !profile.sharedSpace || profile.tier !== 'gvisor' || profile.image === 'host',
    {
      message: 'the shared space mount on tier gvisor needs the host image (or use tier namespace)',
      path: ['sharedSpace'],
    },
  )
  .refine(
    (profile) => Object.keys(profile.secrets.files).length === 0 || profile.tier !== 'process',
    {
      message: 'secret files need tier namespace or gvisor (the process tier has no private /run)',
      path: ['secrets', 'files'],
    },
  );

export type SandboxProfile = z.infer<typeof ProfileSchema>;

/**
 * What confines a long-lived service such as a stdio MCP server: a profile's image, limits,
 * network allowlist and secret variables (its tier is always `namespace`, the one tier that runs
 * services; it has no lifecycle policy or warm pool: it lives as long as its session).
 */
export const ServiceSandboxSchema = z.strictObject({
  ...ProfileFields.pick({ image: true, limits: true, network: true }).shape,
  // Variables only: a service has no per-call place to put secret files.
  secrets: z.strictObject({ env: SecretEnvSchema.default({}) }).default({ env: {} }),
});
export type ServiceSandbox = z.infer<typeof ServiceSandboxSchema>;
export type SandboxProfileInput = z.input<typeof ProfileSchema>;

/**
 * Declares a sandbox profile.
 * @example
 * const shell = defineSandboxProfile({ name: 'shell', tier: 'namespace', policy: 'rebuild', limits: { memoryBytes: 512 * 2 ** 20 } });
 */
export function defineSandboxProfile(input: SandboxProfileInput): SandboxProfile {
  return Object.freeze(ProfileSchema.parse(input));
}
