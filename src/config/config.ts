// Keel's configuration: the one module that reads environment variables. Defaults live in one typed
// object, validated with zod at start; a bad value fails loudly with the variable's name and a
// fix-it hint.
import { z } from 'zod';
import { GROUP_COMMIT_MAX_BATCH_LIMIT } from '../domain/group-commit.ts';
import { KeelError } from '../domain/keel-error.ts';
import {
  AGENT_BLOCKED_MS_DEFAULT,
  TOOL_TIMEOUT_MS_DEFAULT,
  CANCEL_GRACE_MS_DEFAULT,
  DATA_DIR_DEFAULT,
  GROUP_COMMIT_MAX_BATCH_DEFAULT,
  GROUP_COMMIT_MAX_WAIT_MS_DEFAULT,
  HOST_DEFAULT,
  IMAGE_BUILD_WAIT_MS_DEFAULT,
  NODE_STALE_MS_DEFAULT,
  PLACEMENT_DEADLINE_MS_DEFAULT,
  PLACEMENT_K_DEFAULT,
  PLACEMENT_REFRESH_MS_DEFAULT,
  ISOLATE_MEMORY_MB_DEFAULT,
  LEASE_TTL_MS_DEFAULT,
  POOL_GRANT_RETRY_MS_DEFAULT,
  POOL_LEASE_MS_DEFAULT,
  MAX_ACTIVE_RUNS_DEFAULT,
  PAYLOAD_MAX_BYTES_DEFAULT,
  PAYLOAD_INLINE_MAX_BYTES_DEFAULT,
  PAYLOAD_STORED_MAX_BYTES_DEFAULT,
  RUN_PAYLOAD_MAX_BYTES_DEFAULT,
  BATCH_RUNS_MAX_DEFAULT,
  STEP_PREVIEW_MAX_BYTES_DEFAULT,
  ARCHIVE_CHUNK_POSITIONS_DEFAULT,
  ARCHIVE_INTERVAL_MS_DEFAULT,
  AUDIT_RETENTION_DAYS_DEFAULT,
  DELEGATION_AUDIENCE_DEFAULT,
  DELEGATION_TTL_MS_DEFAULT,
  POISON_LEASE_LOSSES_DEFAULT,
  PORT_DEFAULT,
  PREEMPT_AFTER_MS_DEFAULT,
  SCHEDULER_LEASE_MS_DEFAULT,
  SCHEDULER_TICK_MS_DEFAULT,
  URL_DEFAULT,
  BROWSER_PATH_DEFAULT,
  BROWSER_MAX_SESSIONS_DEFAULT,
  BROWSER_IDLE_MS_DEFAULT,
} from './defaults.ts';

/**
 * A whole number from an environment string; blank or non-decimal text is refused rather than read
 * as 0.
 */
const integer = (min: number, max: number) =>
  z
    .union([
      z.number(),
      z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number),
    ])
    .pipe(z.number().int().min(min).max(max));

/** A positive decimal (dollars) from an environment string; blank or other text is refused. */
const positiveDecimal = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^\d+(\.\d+)?$/, 'must be a decimal number like 250 or 12.5')
      .transform(Number),
  ])
  .pipe(z.number().positive().max(1e12));

export const ConfigSchema = z.object({
  apiKey: z.string().min(8, 'KEEL_API_KEY must be at least 8 characters').optional(),
  adminKey: z.string().min(16, 'KEEL_ADMIN_KEY must be at least 16 characters').optional(),
  /** Key-encryption key of the tenants' secrets (32 bytes, base64 or hex); src/secrets/. */
  secretsKey: z.string().min(1).optional(),
  /** Signing key of per-run delegated tokens (32+ bytes, base64 or hex); unset: kept in the store. */
  delegationKey: z.string().min(1).optional(),
  /** How long a tool call's delegated token is valid, in ms (it also ends with its run). */
  delegationTtlMs: integer(1_000, 24 * 60 * 60 * 1000).default(DELEGATION_TTL_MS_DEFAULT),
  /** The audience delegated tokens are minted for and checked against. */
  delegationAudience: z.string().min(1).max(200).default(DELEGATION_AUDIENCE_DEFAULT),
  /** The API URL tools call back with their token; unset: this process's own API address. */
  delegationApiUrl: z.string().url().optional(),
  dataDir: z.string().min(1).default(DATA_DIR_DEFAULT),
  host: z.string().min(1).default(HOST_DEFAULT),
  port: integer(0, 65535).default(PORT_DEFAULT),
  durability: z.enum(['memory', 'os', 'fsync', 'replicated']).default('fsync'),
  groupCommitMaxBatch: integer(1, GROUP_COMMIT_MAX_BATCH_LIMIT).default(
    GROUP_COMMIT_MAX_BATCH_DEFAULT,
  ),
  groupCommitMaxWaitMs: integer(0, 10_000).default(GROUP_COMMIT_MAX_WAIT_MS_DEFAULT),
  leaseTtlMs: integer(500, 3_600_000).default(LEASE_TTL_MS_DEFAULT),
  poolLeaseMs: integer(500, 3_600_000).default(POOL_LEASE_MS_DEFAULT),
  poolGrantRetryMs: integer(5, 60_000).default(POOL_GRANT_RETRY_MS_DEFAULT),
  maxActiveRuns: integer(1, 1_000_000).default(MAX_ACTIVE_RUNS_DEFAULT),
  poisonLeaseLosses: integer(1, 1_000).default(POISON_LEASE_LOSSES_DEFAULT),
  /**
   * Preemption: a claimable interactive run waiting longer than this (ms) while this process's run
   * slots are all held makes it preempt batch runs at their next effect boundary. `off` or 0 turns
   * preemption off.
   */
  preemptAfterMs: z
    .union([z.literal('off').transform(() => 0), integer(0, 3_600_000)])
    .default(PREEMPT_AFTER_MS_DEFAULT),
  /**
   * Where agent code runs: `isolate` (worker threads under a watchdog) or `thread` (the main
   * thread: no watchdog).
   */
  agentIsolation: z.enum(['isolate', 'thread']).default('isolate'),
  /** Isolates in the pool; default: the CPUs, 1 to 4. */
  agentIsolates: integer(1, 64).optional(),
  agentBlockedMs: integer(50, 3_600_000).default(AGENT_BLOCKED_MS_DEFAULT),
  /** The timeout of a tool call whose tool declares no `timeoutMs`; `off` or 0: none. */
  toolTimeoutMs: z
    .union([z.literal('off').transform(() => 0), integer(0, 86_400_000)])
    .default(TOOL_TIMEOUT_MS_DEFAULT),
  /**
   * On a cancel, how long tool calls in flight have after the graceful signal (SIGTERM to a
   * sandboxed program) before they are aborted; 0: at once. An agent's `cancelGraceMs` replaces it.
   */
  cancelGraceMs: integer(0, 3_600_000).default(CANCEL_GRACE_MS_DEFAULT),
  agentMemoryMb: integer(16, 65_536).default(ISOLATE_MEMORY_MB_DEFAULT),
  payloadMaxBytes: integer(1024, 64 * 1024 * 1024).default(PAYLOAD_MAX_BYTES_DEFAULT),
  payloadInlineMaxBytes: integer(1024, 16 * 1024 * 1024).default(PAYLOAD_INLINE_MAX_BYTES_DEFAULT),
  payloadStoredMaxBytes: integer(1024, 1024 * 1024 * 1024).default(
    PAYLOAD_STORED_MAX_BYTES_DEFAULT,
  ),
  runPayloadMaxBytes: integer(1024, 1024 * 1024 * 1024 * 1024).default(
    RUN_PAYLOAD_MAX_BYTES_DEFAULT,
  ),
  stepPreviewMaxBytes: integer(256, 16 * 1024 * 1024).default(STEP_PREVIEW_MAX_BYTES_DEFAULT),
  batchRunsMax: integer(1, 10_000).default(BATCH_RUNS_MAX_DEFAULT),
  /** Model tokens all tenants together may use per UTC day (src/models/platform-caps.ts); unset: none. */
  platformTokenCapPerDay: integer(1, Number.MAX_SAFE_INTEGER).optional(),
  /** USD all tenants together may spend on models per UTC day; unset: none. */
  platformCostCapPerDay: positiveDecimal.optional(),
  /** Days audit log entries are kept (an hourly pass deletes older ones). */
  auditRetentionDays: integer(1, 36_500).default(AUDIT_RETENTION_DAYS_DEFAULT),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string')
    .optional(),
  url: z.string().url().default(URL_DEFAULT),
  /**
   * Test-only fault injection: `point:n` SIGKILLs the process the n-th time it reaches that crash
   * point.
   */
  testCrashAt: z
    .string()
    .regex(/^[a-z.-]+(:\d+)?$/, 'must be point[:n]')
    .optional(),
  // Retention and archival (src/archive)
  /** Days an ended run's journal and events stay live before they are archived; 0: no day limit. */
  retentionDays: integer(0, 36_500).default(0),
  /** Ended runs per tenant whose journal and events stay live (the newest); 0: no count limit. */
  retentionRuns: integer(0, 100_000_000).default(0),
  archiveIntervalMs: integer(50, 86_400_000).default(ARCHIVE_INTERVAL_MS_DEFAULT),
  archiveChunkPositions: integer(1, 100_000).default(ARCHIVE_CHUNK_POSITIONS_DEFAULT),
  // Schedules (src/schedules)
  schedulerTickMs: integer(50, 60_000).default(SCHEDULER_TICK_MS_DEFAULT),
  schedulerLeaseMs: integer(1_000, 3_600_000).default(SCHEDULER_LEASE_MS_DEFAULT),
  modelsFile: z.string().min(1).optional(),
  /**
   * JSON file of effect pool limits, queue bounds and per-tenant caps; reloaded on change and on
   * SIGHUP.
   */
  poolsFile: z.string().min(1).optional(),
  /**
   * How a freed effect-pool slot picks among waiting tenants: weighted fair queuing per pool, or
   * dominant-resource fairness across the model, sandbox and browser pools.
   */
  fairnessPolicy: z.enum(['weighted', 'drf']).default('weighted'),
  /** JSON file of tenants' MCP servers, written to the store at start (docs/guides/mcp.md). */
  mcpServersFile: z.string().min(1).optional(),
  /**
   * Origins streamable-HTTP MCP servers may be reached at, comma-separated (`*`: any); default none.
   */
  mcpAllowedOrigins: z
    .string()
    .transform((v) =>
      v.trim() === '*'
        ? ('any' as const)
        : v
            .split(',')
            .map((o) => o.trim())
            .filter((o) => o !== ''),
    )
    .pipe(z.union([z.literal('any'), z.array(z.url().transform((u) => new URL(u).origin))]))
    .default([]),
  // Environment images (src/sandbox/images)
  /** Where built images are cached; default `<dataDir>/images`. */
  imagesDir: z.string().min(1).optional(),
  /** Debian mirror images are built from; default: the host's apt source. */
  imageMirror: z.string().url().optional(),
  /** How long a sandbox call waits for its image to be built; 0: never build on demand. */
  imageBuildWaitMs: integer(0, 24 * 3_600_000).default(IMAGE_BUILD_WAIT_MS_DEFAULT),
  // Browser pool (src/browser)
  /** The Chromium executable the browser pool drives. */
  browserPath: z.string().min(1).default(BROWSER_PATH_DEFAULT),
  /** Browser sessions at once in this process: the `browser` pool's limit unless the pools file names one. */
  browserMaxSessions: integer(1, 10_000).default(BROWSER_MAX_SESSIONS_DEFAULT),
  /** A browser session unused this long is reclaimed, in ms. */
  browserIdleMs: integer(1_000, 24 * 3_600_000).default(BROWSER_IDLE_MS_DEFAULT),
  // Sandbox nodes (src/nodes; issue 24)
  /** Where built-in sandbox tools run: this process's sandboxes, or the cluster's `keel node`s. */
  sandboxPlacement: z.enum(['local', 'nodes']).default('local'),
  /** Nodes sampled per placement (power-of-k choices). */
  placementK: integer(1, 16).default(PLACEMENT_K_DEFAULT),
  /** How often a placer reads the nodes' load again, in ms. */
  placementRefreshMs: integer(50, 60_000).default(PLACEMENT_REFRESH_MS_DEFAULT),
  /** How long a call waits for a node to accept it before `nodes_unavailable`, in ms. */
  placementDeadlineMs: integer(0, 3_600_000).default(PLACEMENT_DEADLINE_MS_DEFAULT),
  /** A node whose last heartbeat is older than this gets no calls, in ms. */
  nodeStaleMs: integer(1_000, 3_600_000).default(NODE_STALE_MS_DEFAULT),
  /** Calls a `keel node` runs at once; default: its cores. */
  nodeSlots: integer(1, 100_000).optional(),
  /** `keel node`'s token (instead of --token, which other users can read in the process list). */
  nodeToken: z.string().min(1).optional(),
  /** Prompts, tool arguments and results in spans; redacted unless turned on. */
  telemetryIncludeContent: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * A second listener serving only GET /metrics, without auth (bind it where only Prometheus can
   * reach it).
   */
  metricsPort: integer(0, 65535).optional(),
  metricsHost: z.string().min(1).default(HOST_DEFAULT),
  /**
   * A listener of its own for the admin surface (/v1/admin/*, GET /metrics): with it, the main
   * listener answers 404 for those routes; this one serves everything (bind it where only operators
   * reach it).
   */
  adminPort: integer(0, 65535).optional(),
  /** Requests a minute an API key without its own limit may make through each API process. */
  keyRequestsPerMinute: integer(1, 1_000_000).optional(),
  adminHost: z.string().min(1).default(HOST_DEFAULT),
  /**
   * Origins (scheme://host[:port], comma-separated) whose pages may call the API from a browser;
   * unset: CORS off.
   */
  corsOrigins: z
    .string()
    .default('')
    .transform((text) =>
      text
        .split(',')
        .map((origin) => origin.trim())
        .filter((origin) => origin !== ''),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^https?:\/\/[^/\s]+$/,
            'each origin is scheme://host[:port], without a path (e.g. https://app.example.com)',
          ),
      ),
    ),
  /**
   * Standard OpenTelemetry variables Keel reads to decide whether to trace (the SDK reads the rest
   * itself).
   */
  otelTracesExporter: z.enum(['none', 'otlp', 'console']).optional(),
  otelSdkDisabled: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  otelServiceName: z.string().min(1).default('keel'),
  otelExporterOtlpEndpoint: z.string().url().optional(),
  otelExporterOtlpTracesEndpoint: z.string().url().optional(),
});
export type KeelConfig = z.infer<typeof ConfigSchema>;

/** Environment variable → config key. The only place Keel reads its environment. */
export const ENV_VARS = {
  KEEL_API_KEY: 'apiKey',
  KEEL_ADMIN_KEY: 'adminKey',
  KEEL_SECRETS_KEY: 'secretsKey',
  KEEL_DELEGATION_KEY: 'delegationKey',
  KEEL_DELEGATION_TTL_MS: 'delegationTtlMs',
  KEEL_DELEGATION_AUDIENCE: 'delegationAudience',
  KEEL_DELEGATION_API_URL: 'delegationApiUrl',
  KEEL_DATA_DIR: 'dataDir',
  KEEL_HOST: 'host',
  KEEL_PORT: 'port',
  KEEL_DURABILITY: 'durability',
  KEEL_GROUP_COMMIT_MAX_BATCH: 'groupCommitMaxBatch',
  KEEL_GROUP_COMMIT_MAX_WAIT_MS: 'groupCommitMaxWaitMs',
  KEEL_LEASE_TTL_MS: 'leaseTtlMs',
  KEEL_POOL_LEASE_MS: 'poolLeaseMs',
  KEEL_POOL_GRANT_RETRY_MS: 'poolGrantRetryMs',
  KEEL_MAX_ACTIVE_RUNS: 'maxActiveRuns',
  KEEL_POISON_LEASE_LOSSES: 'poisonLeaseLosses',
  KEEL_PREEMPT_AFTER_MS: 'preemptAfterMs',
  KEEL_AGENT_ISOLATION: 'agentIsolation',
  KEEL_AGENT_ISOLATES: 'agentIsolates',
  KEEL_AGENT_BLOCKED_MS: 'agentBlockedMs',
  KEEL_TOOL_TIMEOUT_MS: 'toolTimeoutMs',
  KEEL_CANCEL_GRACE_MS: 'cancelGraceMs',
  KEEL_AGENT_MEMORY_MB: 'agentMemoryMb',
  KEEL_PAYLOAD_MAX_BYTES: 'payloadMaxBytes',
  KEEL_PAYLOAD_INLINE_MAX_BYTES: 'payloadInlineMaxBytes',
  KEEL_PAYLOAD_STORED_MAX_BYTES: 'payloadStoredMaxBytes',
  KEEL_RUN_PAYLOAD_MAX_BYTES: 'runPayloadMaxBytes',
  KEEL_STEP_PREVIEW_MAX_BYTES: 'stepPreviewMaxBytes',
  KEEL_BATCH_RUNS_MAX: 'batchRunsMax',
  KEEL_PLATFORM_TOKEN_CAP_PER_DAY: 'platformTokenCapPerDay',
  KEEL_PLATFORM_COST_CAP_PER_DAY: 'platformCostCapPerDay',
  KEEL_AUDIT_RETENTION_DAYS: 'auditRetentionDays',
  KEEL_LOG_LEVEL: 'logLevel',
  KEEL_DATABASE_URL: 'databaseUrl',
  KEEL_URL: 'url',
  KEEL_TEST_CRASH_AT: 'testCrashAt',
  KEEL_RETENTION_DAYS: 'retentionDays',
  KEEL_RETENTION_RUNS: 'retentionRuns',
  KEEL_ARCHIVE_INTERVAL_MS: 'archiveIntervalMs',
  KEEL_ARCHIVE_CHUNK_POSITIONS: 'archiveChunkPositions',
  KEEL_SCHEDULER_TICK_MS: 'schedulerTickMs',
  KEEL_SCHEDULER_LEASE_MS: 'schedulerLeaseMs',
  KEEL_MODELS_FILE: 'modelsFile',
  KEEL_POOLS_FILE: 'poolsFile',
  KEEL_FAIRNESS_POLICY: 'fairnessPolicy',
  KEEL_MCP_SERVERS_FILE: 'mcpServersFile',
  KEEL_MCP_ALLOWED_ORIGINS: 'mcpAllowedOrigins',
  KEEL_IMAGES_DIR: 'imagesDir',
  KEEL_IMAGE_MIRROR: 'imageMirror',
  KEEL_IMAGE_BUILD_WAIT_MS: 'imageBuildWaitMs',
  KEEL_BROWSER_PATH: 'browserPath',
  KEEL_BROWSER_MAX_SESSIONS: 'browserMaxSessions',
  KEEL_BROWSER_IDLE_MS: 'browserIdleMs',
  KEEL_SANDBOX_PLACEMENT: 'sandboxPlacement',
  KEEL_PLACEMENT_K: 'placementK',
  KEEL_PLACEMENT_REFRESH_MS: 'placementRefreshMs',
  KEEL_PLACEMENT_DEADLINE_MS: 'placementDeadlineMs',
  KEEL_NODE_STALE_MS: 'nodeStaleMs',
  KEEL_NODE_SLOTS: 'nodeSlots',
  KEEL_NODE_TOKEN: 'nodeToken',
  KEEL_TELEMETRY_INCLUDE_CONTENT: 'telemetryIncludeContent',
  KEEL_METRICS_PORT: 'metricsPort',
  KEEL_METRICS_HOST: 'metricsHost',
  KEEL_ADMIN_PORT: 'adminPort',
  KEEL_ADMIN_HOST: 'adminHost',
  KEEL_CORS_ORIGINS: 'corsOrigins',
  KEEL_KEY_REQUESTS_PER_MINUTE: 'keyRequestsPerMinute',
  OTEL_TRACES_EXPORTER: 'otelTracesExporter',
  OTEL_SDK_DISABLED: 'otelSdkDisabled',
  OTEL_SERVICE_NAME: 'otelServiceName',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'otelExporterOtlpEndpoint',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'otelExporterOtlpTracesEndpoint',
} as const satisfies Record<string, keyof KeelConfig>;

/**
 * What each environment variable means, one line each, for the generated reference
 * (docs/reference/configuration.md, `npm run docs`). Keyed like ENV_VARS, so a variable without a
 * description does not typecheck.
 */
export const ENV_VAR_DESCRIPTIONS = {
  KEEL_API_KEY:
    "The dev tenant's API key in `keel dev` (generated and printed when unset); with `keel server`, creates a tenant named `default` with this key.",
  KEEL_ADMIN_KEY:
    'Key for `/v1/admin/*` and `GET /metrics` on the API port; admin routes answer `404 admin_disabled` while it is unset.',
  KEEL_SECRETS_KEY:
    "Key-encryption key of the tenants' secrets (`/v1/secrets`): 32 random bytes as base64 or hex (`openssl rand -base64 32`). Without it, secrets cannot be stored or used, and a start with stored secrets is refused.",
  KEEL_DELEGATION_KEY:
    'Signing key (HMAC-SHA256) of per-run delegated tokens: 32 random bytes as base64 or hex. Unset: the first process generates one and keeps it in the store, so every process on the same database accepts the others’ tokens.',
  KEEL_DELEGATION_TTL_MS:
    'How long the delegated token a tool call receives (`ctx.delegation`, `KEEL_RUN_TOKEN` in a sandbox) is valid, in ms; it is refused sooner if its run ends. Default 900000 (15 minutes).',
  KEEL_DELEGATION_AUDIENCE:
    'The audience delegated tokens are minted for and checked against: give each deployment its own so one’s tokens are refused by another sharing the key. Default `keel-api`.',
  KEEL_DELEGATION_API_URL:
    'The Keel API URL tools and sandboxed programs call back with their delegated token (`ctx.delegation.apiUrl`, `KEEL_API_URL`); unset: the address this process’s API listens on (none in `keel worker`).',
  KEEL_DATA_DIR:
    'Where the embedded store keeps `keel.db` (SQLite) and sandbox artifacts. One process per directory (a lock file enforces it). Flag: `keel dev --data`.',
  KEEL_HOST: 'Address the HTTP API listens on. Flag: `--host`.',
  KEEL_PORT: 'Port the HTTP API listens on (0: any free port). Flag: `--port`.',
  KEEL_DURABILITY:
    'What an acknowledged commit means: `fsync` (on disk), `os` (written to the OS), `memory` (SQLite: committed every group-commit max wait), `replicated` (Postgres with a synchronous standby; refused on SQLite and without one). See docs/guides/operations.md.',
  KEEL_GROUP_COMMIT_MAX_BATCH:
    'Most run commits sharing one store transaction (group commit), 1 to 1024; the Postgres store takes at most 512 in one transaction.',
  KEEL_GROUP_COMMIT_MAX_WAIT_MS:
    'How long a commit may wait for others to join its transaction, on both stores (0: the next event-loop turn); a full batch goes at once. Under `memory` on SQLite, how often the open transaction commits (0 means 100 ms).',
  KEEL_LEASE_TTL_MS:
    "Length of a run's lease; heartbeats renew it every third of it. A dead process's runs are taken over when it expires.",
  KEEL_MAX_ACTIVE_RUNS:
    'Runs this process holds live in memory (run slots); waiting runs and runs waiting for a pool slot do not count.',
  KEEL_POISON_LEASE_LOSSES:
    'Lost leases in a row without a commit after which a run is quarantined as `poison_run`.',
  KEEL_PREEMPT_AFTER_MS:
    'A claimable interactive run waiting longer than this, with every run slot of a process held, makes that process preempt batch runs at their next effect boundary; `off` or 0 disables.',
  KEEL_AGENT_ISOLATION:
    '`isolate`: agent code runs in worker threads under a watchdog; `thread`: on the main thread (no watchdog).',
  KEEL_AGENT_ISOLATES:
    'Isolates (worker threads) per process; unset: the number of CPUs, from 1 to 4.',
  KEEL_AGENT_BLOCKED_MS:
    'A turn of agent code holding its isolate longer than this ends the run with `agent_blocked` (per agent: `defineAgent({ blockedAfterMs })`).',
  KEEL_TOOL_TIMEOUT_MS:
    "The timeout of each attempt of a tool that declares no `timeoutMs` (it then fails with `tool_timeout`, retried under the tool's rules), so a hung tool cannot hold its run for ever; `off` or 0: none.",
  KEEL_CANCEL_GRACE_MS:
    "On a cancel, how long a run's tool calls in flight have after the graceful signal (`stopping`; SIGTERM to a sandboxed program) before they are aborted and their sandboxes killed; 0: at once. An agent's `cancelGraceMs` replaces it.",
  KEEL_AGENT_MEMORY_MB:
    'Heap limit of each isolate; beyond it the run that was running fails with `agent_oom`.',
  KEEL_PAYLOAD_MAX_BYTES: 'Largest request body; above it the API answers `413 payload_too_large`.',
  KEEL_PAYLOAD_INLINE_MAX_BYTES:
    'Largest JSON (bytes) of a run input or output, or an effect’s arguments or result, kept in its row; a larger one is stored once as a content-addressed payload (sha256, chunked) and referenced.',
  KEEL_PAYLOAD_STORED_MAX_BYTES:
    'Largest payload stored (bytes of JSON): a larger run input is refused (`413 result_too_large`), a larger effect result or run output fails the run with `result_too_large`.',
  KEEL_RUN_PAYLOAD_MAX_BYTES:
    'Most bytes of distinct payloads one run references; beyond it, `run_payloads_too_large` (413 at the API, a failed run in the engine).',
  KEEL_STEP_PREVIEW_MAX_BYTES:
    'Largest JSON (bytes) of a step’s input or output in `GET /v1/runs/:id/steps`; a larger one is a preview there (`inputTruncated`/`outputTruncated`), whole at `GET /v1/runs/:id/steps/:seq`.',
  KEEL_BATCH_RUNS_MAX:
    'Most runs one `POST /v1/runs:batch` may submit; a larger batch is `400 batch_too_large` (the request body is also bounded by KEEL_PAYLOAD_MAX_BYTES).',
  KEEL_PLATFORM_TOKEN_CAP_PER_DAY:
    'Model tokens (input + output) all tenants together may use per UTC day; once spent, runs’ model calls wait (`platform_cap_reached`) until midnight UTC and direct gateway calls fail `platform_cap_reached`. Counted from committed model calls (on Postgres, the whole cluster’s; each process re-reads every 2 s). Unset: no cap (docs/guides/models.md).',
  KEEL_PLATFORM_COST_CAP_PER_DAY:
    'USD all tenants together may spend on models per UTC day (priced from the models’ `price`); enforced like KEEL_PLATFORM_TOKEN_CAP_PER_DAY. Unset: no cap.',
  KEEL_AUDIT_RETENTION_DAYS:
    'Days the audit log (`GET /v1/audit`) keeps an entry; an hourly pass in each API process deletes older ones.',
  KEEL_LOG_LEVEL: 'pino log level of the JSON log lines on stdout.',
  KEEL_DATABASE_URL:
    'PostgreSQL connection string: use the Postgres store. Required by `keel server`, `keel worker` and `keel migrate`; optional for `keel dev`.',
  KEEL_URL:
    'Where the client commands (`keel runs`, `keel schedules`, `keel tenants`, `keel plan --live`) send requests. Flag: `--url`.',
  KEEL_TEST_CRASH_AT:
    'Tests only: `point[:n]` makes the process SIGKILL itself the n-th time it reaches a crash point (src/domain/crash-points.ts).',
  KEEL_RETENTION_DAYS:
    'Platform default: days an ended run’s journal and events stay in the live tables before the archiver stores them (gzip chunks in the artifact store) and removes them; 0: no day limit. A tenant’s override: `PUT /v1/admin/tenants/:id/retention`.',
  KEEL_RETENTION_RUNS:
    'Platform default: how many of a tenant’s newest ended runs keep their journal and events live; older ones are archived; 0: no count limit.',
  KEEL_ARCHIVE_INTERVAL_MS:
    'How often each process’s archiver looks for runs due for archival (claims keep a run to one archiver).',
  KEEL_ARCHIVE_CHUNK_POSITIONS:
    'Journal or event positions per archive chunk (each chunk is one gzip artifact).',
  KEEL_SCHEDULER_TICK_MS:
    'How often each process looks for due schedule fires (a fire starts up to one tick late).',
  KEEL_SCHEDULER_LEASE_MS:
    'How long a claimed schedule stays with a scheduler that stopped answering.',
  KEEL_MODELS_FILE:
    'JSON file of models, provider accounts, tenant limits, retry budget and breaker settings (docs/guides/models.md); validated at start.',
  KEEL_POOLS_FILE:
    'JSON file of effect pool limits, queue bounds and per-tenant caps; reloaded on change and on SIGHUP (docs/guides/tenants-and-fairness.md).',
  KEEL_POOL_LEASE_MS:
    'Distributed mode: lease of the cluster-wide pool slots a process holds, renewed every third of it; a lost process’s slots come back to the others when it expires (docs/guides/distributed.md).',
  KEEL_POOL_GRANT_RETRY_MS:
    'Distributed mode: how long a refused ask for cluster-wide pool slots waits (±50 %) before asking again, unless a slot is given back sooner.',
  KEEL_FAIRNESS_POLICY:
    '`weighted` (default): a freed effect-pool slot goes to the waiting tenant first in weighted fair queuing of that pool; `drf`: to the waiting tenant with the least dominant share (max over pools of slots held / limit) divided by its weight (docs/guides/tenants-and-fairness.md).',
  KEEL_MCP_SERVERS_FILE:
    'JSON file of tenants’ MCP servers (`{ "tenants": { "<tenant name>": [server, ...] } }`), written to the store at start (docs/guides/mcp.md).',
  KEEL_MCP_ALLOWED_ORIGINS:
    'Comma-separated origins (`https://host:port`) streamable-HTTP MCP servers may be reached at; `*` allows any (development only); unset: none.',
  KEEL_IMAGES_DIR:
    'Where environment images are built and cached (content-addressed, shared read-only by every sandbox); default `<data dir>/images`. `keel images` uses it too.',
  KEEL_IMAGE_MIRROR:
    'Debian mirror environment images are built from, for images that name none; default: the host’s apt source (/etc/apt).',
  KEEL_IMAGE_BUILD_WAIT_MS:
    'How long a sandbox call waits for its image to be built before failing with `image_not_built` (the build goes on); 0: sandboxes never build images (run `keel images build`).',
  KEEL_BROWSER_PATH:
    'The Chromium executable the browser tools drive (headless, through playwright-core; Keel never downloads a browser): default Debian’s `/usr/bin/chromium` (docs/guides/browser.md).',
  KEEL_BROWSER_MAX_SESSIONS:
    'Browser sessions at once in this process (one page each, in one Chromium): the limit of the `browser` pool unless the pools file names one; per-tenant caps come from the pools file’s `browser.tenantCaps`. Default 8.',
  KEEL_BROWSER_IDLE_MS:
    'A browser session with no action for this long is reclaimed (cookies and local storage saved as an artifact, the page closed, its `browser` pool slot freed); the next action rebuilds it. Default 60000.',
  KEEL_SANDBOX_PLACEMENT:
    '`local` (default): built-in sandbox tools run in this process’s sandboxes; `nodes`: they are placed on the cluster’s `keel node` processes (power-of-k over their heartbeated load; docs/guides/distributed.md).',
  KEEL_PLACEMENT_K:
    'Sandbox nodes sampled per placement (power-of-k choices); the least loaded of them is tried first.',
  KEEL_PLACEMENT_REFRESH_MS:
    'How often a placer reads the sandbox nodes’ heartbeated load again (between two reads it counts its own placements as load).',
  KEEL_PLACEMENT_DEADLINE_MS:
    'How long a sandboxed call waits for a node to accept it (every candidate refused, or none registered) before failing with `nodes_unavailable` (retryable).',
  KEEL_NODE_STALE_MS: 'A sandbox node whose last heartbeat is older than this gets no new calls.',
  KEEL_NODE_SLOTS:
    'Sandboxed calls a `keel node` runs at once (it refuses more with `node_refused`); default: its cores.',
  KEEL_NODE_TOKEN:
    '`keel node`’s token (from `POST /v1/admin/nodes`), instead of `--token`, which other users of the host can read in the process list.',
  KEEL_TELEMETRY_INCLUDE_CONTENT:
    '`true` puts prompts, tool arguments and effect results into trace spans (cut to 4 KiB each); otherwise they are `[redacted]`.',
  KEEL_METRICS_PORT:
    'A second listener serving only `GET /metrics` and the health checks `GET /healthz` and `GET /readyz`, without auth (for `keel worker`, which has no API, and private scrape networks); unset: none.',
  KEEL_METRICS_HOST: 'Address of the `KEEL_METRICS_PORT` listener.',
  KEEL_ADMIN_PORT:
    'A listener of its own for the admin surface (`/v1/admin/*`, `GET /metrics`): the main listener then answers 404 for those routes, this one serves the whole API and the dashboard. Bind it where only operators reach it; unset: one listener serves all.',
  KEEL_ADMIN_HOST: 'Address of the `KEEL_ADMIN_PORT` listener.',
  KEEL_KEY_REQUESTS_PER_MINUTE:
    'Requests a minute an API key without its own `requestsPerMinute` may make, counted across all API processes on Postgres (`429 key_rate_limited` with `Retry-After` past it); unset: unlimited.',
  KEEL_CORS_ORIGINS:
    'Comma-separated origins (`https://app.example.com`) whose pages may call the API from a browser (CORS, without credentials: the API uses bearer keys); unset: CORS off, no cross-origin page can read a response.',
  OTEL_TRACES_EXPORTER: 'Standard OpenTelemetry: `otlp`, `console` (spans to stdout) or `none`.',
  OTEL_SDK_DISABLED: 'Standard OpenTelemetry: `true` turns tracing off whatever else is set.',
  OTEL_SERVICE_NAME: "Standard OpenTelemetry: the `service.name` of Keel's spans.",
  OTEL_EXPORTER_OTLP_ENDPOINT:
    'Standard OpenTelemetry: collector base URL; spans go to `<url>/v1/traces` as OTLP/HTTP JSON. Setting it turns tracing on.',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT:
    'Standard OpenTelemetry: full traces URL (wins over the base URL); setting it turns tracing on.',
} as const satisfies Record<keyof typeof ENV_VARS, string>;

export interface LoadedConfig {
  config: KeelConfig;
  /**
   * KEEL_* variables Keel does not know: probably typos; reported, not fatal, since agent code may
   * use its own.
   */
  unknownVariables: string[];
}

export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<keyof KeelConfig, unknown>> = {},
): LoadedConfig {
  const raw: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(ENV_VARS)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) raw[key] = value;
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const byKey = Object.fromEntries(Object.entries(ENV_VARS).map(([name, key]) => [key, name]));
    const problems = parsed.error.issues.map(
      (i) => `${byKey[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`,
    );
    throw new KeelError('config_invalid', `invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const unknownVariables = Object.keys(env).filter(
    (name) => name.startsWith('KEEL_') && !(name in ENV_VARS),
  );
  return { config: parsed.data, unknownVariables };
}

/**
 * Environment variable names an API key may be read from: what a models file may name in
 * `apiKeyEnv`.
 */
const SECRET_ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

/**
 * Reads the API key held in the environment variable `name` (named by a models file's `apiKeyEnv`).
 * Keys stay in the environment: Keel never stores or logs them. Names must look like environment
 * variables.
 * @example
 * readSecretEnv('OPENAI_API_KEY'); // 'sk-…' or undefined
 */
export function readSecretEnv(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!SECRET_ENV_NAME.test(name))
    throw new KeelError(
      'config_invalid',
      `apiKeyEnv ${JSON.stringify(name)} is not an environment variable name`,
    );
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}
