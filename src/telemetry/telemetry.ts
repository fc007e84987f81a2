// The telemetry API the planes call: one process-wide object with one-line methods for what cannot
// be derived from the store (model calls and breakers in the gateway, sandbox memory-time,
// group-commit batches, in-process pool queues), plus rendering /metrics. Metrics about runs and
// effects come from observed-store.ts instead. Every method is cheap, synchronous and never throws
// into its caller.
import type { EnvironmentCounts, SandboxLifecycleEvent } from '../sandbox/sandbox-manager.ts';
import type { LiveMetrics } from '../store/live-metrics.ts';
import {
  BREAKER_STATE_VALUE,
  createMetrics,
  type BreakerState,
  type KeelMetrics,
} from './metrics.ts';

/** Browser session states the gauge shows (closed and crashed sessions leave the pool at once). */
const BROWSER_GAUGE_STATES = ['starting', 'active', 'idle', 'reclaiming'] as const;

/** What the browser gauges read at a scrape. */
export interface BrowserGauges {
  sessions: Partial<Record<string, number>>;
  oldestLeaseAgeSeconds: number;
}

/**
 * A scrape reuses the store's live metrics for this long, so frequent scrapes cost the store at
 * most one read per interval.
 */
export const LIVE_METRICS_MAX_AGE_MS = 1000;
const LIVE_STATES = ['queued', 'running', 'waiting', 'cancelling'] as const;
const NO_ENVIRONMENTS: EnvironmentCounts = {
  busy: 0,
  idle: 0,
  paused: 0,
  reclaiming: 0,
  warm: 0,
  service: 0,
};

export interface ModelCallReport {
  provider: string;
  model: string;
  /** `ok`, `error` (every attempt failed or a final error) or `cancelled`. */
  outcome: 'ok' | 'error' | 'cancelled';
  /** Provider attempts made (1 = no retry). */
  attempts: number;
  /** Attempts the provider refused with a rate limit (HTTP 429). */
  rateLimited: number;
}

/** An in-process pool queue (a semaphore's waiters, an effect pool): sampled at scrape time. */
export interface PoolProbe {
  depth(): number;
  /** How long the oldest waiter has waited, in ms; null when none waits. */
  oldestWaitMs(now: number): number | null;
  /** Effect pools: age of the oldest run (by admission) with an effect waiting, ms; null: none. */
  oldestRunAgeMs?(now: number): number | null;
  /**
   * Effect pools (src/scheduling/pool.ts) also report their limit, holders and per-tenant queues.
   */
  snapshot?(now: number): {
    limit: number;
    running: number;
    tenants: ReadonlyArray<{
      tenantId: string;
      running: number;
      queued: number;
      oldestWaitMs: number | null;
    }>;
  };
}

/** What the platform-wide cap gauges read (src/models/platform-caps.ts satisfies it). */
export interface PlatformCapsProbe {
  settings: { tokensPerDay?: number | undefined; costUsdPerDay?: number | undefined };
  usage(): Promise<{ tokens: number; costUsd: number }>;
}

export class Telemetry {
  readonly metrics: KeelMetrics = createMetrics();
  readonly #pools = new Map<string, Set<PoolProbe>>();
  readonly #modelTotals = new Map<string, { calls: number; attempts: number }>();
  readonly #tenantsSeen = new Set<string>();
  #liveSource:
    | { read(now: number): Promise<LiveMetrics>; notDurable: (() => number) | undefined }
    | undefined;
  #live: { at: number; value: Promise<LiveMetrics | undefined> } | undefined;
  #sandboxes: (() => EnvironmentCounts | undefined) | undefined;
  #platformCaps: PlatformCapsProbe | undefined;
  #browser: (() => BrowserGauges | undefined) | undefined;
  #notDurable = 0;
  #lastBatchSize = 0;
  /**
   * Spend and ends per tenant and agent, for cost per successful run and the deadline success
   * share.
   */
  readonly #perAgent = new Map<
    string,
    { spendUsd: number; ended: number; succeeded: number; withinDeadline: number }
  >();
  /**
   * Resolves a configured model name to its provider, for span attributes; set by whoever owns the
   * gateway.
   */
  providerOf: ((model: string) => string | undefined) | undefined;

  /**
   * One model call ended (after all its attempts).
   * @example
   * telemetry.modelCall({ provider: 'openai', model: 'gpt-x', outcome: 'ok', attempts: 2, rateLimited: 1 });
   */
  modelCall(report: ModelCallReport): void {
    const m = this.metrics;
    const labels = { provider: report.provider, model: report.model };
    m.modelCalls.inc({ ...labels, outcome: report.outcome });
    if (report.attempts > 1) m.modelRetries.inc(labels, report.attempts - 1);
    if (report.rateLimited > 0) m.modelRateLimited.inc(labels, report.rateLimited);
    const totals = this.#modelTotals.get(report.provider) ?? { calls: 0, attempts: 0 };
    totals.calls += 1;
    totals.attempts += Math.max(1, report.attempts);
    this.#modelTotals.set(report.provider, totals);
    m.modelRetryAmplification.set({ provider: report.provider }, totals.attempts / totals.calls);
  }

  /**
   * Model spend committed for a run of `agent` (called by the commit observer, whatever the run
   * ends as).
   */
  addRunSpend(tenant: string, agent: string, usd: number): void {
    if (usd <= 0) return;
    this.metrics.runCostUsd.inc({ tenant, agent }, usd);
    const a = this.#agentTotals(tenant, agent);
    a.spendUsd += usd;
    if (a.succeeded > 0)
      this.metrics.costPerSuccess.set({ tenant, agent }, a.spendUsd / a.succeeded);
  }

  /**
   * A run ended here (called by the commit observer). `outcome`: ok, an error code, or a cancel
   * outcome.
   */
  runEnded(
    tenant: string,
    agent: string,
    status: string,
    outcome: string,
    withinDeadline: boolean,
    /** Admission to end, ms; undefined when the run's admission is not known here. */
    completionMs?: number,
  ): void {
    const m = this.metrics;
    m.runsTotal.inc({ tenant, agent, status, outcome });
    if (status === 'succeeded' && completionMs !== undefined)
      m.runCompletion.observe({ tenant, agent }, Math.max(0, completionMs) / 1000);
    const a = this.#agentTotals(tenant, agent);
    a.ended += 1;
    if (status === 'succeeded') a.succeeded += 1;
    if (withinDeadline) {
      a.withinDeadline += 1;
      m.runsWithinDeadline.inc({ tenant, agent });
    }
    m.deadlineSuccessRatio.set({ tenant, agent }, a.withinDeadline / a.ended);
    if (a.succeeded > 0) m.costPerSuccess.set({ tenant, agent }, a.spendUsd / a.succeeded);
  }

  #agentTotals(tenant: string, agent: string) {
    const key = `${tenant}\u0000${agent}`;
    let totals = this.#perAgent.get(key);
    if (totals === undefined) {
      totals = { spendUsd: 0, ended: 0, succeeded: 0, withinDeadline: 0 };
      this.#perAgent.set(key, totals);
    }
    return totals;
  }

  /** A tiering rule decided a model call (src/models/tiering.ts). */
  modelTiering(decision: { requested: string; model: string; reason: string }): void {
    this.metrics.modelTieringDecisions.inc({
      from: decision.requested,
      to: decision.model,
      reason: decision.reason,
    });
  }

  /**
   * Where the platform-wide cap gauges read today's usage at each scrape (src/models/platform-caps.ts);
   * returns the detach function.
   */
  attachPlatformCaps(source: PlatformCapsProbe): () => void {
    this.#platformCaps = source;
    const { tokensPerDay, costUsdPerDay } = source.settings;
    if (tokensPerDay !== undefined)
      this.metrics.platformModelCap.set({ type: 'tokens' }, tokensPerDay);
    if (costUsdPerDay !== undefined)
      this.metrics.platformModelCap.set({ type: 'cost_usd' }, costUsdPerDay);
    return () => {
      if (this.#platformCaps === source) this.#platformCaps = undefined;
    };
  }

  /** A provider's (or one model's) circuit breaker changed state. */
  breakerState(provider: string, model: string, state: BreakerState): void {
    this.metrics.modelBreakerState.set({ provider, model }, BREAKER_STATE_VALUE[state]);
  }

  /** Sandbox environment memory-time a tenant used (GiB × seconds), reported as it accrues. */
  sandboxEnvironment(tenantId: string, gibSeconds: number): void {
    if (gibSeconds > 0 && Number.isFinite(gibSeconds))
      this.metrics.sandboxGibSeconds.inc({ tenant: tenantId }, gibSeconds);
  }

  /** An environment started or was reclaimed (sandbox-manager.ts). */
  sandboxLifecycle(event: SandboxLifecycleEvent): void {
    if (event.kind === 'started') {
      const labels = { tier: event.tier, start: event.start };
      this.metrics.sandboxStarts.inc(labels);
      this.metrics.sandboxStartSeconds.observe(labels, event.seconds);
    } else
      this.metrics.sandboxReclaims.inc({ tier: event.tier, outcome: event.ok ? 'ok' : 'failed' });
  }

  /** A browser session opened (src/browser): how long it took, whether state was restored. */
  browserStarted(seconds: number, restored: boolean): void {
    this.metrics.browserStartSeconds.observe({ restored: String(restored) }, seconds);
  }

  /** A browser session was reclaimed, and how long its lease had lived. */
  browserReclaimed(reason: string, leaseSeconds: number): void {
    this.metrics.browserReclaims.inc({ reason });
    this.metrics.browserLeaseSeconds.observe({ reason }, leaseSeconds);
  }

  /** Where the browser gauges read the node's sessions at each scrape (undefined: no pool yet). */
  attachBrowser(source: () => BrowserGauges | undefined): () => void {
    this.#browser = source;
    return () => {
      if (this.#browser === source) this.#browser = undefined;
    };
  }

  /** Where the environments gauge reads the node's environments at each scrape. */
  attachSandboxes(source: () => EnvironmentCounts | undefined): () => void {
    this.#sandboxes = source;
    return () => {
      if (this.#sandboxes === source) this.#sandboxes = undefined;
    };
  }

  /** One connection a sandbox asked the egress proxy for: its verdict and the bytes it carried. */
  egressConnection(
    tenantId: string,
    verdict: 'allowed' | 'denied',
    bytesSent: number,
    bytesReceived: number,
  ): void {
    this.metrics.egressConnections.inc({ tenant: tenantId, verdict });
    if (bytesSent > 0)
      this.metrics.egressBytes.inc({ tenant: tenantId, direction: 'sent' }, bytesSent);
    if (bytesReceived > 0)
      this.metrics.egressBytes.inc({ tenant: tenantId, direction: 'received' }, bytesReceived);
  }

  /**
   * A store transaction committed `size` writes. `flushed`: it was made durable (fsync /
   * synchronous commit), which also makes every earlier write durable; `acknowledged`: writes in it
   * that acknowledged something outside Keel.
   */
  commitBatch(size: number, flushed: boolean, acknowledged: number): void {
    this.#lastBatchSize = size;
    this.metrics.commitBatchSize.observe(size);
    this.#notDurable = flushed ? 0 : this.#notDurable + acknowledged;
    this.metrics.commitsNotDurable.set(this.#notDurable);
  }

  /**
   * Size of the transaction whose acknowledgement is being delivered now. Stores resolve a batch's
   * writes synchronously right after commitBatch(), and no other transaction completes before those
   * continuations run (microtasks drain before the next I/O callback), so a commit's awaiting code
   * reads its own batch's size here.
   */
  get lastCommitBatchSize(): number {
    return this.#lastBatchSize;
  }

  /** A new run was refused a place in its tenant's queue (`tenant_queue_full`). */
  runAdmissionRejected(tenant: string, source: 'api' | 'child' | 'schedule', reason: string): void {
    this.metrics.runAdmissionsRejected.inc({ tenant, source, reason });
  }

  /**
   * The tool policy's answer to a call it did not simply allow, or the end of its approval
   * (`denied_by_policy`, `approval_requested`, `approved`, `denied_by_approver`, `approval_expired`).
   */
  toolPolicyDecision(tenant: string, tool: string, outcome: string): void {
    this.metrics.toolPolicyDecisions.inc({ tenant, tool, outcome });
  }

  /** An effect got a slot of `pool` after waiting `waitedMs`. */
  admitted(pool: string, tenant: string, waitedMs: number): void {
    this.metrics.poolWait.observe({ pool }, waitedMs / 1000);
    this.metrics.poolTenantWait.observe({ pool, tenant }, waitedMs / 1000);
  }

  /** An effect let go of its slot of `pool` after holding it `heldMs`. */
  released(pool: string, tenant: string, heldMs: number): void {
    this.metrics.poolExecution.observe({ pool }, heldMs / 1000);
    this.metrics.poolTenantExecution.observe({ pool, tenant }, heldMs / 1000);
  }

  /** Cluster-wide slots of `pool` this process holds (global-slots.ts). */
  slotsHeld(pool: string, held: number): void {
    this.metrics.poolSlotsHeld.set({ pool }, held);
  }

  /** A call waited `waitedMs` for its cluster-wide slot of `pool`. */
  grantWaited(pool: string, waitedMs: number): void {
    this.metrics.poolGrantWait.observe({ pool }, waitedMs / 1000);
  }

  /** The pool-slot lease could not be renewed: `lost` (expired) or `error`. */
  renewFailed(reason: 'lost' | 'error'): void {
    this.metrics.poolLeaseRenewFailures.inc({ reason });
  }

  /** A pool refused an effect (`queue_full`) or the effect stopped waiting (`aborted`). */
  rejected(pool: string, tenant: string, reason: string): void {
    this.metrics.poolRejected.inc({ pool, reason });
    this.metrics.poolTenantRejected.inc({ pool, tenant, reason });
  }

  /** Samples an in-process pool queue at scrape time; returns the function that stops it. */
  registerPool(pool: string, probe: PoolProbe): () => void {
    let probes = this.#pools.get(pool);
    if (probes === undefined) {
      probes = new Set();
      this.#pools.set(pool, probes);
    }
    probes.add(probe);
    return () => void probes.delete(probe);
  }

  /**
   * The store whose live runs, run queue and unknown executions /metrics reports (one per process;
   * the last wins).
   */
  attachStore(source: {
    liveMetrics(now: number): Promise<LiveMetrics>;
    notDurableCommits?(): number;
  }): () => void {
    const attached = {
      read: (now: number) => source.liveMetrics(now),
      notDurable: source.notDurableCommits?.bind(source),
    };
    this.#liveSource = attached;
    this.#live = undefined;
    return () => {
      if (this.#liveSource === attached) this.#liveSource = undefined;
    };
  }

  /** The Prometheus text exposition of every metric, with the store-derived gauges refreshed. */
  async render(): Promise<{ contentType: string; body: string }> {
    const now = Date.now();
    await this.#refreshGauges(now);
    return {
      contentType: this.metrics.registry.contentType,
      body: await this.metrics.registry.metrics(),
    };
  }

  async #refreshGauges(now: number): Promise<void> {
    const m = this.metrics;
    const source = this.#liveSource;
    if (
      source !== undefined &&
      (this.#live === undefined || now - this.#live.at >= LIVE_METRICS_MAX_AGE_MS)
    ) {
      // A store that cannot answer (database down) leaves the previous values: /metrics itself must
      // keep working.
      this.#live = { at: now, value: source.read(now).catch(() => undefined) };
    }
    const live = await this.#live?.value;
    // The store knows exactly what it acknowledged and has not made durable yet; prefer it to the
    // batch estimate.
    const notDurable = source?.notDurable?.();
    if (notDurable !== undefined) m.commitsNotDurable.set(notDurable);
    const queues = new Map<string, { depth: number; oldestMs: number }>();
    if (live !== undefined) {
      queues.set('runs', {
        depth: live.claimable,
        oldestMs:
          live.oldestClaimableSince === null ? 0 : Math.max(0, now - live.oldestClaimableSince),
      });
      m.unknownExecutions.set(live.unknownExecutions);
      const counts = new Map(live.runs.map((r) => [`${r.tenantId}\u0000${r.status}`, r.count]));
      for (const r of live.runs) this.#tenantsSeen.add(r.tenantId);
      // Tenants seen before report 0 rather than vanish, so "no running runs" is a value, not a
      // gap.
      const stalled = new Map<string, number>();
      for (const r of live.runs)
        stalled.set(r.tenantId, (stalled.get(r.tenantId) ?? 0) + r.stalled);
      for (const tenant of this.#tenantsSeen) {
        for (const state of LIVE_STATES)
          m.tenantRuns.set({ tenant, state }, counts.get(`${tenant}\u0000${state}`) ?? 0);
        m.runsStalledNow.set({ tenant }, stalled.get(tenant) ?? 0);
      }
    }
    // Per-tenant pool series are rebuilt at each scrape: a tenant that left a pool's queue drops
    // out of it.
    for (const gauge of [m.poolTenantQueueDepth, m.poolTenantOldestItemAge, m.poolTenantRunning])
      gauge.reset();
    for (const [pool, probes] of this.#pools) {
      const q = queues.get(pool) ?? { depth: 0, oldestMs: 0 };
      let oldestRunMs: number | undefined;
      for (const probe of probes) {
        q.depth += probe.depth();
        q.oldestMs = Math.max(q.oldestMs, probe.oldestWaitMs(now) ?? 0);
        if (probe.oldestRunAgeMs !== undefined)
          oldestRunMs = Math.max(oldestRunMs ?? 0, probe.oldestRunAgeMs(now) ?? 0);
        const snapshot = probe.snapshot?.(now);
        if (snapshot === undefined) continue;
        m.poolLimit.set({ pool }, snapshot.limit);
        m.poolRunning.set({ pool }, snapshot.running);
        for (const t of snapshot.tenants) {
          const labels = { pool, tenant: t.tenantId };
          m.poolTenantQueueDepth.set(labels, t.queued);
          m.poolTenantOldestItemAge.set(labels, (t.oldestWaitMs ?? 0) / 1000);
          m.poolTenantRunning.set(labels, t.running);
        }
      }
      if (oldestRunMs !== undefined) m.poolOldestRunAge.set({ pool }, oldestRunMs / 1000);
      queues.set(pool, q);
    }
    for (const [pool, q] of queues) {
      m.poolQueueDepth.set({ pool }, q.depth);
      m.poolOldestItemAge.set({ pool }, q.oldestMs / 1000);
    }
    const caps = this.#platformCaps;
    if (caps !== undefined) {
      const used = await caps.usage().catch(() => undefined);
      if (used !== undefined) {
        m.platformModelUsage.set({ type: 'tokens' }, used.tokens);
        m.platformModelUsage.set({ type: 'cost_usd' }, used.costUsd);
      }
    }
    // Before the first sandboxed call the node has no manager: every state reads 0.
    const environments = this.#sandboxes?.() ?? NO_ENVIRONMENTS;
    for (const [state, count] of Object.entries(environments))
      m.sandboxEnvironments.set({ state }, count);
    const browser = this.#browser?.();
    for (const state of BROWSER_GAUGE_STATES)
      m.browserSessions.set({ state }, browser?.sessions[state] ?? 0);
    m.browserLeaseAge.set(browser?.oldestLeaseAgeSeconds ?? 0);
  }
}

/**
 * The process's telemetry. Process-wide like the Prometheus target it feeds: one /metrics per
 * process.
 */
export const telemetry = new Telemetry();
