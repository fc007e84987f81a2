// Keel's Prometheus metrics: one prom-client registry per process and every metric definition, with
// its name, unit and labels in one place. It holds no logic beyond recording; it never reads the
// store or the clock itself (derived gauges get their values from the collectors in live-gauges.ts
// and ratio-gauges.ts).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerProcessMetrics } from './process-metrics.ts';

/**
 * Seconds, from a millisecond to six hours: effects range from an in-memory step to a human
 * answering a question.
 */
export const DURATION_BUCKETS_SECONDS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600,
];
/** Writes per store transaction (group commit), up to the SQLite batch bound. */
/**
 * Seconds, coarse: the per-tenant pool histograms multiply series by tenants, so they get few
 * buckets.
 */
/** Run completion times (admission to success): seconds to hours. */
export const RUN_COMPLETION_BUCKETS_SECONDS = [
  0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 900, 3600,
];
export const TENANT_DURATION_BUCKETS_SECONDS = [0.01, 0.1, 1, 10, 60, 600];
export const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/** Sandbox starts: a warm hit takes milliseconds, a cold gVisor start a few hundred. */
const SANDBOX_START_BUCKETS_SECONDS = [
  0.001, 0.002, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** Breaker states as gauge values: keel_model_breaker_state is 0 closed, 1 half-open, 2 open. */
export const BREAKER_STATE_VALUE = { closed: 0, half_open: 1, open: 2 } as const;
export type BreakerState = keyof typeof BREAKER_STATE_VALUE;

export function createMetrics() {
  const registry = new Registry();
  registerProcessMetrics(registry);
  const r = [registry];
  return {
    registry,
    poolQueueDepth: new Gauge({
      name: 'keel_pool_queue_depth',
      help: 'Items waiting in a pool queue: for pool runs, runs claimable now (queued, due timers, expired leases; from the store); for effect pools (model:<name>, sandbox:<profile>, inline, declared tool pools, model:<name>/<replica>), effects waiting for a slot.',
      labelNames: ['pool'],
      registers: r,
    }),
    poolOldestRunAge: new Gauge({
      name: 'keel_pool_oldest_run_age_seconds',
      help: 'Age, from its admission, of the oldest run with an effect waiting in an effect pool (the run the pool serves first absent deadlines); 0 when none waits.',
      labelNames: ['pool'],
      registers: r,
    }),
    poolOldestItemAge: new Gauge({
      name: 'keel_pool_oldest_item_age_seconds',
      help: 'How long the oldest item of a pool queue has waited (pool runs: from the store); 0 when the queue is empty.',
      labelNames: ['pool'],
      registers: r,
    }),
    // Effect pools: per pool, and per pool and tenant (the tenant label only on the
    // keel_pool_tenant_* series).
    poolRunning: new Gauge({
      name: 'keel_pool_running',
      help: 'Slots of an effect pool held now.',
      labelNames: ['pool'],
      registers: r,
    }),
    poolLimit: new Gauge({
      name: 'keel_pool_limit',
      help: 'Concurrency limit of an effect pool (reloadable).',
      labelNames: ['pool'],
      registers: r,
    }),
    poolWait: new Histogram({
      name: 'keel_pool_wait_seconds',
      help: 'Time an effect waited for a slot of its pool.',
      labelNames: ['pool'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    poolExecution: new Histogram({
      name: 'keel_pool_execution_seconds',
      help: 'Time an effect held its pool slot.',
      labelNames: ['pool'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    poolRejected: new Counter({
      name: 'keel_pool_rejected_total',
      help: 'Pool admissions refused, by reason: queue_full, aborted (the run stopped waiting).',
      labelNames: ['pool', 'reason'],
      registers: r,
    }),
    poolSlotsHeld: new Gauge({
      name: 'keel_pool_cluster_slots_held',
      help: 'Cluster-wide slots of a pool this process holds from the database (distributed mode; pools of cluster scope).',
      labelNames: ['pool'],
      registers: r,
    }),
    poolGrantWait: new Histogram({
      name: 'keel_pool_cluster_grant_wait_seconds',
      help: 'Time a call admitted by its local pool waited for a cluster-wide slot (0 when one was at hand).',
      labelNames: ['pool'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    poolLeaseRenewFailures: new Counter({
      name: 'keel_pool_cluster_lease_failures_total',
      help: 'Failures of this process’s pool-slot lease: lost (it had expired; a new one is opened) or error (the database did not answer).',
      labelNames: ['reason'],
      registers: r,
    }),
    poolTenantQueueDepth: new Gauge({
      name: 'keel_pool_tenant_queue_depth',
      help: 'Effects of a tenant waiting in a pool queue.',
      labelNames: ['pool', 'tenant'],
      registers: r,
    }),
    poolTenantOldestItemAge: new Gauge({
      name: 'keel_pool_tenant_oldest_item_age_seconds',
      help: 'How long a tenant’s oldest effect in a pool queue has waited.',
      labelNames: ['pool', 'tenant'],
      registers: r,
    }),
    poolTenantRunning: new Gauge({
      name: 'keel_pool_tenant_running',
      help: 'Slots of a pool a tenant holds now.',
      labelNames: ['pool', 'tenant'],
      registers: r,
    }),
    poolTenantWait: new Histogram({
      name: 'keel_pool_tenant_wait_seconds',
      help: 'Time a tenant’s effects waited for a pool slot.',
      labelNames: ['pool', 'tenant'],
      buckets: TENANT_DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    poolTenantExecution: new Histogram({
      name: 'keel_pool_tenant_execution_seconds',
      help: 'Time a tenant’s effects held a pool slot.',
      labelNames: ['pool', 'tenant'],
      buckets: TENANT_DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    poolTenantRejected: new Counter({
      name: 'keel_pool_tenant_rejected_total',
      help: 'Pool admissions refused per tenant, by reason.',
      labelNames: ['pool', 'tenant', 'reason'],
      registers: r,
    }),
    effectWait: new Histogram({
      name: 'keel_effect_wait_seconds',
      help: 'Time an effect spent queued before it executed, by kind (model, tool, step, input, sleep, child); for the waits input, sleep and child, the whole wait.',
      labelNames: ['kind'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    effectExecution: new Histogram({
      name: 'keel_effect_execution_seconds',
      help: 'Time an effect spent executing, from getting its slot to its result, by kind.',
      labelNames: ['kind'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    runsTotal: new Counter({
      name: 'keel_runs_total',
      help: 'Runs this process ended, by tenant, agent, final status and outcome (ok, an error code — codes outside the registry count as agent_error — or a cancel outcome).',
      labelNames: ['tenant', 'agent', 'status', 'outcome'],
      registers: r,
    }),
    runCompletion: new Histogram({
      name: 'keel_run_completion_seconds',
      help: 'Time from a run’s admission to its success, by tenant and agent: under load, whether runs finish steadily or all at the end (rate of _count: completions per second).',
      labelNames: ['tenant', 'agent'],
      buckets: RUN_COMPLETION_BUCKETS_SECONDS,
      registers: r,
    }),
    runsWithinDeadline: new Counter({
      name: 'keel_runs_succeeded_within_deadline_total',
      help: 'Runs this process ended succeeded by their deadline (or with none), by tenant and agent.',
      labelNames: ['tenant', 'agent'],
      registers: r,
    }),
    deadlineSuccessRatio: new Gauge({
      name: 'keel_runs_succeeded_within_deadline_ratio',
      help: 'Share of the runs ended here that succeeded within their deadline, by tenant and agent.',
      labelNames: ['tenant', 'agent'],
      registers: r,
    }),
    toolPolicyDecisions: new Counter({
      name: 'keel_tool_policy_decisions_total',
      help: 'Tool calls the policy did not simply allow, by tenant, tool and outcome (denied by policy, approval requested, approved, denied by a human, approval expired).',
      labelNames: ['tenant', 'tool', 'outcome'],
      registers: r,
    }),
    runAdmissionsRejected: new Counter({
      name: 'keel_run_admissions_rejected_total',
      help: "Runs refused a place in their tenant's queue, by tenant, where they came from (api: a 429; child: the parent waits; schedule: the fire is skipped) and reason.",
      labelNames: ['tenant', 'source', 'reason'],
      registers: r,
    }),
    runsStalledNow: new Gauge({
      name: 'keel_runs_stalled',
      help: "Running runs marked stalled now (not moved for their agent's stallAfterMs), per tenant, from the store.",
      labelNames: ['tenant'],
      registers: r,
    }),
    tenantRuns: new Gauge({
      name: 'keel_tenant_runs',
      help: 'Live runs per tenant and state (queued, running, waiting, cancelling), from the store.',
      labelNames: ['tenant', 'state'],
      registers: r,
    }),
    modelCalls: new Counter({
      name: 'keel_model_calls_total',
      help: 'Model calls (each with its retries) by provider, model and outcome.',
      labelNames: ['provider', 'model', 'outcome'],
      registers: r,
    }),
    modelRateLimited: new Counter({
      name: 'keel_model_rate_limited_total',
      help: 'Provider answers that were rate limits (HTTP 429), by provider and model.',
      labelNames: ['provider', 'model'],
      registers: r,
    }),
    modelRetries: new Counter({
      name: 'keel_model_retries_total',
      help: 'Provider attempts beyond the first, by provider and model.',
      labelNames: ['provider', 'model'],
      registers: r,
    }),
    modelRetryAmplification: new Gauge({
      name: 'keel_model_retry_amplification',
      help: 'Provider attempts per model call (1 = no retries), by provider.',
      labelNames: ['provider'],
      registers: r,
    }),
    modelTieringDecisions: new Counter({
      name: 'keel_model_tiering_decisions_total',
      help: 'Model calls a tiering rule decided (routed to a cheaper model on a low tenant budget or a long pool backlog, or escalated on a hint), by the model asked for, the model called and the reason (budget, backlog, hint).',
      labelNames: ['from', 'to', 'reason'],
      registers: r,
    }),
    platformModelUsage: new Gauge({
      name: 'keel_platform_model_usage',
      help: 'Model spend of all tenants together today (UTC) as this process last read it for the platform-wide caps (KEEL_PLATFORM_*_CAP_PER_DAY), by type: tokens or cost_usd. Absent when no cap is set.',
      labelNames: ['type'],
      registers: r,
    }),
    platformModelCap: new Gauge({
      name: 'keel_platform_model_cap',
      help: 'The platform-wide daily model caps (KEEL_PLATFORM_TOKEN_CAP_PER_DAY, KEEL_PLATFORM_COST_CAP_PER_DAY), by type: tokens or cost_usd; absent when unset.',
      labelNames: ['type'],
      registers: r,
    }),
    modelBreakerState: new Gauge({
      name: 'keel_model_breaker_state',
      help: 'Circuit breaker state per provider and model: 0 closed, 1 half-open, 2 open.',
      labelNames: ['provider', 'model'],
      registers: r,
    }),
    tokens: new Counter({
      name: 'keel_tokens_total',
      help: 'Model tokens committed, by tenant, model and type (input, output, cached).',
      labelNames: ['tenant', 'model', 'type'],
      registers: r,
    }),
    costUsd: new Counter({
      name: 'keel_cost_usd_total',
      help: 'Model spend committed in US dollars, by tenant and model.',
      labelNames: ['tenant', 'model'],
      registers: r,
    }),
    runCostUsd: new Counter({
      name: 'keel_run_cost_usd_total',
      help: 'Model spend committed in US dollars, by tenant and agent, whatever the run ends as.',
      labelNames: ['tenant', 'agent'],
      registers: r,
    }),
    costPerSuccess: new Gauge({
      name: 'keel_cost_per_successful_run_usd',
      help: 'All spend (failed and unfinished runs included) divided by succeeded runs, by tenant and agent.',
      labelNames: ['tenant', 'agent'],
      registers: r,
    }),
    unknownExecutions: new Gauge({
      name: 'keel_unknown_executions',
      help: 'Tool executions whose outcome is unknown in live runs (waiting for a query hook or an operator), from the store.',
      registers: r,
    }),
    sandboxGibSeconds: new Counter({
      name: 'keel_sandbox_environment_gib_seconds_total',
      help: 'Sandbox environment memory-time in GiB-seconds (cgroup memory integrated over time), by tenant.',
      labelNames: ['tenant'],
      registers: r,
    }),
    sandboxStarts: new Counter({
      name: 'keel_sandbox_starts_total',
      help: 'Sandbox environments a call started, by tier and how: cold (built), warm (from a warm pool), resumed (a paused one).',
      labelNames: ['tier', 'start'],
      registers: r,
    }),
    sandboxStartSeconds: new Histogram({
      name: 'keel_sandbox_start_seconds',
      help: 'Time from a call needing an environment to the environment being ready (workspace restored), by tier and how it started; an image build before it is not counted.',
      labelNames: ['tier', 'start'],
      buckets: SANDBOX_START_BUCKETS_SECONDS,
      registers: r,
    }),
    sandboxReclaims: new Counter({
      name: 'keel_sandbox_reclaims_total',
      help: 'Sandbox environments torn down or handed back to a warm pool, by tier and outcome (ok, failed).',
      labelNames: ['tier', 'outcome'],
      registers: r,
    }),
    sandboxEnvironments: new Gauge({
      name: 'keel_sandbox_environments',
      help: 'Sandbox environments of this process by state: busy (running a call), idle, paused, reclaiming, warm (in warm pools), service (stdio MCP servers).',
      labelNames: ['state'],
      registers: r,
    }),
    browserSessions: new Gauge({
      name: 'keel_browser_sessions',
      help: 'Browser sessions of this process by state: starting, active (an action running), idle (held under its lease between actions), reclaiming; closed and crashed ones leave at once.',
      labelNames: ['state'],
      registers: r,
    }),
    browserLeaseAge: new Gauge({
      name: 'keel_browser_session_lease_age_seconds',
      help: 'Age of the oldest live browser session lease of this process (since the session opened); 0 when none.',
      registers: r,
    }),
    browserReclaims: new Counter({
      name: 'keel_browser_reclaims_total',
      help: 'Browser sessions reclaimed, by reason: idle (past KEEL_BROWSER_IDLE_MS), ended, waiting (the run parked), preempted, lost (lease lost), closed (browser_close), crashed (Chromium died), shutdown.',
      labelNames: ['reason'],
      registers: r,
    }),
    browserStartSeconds: new Histogram({
      name: 'keel_browser_session_start_seconds',
      help: 'Time to open a browser session once its pool slot is granted (Chromium launch, when needed, included), by whether it was restored from saved storage state.',
      labelNames: ['restored'],
      buckets: SANDBOX_START_BUCKETS_SECONDS,
      registers: r,
    }),
    browserLeaseSeconds: new Histogram({
      name: 'keel_browser_session_lease_seconds',
      help: 'How long a browser session lease lived, observed when it is reclaimed, by reason.',
      labelNames: ['reason'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    egressConnections: new Counter({
      name: 'keel_egress_connections_total',
      help: 'Connections sandboxes asked the egress proxy for, by tenant and verdict (allowed, denied).',
      labelNames: ['tenant', 'verdict'],
      registers: r,
    }),
    egressBytes: new Counter({
      name: 'keel_egress_bytes_total',
      help: 'Bytes through the egress proxy, by tenant and direction (sent: sandbox to destination, received: back).',
      labelNames: ['tenant', 'direction'],
      registers: r,
    }),
    commitsNotDurable: new Gauge({
      name: 'keel_commits_not_durable',
      help: 'Writes acknowledged since the last transaction this process knows was flushed to disk: 0 with durability fsync; with os or memory it only grows (the disk syncs at checkpoints Keel does not see), an upper bound of what a power cut could lose.',
      registers: r,
    }),
    commitBatchSize: new Histogram({
      name: 'keel_commit_batch_size',
      help: 'Writes per store transaction (group commit).',
      buckets: BATCH_SIZE_BUCKETS,
      registers: r,
    }),
    commitDuration: new Histogram({
      name: 'keel_commit_duration_seconds',
      help: 'Time from submitting a run commit to its acknowledgement.',
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    isolateRestarts: new Counter({
      name: 'keel_isolate_restarts_total',
      help: 'Agent isolates (worker threads) replaced, by reason: blocked, oom, crashed.',
      labelNames: ['reason'],
      registers: r,
    }),
    watchdogAborts: new Counter({
      name: 'keel_agent_aborts_total',
      help: 'Runs ended because their agent code misbehaved in its isolate, by agent and code (agent_blocked, agent_oom, agent_crashed).',
      labelNames: ['agent', 'code'],
      registers: r,
    }),
    runsStalled: new Counter({
      name: 'keel_runs_stalled_total',
      help: "Runs marked stalled here (not moved for their agent's stallAfterMs), by tenant and onStall policy.",
      labelNames: ['tenant', 'policy'],
      registers: r,
    }),
    preemptions: new Counter({
      name: 'keel_preemptions_total',
      help: 'Batch runs preempted here (re-queued at an effect boundary) for interactive runs waiting too long, by tenant of the preempted run.',
      labelNames: ['tenant'],
      registers: r,
    }),
    preemptionRequeueDelay: new Histogram({
      name: 'keel_preemption_requeue_delay_seconds',
      help: "Time from a run's preemption to its next claim (recorded by the claiming process).",
      buckets: DURATION_BUCKETS_SECONDS,
      registers: r,
    }),
    // Retention and archival (src/archive/)
    storageBytes: new Gauge({
      name: 'keel_storage_bytes',
      help: 'Bytes stored per tenant and kind: journal and events (live rows, their JSON text), archive (compressed chunks), payloads (large payloads its runs reference); measured by each archiver pass.',
      labelNames: ['tenant', 'kind'],
      registers: r,
    }),
    payloadsCollected: new Counter({
      name: 'keel_payloads_collected_total',
      help: 'Large payloads deleted because no run referenced them any more (with the chunks of uploads that never sealed); by each archiver pass.',
      registers: r,
    }),
    archiveRows: new Counter({
      name: 'keel_archive_rows_total',
      help: 'Journal entries and events archived (stored in a verified chunk) or pruned (removed from the live tables) here, by stream and action.',
      labelNames: ['stream', 'action'],
      registers: r,
    }),
    archiveChunkFailures: new Counter({
      name: 'keel_archive_chunk_failures_total',
      help: 'Archive chunks whose write or verification failed here (left as a gap and re-sent by a later pass).',
      registers: r,
    }),
    archiveLag: new Gauge({
      name: 'keel_archive_lag_seconds',
      help: 'Age (from its end) of the oldest run due for archival and not archived yet, at the last archiver pass; 0 when none is due.',
      registers: r,
    }),
    commits: new Counter({
      name: 'keel_commits_total',
      help: 'Run commits by result: ok, stale (fenced off) or error.',
      labelNames: ['result'],
      registers: r,
    }),
  };
}

export type KeelMetrics = ReturnType<typeof createMetrics>;
