// Keel's default settings, each defined once with its unit in its name: config.ts uses them as the
// defaults of its schema (the environment may override them), and the module each belongs to uses
// the same constant when it is built without a config (tests, embedding). It imports only
// src/domain and reads no environment.
import { GROUP_COMMIT_MAX_BATCH_LIMIT } from '../domain/group-commit.ts';

/** Where the SQLite store, artifacts and sandboxes live (KEEL_DATA_DIR). */
export const DATA_DIR_DEFAULT = '.keel';
/** The interface the API listens on (KEEL_HOST); the metrics listener's too (KEEL_METRICS_HOST). */
export const HOST_DEFAULT = '127.0.0.1';
/** The API's port (KEEL_PORT). */
export const PORT_DEFAULT = 7070;
/** The server the CLI talks to (KEEL_URL). */
export const URL_DEFAULT = `http://${HOST_DEFAULT}:${PORT_DEFAULT}`;

/**
 * Most writes committed in one transaction (KEEL_GROUP_COMMIT_MAX_BATCH): as many as a store ever
 * takes.
 */
export const GROUP_COMMIT_MAX_BATCH_DEFAULT = GROUP_COMMIT_MAX_BATCH_LIMIT;
/**
 * How long a group commit waits for more writes before committing (KEEL_GROUP_COMMIT_MAX_WAIT_MS):
 * not at all.
 */
export const GROUP_COMMIT_MAX_WAIT_MS_DEFAULT = 0;

/** A claimed run's lease lasts this long without a heartbeat (KEEL_LEASE_TTL_MS). */
export const LEASE_TTL_MS_DEFAULT = 15_000;
/**
 * Lease of a process's cluster-wide pool slots (KEEL_POOL_LEASE_MS): renewed every third of it; a
 * lost process's slots come back to the others when it expires.
 */
export const POOL_LEASE_MS_DEFAULT = 10_000;
/** How long a refused ask for cluster-wide pool slots waits before asking again (KEEL_POOL_GRANT_RETRY_MS). */
export const POOL_GRANT_RETRY_MS_DEFAULT = 50;
/** Runs one process holds in run slots at once (KEEL_MAX_ACTIVE_RUNS). */
export const MAX_ACTIVE_RUNS_DEFAULT = 2_000;
/**
 * Lost leases in a row without a commit after which a run is quarantined as poison
 * (KEEL_POISON_LEASE_LOSSES).
 */
export const POISON_LEASE_LOSSES_DEFAULT = 3;
/**
 * How long (ms) a claimable interactive run may wait for a slot before batch runs are preempted
 * (KEEL_PREEMPT_AFTER_MS).
 */
export const PREEMPT_AFTER_MS_DEFAULT = 2_000;

/** A turn of agent code holding its isolate longer than this is aborted (KEEL_AGENT_BLOCKED_MS). */
export const AGENT_BLOCKED_MS_DEFAULT = 2_000;
/** Each attempt of a tool that declares no timeout is bounded by this (KEEL_TOOL_TIMEOUT_MS). */
export const TOOL_TIMEOUT_MS_DEFAULT = 600_000;
/**
 * On a cancel, tool calls in flight have this long after the graceful signal before they are
 * aborted (KEEL_CANCEL_GRACE_MS).
 */
export const CANCEL_GRACE_MS_DEFAULT = 5_000;
/** Longest grace a cancel request (or an agent, or the node) may give, in ms: one hour. */
export const CANCEL_GRACE_MS_MAX = 3_600_000;
/** Heap limit of each agent isolate, in MiB (KEEL_AGENT_MEMORY_MB). */
export const ISOLATE_MEMORY_MB_DEFAULT = 512;

/** Largest request body the API accepts (KEEL_PAYLOAD_MAX_BYTES). */
export const PAYLOAD_MAX_BYTES_DEFAULT = 1024 * 1024;
// Large payloads' defaults live beside the payload reference format (the store reads them).
export {
  PAYLOAD_INLINE_MAX_BYTES_DEFAULT,
  PAYLOAD_STORED_MAX_BYTES_DEFAULT,
  RUN_PAYLOAD_MAX_BYTES_DEFAULT,
} from '../domain/payload-ref.ts';

/**
 * Largest JSON of a step's input or output in `GET /v1/runs/:id/steps` before it is cut to a
 * preview (KEEL_STEP_PREVIEW_MAX_BYTES).
 */
export const STEP_PREVIEW_MAX_BYTES_DEFAULT = 8 * 1024;
/** How often the archiver looks for runs due for archival (KEEL_ARCHIVE_INTERVAL_MS): a minute. */
export const ARCHIVE_INTERVAL_MS_DEFAULT = 60 * 1000;
/** Journal or event positions per archive chunk (KEEL_ARCHIVE_CHUNK_POSITIONS). */
export const ARCHIVE_CHUNK_POSITIONS_DEFAULT = 256;

/** Most runs one `POST /v1/runs:batch` may submit (KEEL_BATCH_RUNS_MAX). */
export const BATCH_RUNS_MAX_DEFAULT = 1_000;
/** Days an audit log entry is kept before the hourly retention pass deletes it. */
export const AUDIT_RETENTION_DAYS_DEFAULT = 365;
/** How long a tool call's delegated token is valid (KEEL_DELEGATION_TTL_MS): 15 minutes. */
export const DELEGATION_TTL_MS_DEFAULT = 15 * 60 * 1000;
/** The audience of delegated tokens (KEEL_DELEGATION_AUDIENCE). */
export const DELEGATION_AUDIENCE_DEFAULT = 'keel-api';

/** How often the scheduler looks for schedules to fire (KEEL_SCHEDULER_TICK_MS). */
export const SCHEDULER_TICK_MS_DEFAULT = 1_000;
/** How long a scheduler's claim on a schedule lasts (KEEL_SCHEDULER_LEASE_MS). */
export const SCHEDULER_LEASE_MS_DEFAULT = 30_000;
/** How long a sandbox call waits for its environment image to be built (10 minutes). */
export const IMAGE_BUILD_WAIT_MS_DEFAULT = 10 * 60 * 1000;

/** The Chromium the browser pool drives (KEEL_BROWSER_PATH): Debian's package. */
export const BROWSER_PATH_DEFAULT = '/usr/bin/chromium';
/**
 * Browser sessions at once per process (KEEL_BROWSER_MAX_SESSIONS): each holds a page of a few
 * tens to hundreds of MiB, so the default is small.
 */
export const BROWSER_MAX_SESSIONS_DEFAULT = 8;
/** A browser session unused this long is reclaimed (KEEL_BROWSER_IDLE_MS). */
export const BROWSER_IDLE_MS_DEFAULT = 60_000;
/** Sandbox placement (issue 24): power-of-two choices. */
export const PLACEMENT_K_DEFAULT = 2;
/** A placer reads the nodes' load once a second; placements in between count as load. */
export const PLACEMENT_REFRESH_MS_DEFAULT = 1_000;
/** A sandboxed call waits up to 30 s for a node to accept it. */
export const PLACEMENT_DEADLINE_MS_DEFAULT = 30_000;
/** A node unheard for 10 s (five missed heartbeats) gets no new calls. */
export const NODE_STALE_MS_DEFAULT = 10_000;
