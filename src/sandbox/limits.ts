// Sandbox limits and the typed reasons an execution ends for. Every limit is a named number with
// its unit; a profile overrides any of them. The defaults are what a model-written shell command
// gets when nobody says more.
import { z } from 'zod';

export const LIMIT_REASONS = [
  'oom',
  'timeout',
  'output_limit',
  'disk_limit',
  'pids_limit',
] as const;
/** Why an execution was ended by Keel rather than by itself. */
export type LimitReason = (typeof LIMIT_REASONS)[number];

export const DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024;
export const DEFAULT_PIDS_MAX = 128;
export const DEFAULT_CPUS = 1;
export const DEFAULT_DEADLINE_MS = 30_000;
/** Creating an environment and restoring its workspace (an image build before it not counted). */
export const DEFAULT_STARTUP_MS = 60_000;
export const DEFAULT_DISK_BYTES = 64 * 1024 * 1024;
export const DEFAULT_FILE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_OUTPUT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_OPEN_FILES_MAX = 256;
/**
 * Entries (files, directories, links) a workspace may hold when snapshotted: past it a call fails
 * with `workspace_limit`, so a sandbox cannot make every snapshot walk millions of empty files.
 */
export const DEFAULT_MAX_FILES = 50_000;

export const LimitsSchema = z.object({
  memoryBytes: z
    .number()
    .int()
    .min(16 * 1024 * 1024)
    .default(DEFAULT_MEMORY_BYTES),
  pidsMax: z.number().int().min(4).max(100_000).default(DEFAULT_PIDS_MAX),
  cpus: z.number().positive().max(256).default(DEFAULT_CPUS),
  deadlineMs: z
    .number()
    .int()
    .min(1)
    .max(24 * 3600 * 1000)
    .default(DEFAULT_DEADLINE_MS),
  /**
   * Start-up deadline: creating the environment and restoring its workspace; past it the call
   * fails with `sandbox_start_timeout` and the late environment is torn down.
   */
  startupMs: z
    .number()
    .int()
    .min(100)
    .max(3600 * 1000)
    .default(DEFAULT_STARTUP_MS),
  /**
   * Idle deadline: a kept (resident, auto) or paused environment unused this long is reclaimed;
   * its workspace lives on in the run's manifest and the next call rebuilds it (processes left
   * running in it end). Unset: kept until the run ends.
   */
  idleMs: z
    .number()
    .int()
    .min(1000)
    .max(7 * 24 * 3600 * 1000)
    .optional(),
  /** Whole workspace (a size-capped tmpfs when Keel runs as root). */
  diskBytes: z
    .number()
    .int()
    .min(1024 * 1024)
    .default(DEFAULT_DISK_BYTES),
  /** Any single file the sandboxed program writes (RLIMIT_FSIZE). */
  fileBytes: z.number().int().min(1024).default(DEFAULT_FILE_BYTES),
  /** stdout + stderr kept per execution; past it the execution is ended and marked truncated. */
  outputMaxBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(DEFAULT_OUTPUT_MAX_BYTES),
  openFilesMax: z.number().int().min(16).max(65_536).default(DEFAULT_OPEN_FILES_MAX),
  /** Workspace entries (files, directories, links) a snapshot accepts. */
  maxFiles: z.number().int().min(1).max(10_000_000).default(DEFAULT_MAX_FILES),
});
export type Limits = z.infer<typeof LimitsSchema>;
export type LimitsInput = z.input<typeof LimitsSchema>;

export const resolveLimits = (input: LimitsInput = {}): Limits => LimitsSchema.parse(input);
