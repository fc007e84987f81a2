// The pools file (JSON, named by KEEL_POOLS_FILE): per effect pool its concurrency limit, queue
// bound and per-tenant caps. Validated with zod; an unknown or misspelt field fails with its path.
// It only parses: applying a configuration is the pool registry's job, noticing a changed file is
// pool-config-watch.ts's.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { KeelError } from '../domain/keel-error.ts';
import { POOL_NAME_PATTERN } from '../sdk/define.ts';

/** Largest limit or per-tenant cap a pool may be given. */
export const POOL_LIMIT_MAX = 1_000_000;
/** Largest wait-queue bound a pool may be given. */
export const POOL_QUEUE_MAX = 10_000_000;

/** `inline`, `model:<model>`, `sandbox:<profile>`, or a tool-declared name such as `browser`. */
export const POOL_NAME = POOL_NAME_PATTERN;

const limit = z.number().int().min(1).max(POOL_LIMIT_MAX);

const PoolSettings = z.strictObject({
  limit: limit.optional(),
  maxQueued: z.number().int().min(0).max(POOL_QUEUE_MAX).optional(),
  /** Most slots one tenant may hold at once: `default` for every tenant, or by tenant id. */
  tenantCaps: z.record(z.string().min(1).max(128), limit).optional(),
  /**
   * Where the limit and caps hold when processes share a database: `cluster` (over every process;
   * default for model and declared pools) or `process` (each process alone; default for `inline`
   * and `sandbox:*`, which guard the process's own CPU and sandboxes).
   */
  scope: z.enum(['cluster', 'process']).optional(),
});

const PoolsFile = z.strictObject({
  pools: z.record(
    z
      .string()
      .regex(
        POOL_NAME,
        'must be a pool name: inline, model:<model>, sandbox:<profile> or a declared name',
      ),
    PoolSettings,
  ),
});

export type PoolSettings = z.infer<typeof PoolSettings>;
export type PoolsConfig = z.infer<typeof PoolsFile>;

export const EMPTY_POOLS_CONFIG: PoolsConfig = Object.freeze({ pools: {} });

/**
 * Validates a parsed pools file; throws `pools_config_invalid` naming every bad path.
 * @example
 * parsePoolsConfig({ pools: { 'model:gpt': { limit: 8, tenantCaps: { default: 2 } } } }, 'pools.json');
 */
export function parsePoolsConfig(raw: unknown, source: string): PoolsConfig {
  const parsed = PoolsFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => `${i.path.join('.') || '(root)'}: ${i.message}`,
    );
    throw new KeelError(
      'pools_config_invalid',
      `${source} is invalid:\n  ${problems.join('\n  ')}`,
    );
  }
  return parsed.data;
}

export function loadPoolsFile(path: string): PoolsConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new KeelError(
      'pools_config_invalid',
      `cannot read the pools file ${path}: ${(error as Error).message}`,
    );
  }
  return parsePoolsConfig(raw, `the pools file ${path}`);
}
