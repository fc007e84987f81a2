// The orchestrator: claims runnable runs under leases, keeps the live ones in memory (the hot-run
// cache), heartbeats their leases, hears about cancels, and hands each run to a RunExecution. It
// holds no run that is only waiting: a parked run costs rows in the store, not memory here.
// Stateless apart from that cache.
import type { McpToolResolver } from './mcp-port.ts';
import { randomUUID } from 'node:crypto';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import {
  LEASE_TTL_MS_DEFAULT,
  MAX_ACTIVE_RUNS_DEFAULT,
  POISON_LEASE_LOSSES_DEFAULT,
} from '../config/defaults.ts';
import { SYSTEM_CLOCK, type Clock, type ClockTimer } from '../domain/clock.ts';
import type { ModelGateway } from '../models/gateway.ts';
import { INLINE_POOL_LIMIT_DEFAULT, PoolRegistry } from '../scheduling/pool-registry.ts';
import { choosePreemptions, PreemptionPacer, type HeldRun } from '../scheduling/preemption.ts';
import type { RunChange, Store } from '../store/store.ts';
import type { RunRecord } from '../domain/records.ts';
import { inThreadHost, type AgentHost } from './agent-host.ts';
import type { AgentRegistry } from './registry.ts';
import { RunExecution } from './run-execution.ts';
import { newRunId } from '../domain/ids.ts';
import { telemetry } from '../telemetry/telemetry.ts';
import type { ToolNode } from '../sdk/types.ts';
import { DETACHED_TOOL_NODE } from './tool-runner.ts';
import type { DelegationIssuer } from '../domain/delegation.ts';

export const CLAIM_BATCH_MAX_RUNS = 256;
export const POLL_INTERVAL_MS_DEFAULT = 250;
/** Most suspects (runs on probation) one process runs at once, however many it has cleared. */
export const PROBATION_CAP_MAX = 64;
/** Claimed runs started per event-loop turn. */
const START_SLICE_RUNS = 16;
/**
 * Runs in memory at most, as a multiple of maxActiveRuns. A run whose effect waits in a resource
 * pool's queue holds no run slot (a saturated pool must not stop runs bound for other pools from
 * being claimed), so more runs than maxActiveRuns may be in memory; this bounds how many.
 */
export const IN_MEMORY_RUNS_FACTOR = 4;

export interface OrchestratorOptions {
  store: Store;
  registry: AgentRegistry;
  gateway: ModelGateway;
  /** Identity of this worker in leases; unique per process. */
  owner?: string;
  leaseTtlMs?: number;
  maxActiveRuns?: number;
  pollIntervalMs?: number;
  inlineToolConcurrency?: number;
  /**
   * The process's effect pools (shared with the gateway); default: a registry of its own
   * (`inlineToolConcurrency`).
   */
  pools?: PoolRegistry;
  /**
   * Lost leases in a row (no commit between) after which a run is quarantined as poison (default
   * 3).
   */
  poisonAfterLeaseLosses?: number;
  /**
   * Preempt batch runs held here when claimable interactive runs have waited this long (ms) and
   * every run slot is held (KEEL_PREEMPT_AFTER_MS; see src/scheduling/preemption.ts). 0 or absent:
   * never.
   */
  preemptAfterMs?: number;
  /** Where agent code runs: in this thread (default) or in isolates (`IsolateHost`). */
  agentHost?: AgentHost;
  /** What tools receive from this node (data directory, sandbox manager); default: neither. */
  toolNode?: ToolNode;
  /** The timeout of a tool call whose tool declares none, in ms (KEEL_TOOL_TIMEOUT_MS). */
  toolTimeoutMs?: number;
  /**
   * Hears each run leaving this process with the status it left in: ended (`succeeded`, `failed`,
   * `cancelled`), parked (`waiting`), preempted (`queued`), or `lost`/`released`. The browser pool
   * reclaims the run's session here: a run that is not executing holds no browser.
   */
  onRunLeft?: (runId: string, status: string) => void;
  /**
   * On a cancel, how long tool calls in flight have after the graceful signal before they are
   * aborted (KEEL_CANCEL_GRACE_MS); an agent's `cancelGraceMs` replaces it.
   */
  cancelGraceMs?: number;
  /** Mints the delegated tokens of tools that declare `delegate` (ctx.delegation); absent: none. */
  delegation?: DelegationIssuer;
  /** Resolves calls of MCP tools (`mcp.<server>.<tool>`); default: none (they fail, typed). */
  mcp?: McpToolResolver;
  /**
   * The time runs see (journal and event times, deadlines, wake-ups, backoff sleeps); default: the
   * system clock.
   */
  clock?: Clock;
  log?: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
}

export class Orchestrator {
  readonly owner: string;
  readonly #store: Store;
  readonly #registry: AgentRegistry;
  readonly #gateway: ModelGateway;
  readonly #toolNode: ToolNode;
  readonly #toolTimeoutMs: number | undefined;
  readonly #onRunLeft: ((runId: string, status: string) => void) | undefined;
  readonly #cancelGraceMs: number | undefined;
  readonly #delegation: DelegationIssuer | undefined;
  readonly #mcp: McpToolResolver | undefined;
  readonly #leaseTtlMs: number;
  readonly #maxActive: number;
  readonly #pollIntervalMs: number;
  readonly #pools: PoolRegistry;
  readonly #ownsPools: boolean;
  readonly #log: NonNullable<OrchestratorOptions['log']>;
  readonly #poisonAfter: number | undefined;
  readonly #host: AgentHost;
  readonly #preemptAfterMs: number;
  readonly #clock: Clock;
  #checkingPreemption = false;
  readonly #preemptPacer: PreemptionPacer;
  readonly #active = new Map<string, RunExecution>();
  #running = false;
  #claiming = false;
  #claimAgain = false;
  /**
   * Runs on probation this process runs (they lost a lease without committing since), until they
   * commit or end.
   */
  readonly #probation = new Set<RunExecution>();
  /** How many suspects may run at once: 1 at start, doubled with each suspect cleared. */
  #probationCap = 1;
  #claimingProbation = false;
  /** A probation claim made while this process ran nothing is in flight: ordinary claims wait. */
  #claimingAlone = false;
  /** Runs claimed and not started yet (started a slice per turn). */
  #awaitingStart = 0;
  /**
   * A last-chance suspect was handed back: claim nothing until this process runs nothing, then run
   * it alone.
   */
  #soloPending = false;
  /** The last-chance suspect running alone, until its first commit or its end. */
  #solo: RunExecution | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #wakeTimer: { at: number; timer: ClockTimer } | undefined;
  #unsubscribe: (() => void) | undefined;
  #drained: Array<() => void> = [];
  /**
   * Runs in memory whose effects wait in a resource pool's queue: they hold no run slot (see
   * #occupied).
   */
  readonly #inPool = new Set<RunExecution>();
  /** Time from an effect's commit to the next dispatch of the same run, in nanoseconds. */
  readonly dispatchLatency: RecordableHistogram = createHistogram();

  constructor(options: OrchestratorOptions) {
    this.#store = options.store;
    this.#registry = options.registry;
    this.#gateway = options.gateway;
    this.#toolNode = options.toolNode ?? DETACHED_TOOL_NODE;
    this.#toolTimeoutMs = options.toolTimeoutMs;
    this.#onRunLeft = options.onRunLeft;
    this.#cancelGraceMs = options.cancelGraceMs;
    this.#delegation = options.delegation;
    this.#mcp = options.mcp;
    this.owner = options.owner ?? `worker-${randomUUID()}`;
    this.#leaseTtlMs = options.leaseTtlMs ?? LEASE_TTL_MS_DEFAULT;
    this.#maxActive = options.maxActiveRuns ?? MAX_ACTIVE_RUNS_DEFAULT;
    this.#pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS_DEFAULT;
    this.#ownsPools = options.pools === undefined;
    this.#pools =
      options.pools ??
      new PoolRegistry({
        telemetry,
        inlineLimit: options.inlineToolConcurrency ?? INLINE_POOL_LIMIT_DEFAULT,
      });
    this.#log = options.log ?? (() => {});
    this.#poisonAfter = options.poisonAfterLeaseLosses;
    this.#host = options.agentHost ?? inThreadHost;
    this.#preemptAfterMs = options.preemptAfterMs ?? 0;
    this.#preemptPacer = new PreemptionPacer(this.#preemptAfterMs);
    this.#clock = options.clock ?? SYSTEM_CLOCK;
  }

  get activeRuns(): number {
    return this.#active.size;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#unsubscribe = this.#store.onChange((changes) => this.#onChanges(changes));
    this.#pools.pool('inline'); // reported from the start, not from the first tool call
    this.#pollTimer = setInterval(() => {
      this.#claim();
      this.#claimProbation();
      this.#checkPreemption();
    }, this.#pollIntervalMs);
    this.#heartbeatTimer = setInterval(
      () => void this.#heartbeat(),
      Math.max(50, Math.floor(this.#leaseTtlMs / 3)),
    );
    this.#claim();
    this.#claimProbation();
  }

  /**
   * Stops claiming, hands live runs back (their committed effects stay committed) and waits for
   * them to let go.
   */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    clearInterval(this.#pollTimer);
    clearInterval(this.#heartbeatTimer);
    if (this.#wakeTimer !== undefined) this.#clock.clearTimeout(this.#wakeTimer.timer);
    this.#unsubscribe?.();
    if (this.#ownsPools) this.#pools.close();
    while (this.#claiming) await new Promise((r) => setImmediate(r));
    if (this.#active.size === 0) return;
    const drained = new Promise<void>((resolve) => this.#drained.push(resolve));
    for (const execution of this.#active.values()) execution.stop({ kind: 'shutdown' });
    await drained;
  }

  #onChanges(changes: readonly RunChange[]): void {
    let runnable = false;
    for (const change of changes) {
      if (change.signal === 'runnable') runnable = true;
      else if (change.signal === 'cancel') {
        const execution = this.#active.get(change.runId);
        if (execution !== undefined) void this.#deliverCancel(execution);
      }
    }
    if (runnable) this.#claim();
  }

  async #deliverCancel(execution: RunExecution): Promise<void> {
    const run = await this.#store.getRun(execution.runId);
    if (run !== null && run.status === 'cancelling' && run.leaseToken === execution.run.leaseToken)
      execution.cancelRequested(run.stateVersion, run.cancelGraceMs);
  }

  /**
   * Claims as many runs as there is room for; coalesces concurrent requests into one more round.
   */
  #claim(): void {
    if (!this.#running || this.#soloPending || this.#solo !== undefined) return;
    if (this.#claiming || this.#claimingAlone) {
      this.#claimAgain = true;
      return;
    }
    const room = Math.min(
      CLAIM_BATCH_MAX_RUNS,
      this.#maxActive - this.#occupied(),
      this.#maxActive * IN_MEMORY_RUNS_FACTOR - this.#active.size - this.#awaitingStart,
    );
    if (room <= 0) return;
    this.#claiming = true;
    this.#claimAgain = false;
    this.#store
      .claimRuns({
        owner: this.owner,
        limit: room,
        leaseMs: this.#leaseTtlMs,
        served: this.#registry.served(),
      })
      .then(async (runs) => {
        if (this.#soloPending || this.#solo !== undefined) {
          // A suspect on its last chance is to run alone, decided while this claim was in flight:
          // hand these back (fresh runs: a loss of theirs here only puts them on probation).
          if (runs.length > 0)
            await this.#store
              .releaseLeases(
                this.owner,
                runs.map((r) => r.id),
              )
              .catch(() => {});
          return;
        }
        this.#awaitingStart += runs.length;
        this.#preemptPacer.claimed(runs);
        this.#startInSlices(runs);
        if (runs.length === room) this.#claimAgain = true;
      })
      .catch((error: unknown) => this.#log('error', 'claim failed', { error: String(error) }))
      .finally(() => {
        this.#claiming = false;
        if (this.#claimAgain) this.#claim();
      });
  }

  /**
   * Runs on probation (suspects: in flight when a process died, so their lease was lost) are
   * claimed apart from ordinary runs, the most suspicious first, and leave probation at their first
   * commit. Their number per process starts at 1 and doubles with each suspect cleared (slow
   * start), so recovery after a crash stays fast while the blame for a repeated crash falls on few
   * runs. A suspect one loss away from quarantine runs *alone*: the process stops claiming, lets
   * its other runs finish or park, then runs only that suspect until its first commit. Its lease is
   * taken only by a process that runs nothing else (the store holds it back, unleased, from one
   * that does), so its last loss cannot happen beside another run. So only a run whose own code
   * kills processes reaches the poison threshold, not its neighbours.
   */
  #claimProbation(): void {
    if (!this.#running || this.#claimingProbation) return;
    for (const x of this.#probation) {
      if (!x.done && !x.hasCommitted) continue;
      this.#probation.delete(x);
      if (x.hasCommitted) this.#probationCap = Math.min(this.#probationCap * 2, PROBATION_CAP_MAX);
    }
    if (this.#solo !== undefined) {
      if (!this.#solo.done && !this.#solo.hasCommitted) return;
      this.#solo = undefined;
      this.#claim();
    }
    if (
      this.#soloPending
        ? this.#busy()
        : this.#probation.size >= this.#probationCap || this.#occupied() >= this.#maxActive
    )
      return;
    // Alone, this process may take a last-chance suspect's lease, and claims nothing else until the
    // answer is in. Not alone, it asks the store to hold such a suspect back unleased: a lease taken
    // now could be lost beside the other runs, and the loss would be blamed on it.
    this.#claimingAlone = !this.#busy();
    this.#claimingProbation = true;
    let more = false;
    this.#store
      .claimRuns({
        owner: this.owner,
        limit: 1,
        leaseMs: this.#leaseTtlMs,
        served: this.#registry.served(),
        probation: true,
        ...(this.#claimingAlone ? {} : { heldAtLosses: this.#poisonThreshold() - 1 }),
      })
      .then(([run]) => {
        if (run === undefined) {
          this.#soloPending = false;
          return;
        }
        if (run.leaseOwner !== this.owner) {
          // Held back on its last chance: drain, then claim it again alone.
          this.#soloPending = true;
          return;
        }
        this.#soloPending = false;
        if (this.#lastChance(run)) {
          this.#solo = this.#startExecution(run);
          this.#probation.add(this.#solo);
          return;
        }
        // Not on its last chance (or past it: quarantined at start, its code never runs).
        this.#probation.add(this.#startExecution(run));
        more = true;
      })
      .catch((error: unknown) =>
        this.#log('error', 'probation claim failed', { error: String(error) }),
      )
      .finally(() => {
        this.#claimingProbation = false;
        this.#claimingAlone = false;
        if (more) this.#claimProbation();
        this.#claim(); // ordinary claims waited for this one, or a suspect now runs beside them
      });
  }

  /**
   * Starts claimed runs a slice per event-loop turn: a batch of hundreds (a restart takes back
   * every run at once) would otherwise load journals and replay in one turn while HTTP requests and
   * heartbeats wait behind it.
   */
  #startInSlices(runs: RunRecord[]): void {
    if (!this.#running) {
      // Stopped in between: hand the rest back at once rather than let their leases expire.
      this.#awaitingStart -= runs.length;
      void this.#store
        .releaseLeases(
          this.owner,
          runs.map((r) => r.id),
        )
        .catch(() => {});
      return;
    }
    const slice = runs.slice(0, START_SLICE_RUNS);
    this.#awaitingStart -= slice.length;
    for (const run of slice) this.#startExecution(run);
    if (runs.length > START_SLICE_RUNS)
      setImmediate(() => this.#startInSlices(runs.slice(START_SLICE_RUNS)));
  }

  /**
   * Once per poll, and only when every slot is held by runs some of which are batch: asks the store
   * how many claimable interactive runs have waited past the target (one indexed query, whatever
   * the number of runs held) and preempts that many batch runs, less those already asked to yield.
   * Each yields at its next effect boundary; the slot it frees is claimed at once (interactive runs
   * go first across tenants, see fair-share.ts). When a round let no interactive run in here (the
   * fair order gave the slots to other tenants' work), preemption pauses (nextPauseMs) instead of
   * churning batch runs. Several processes may each preempt for the same waiting runs when their
   * checks coincide: the overshoot is bounded by one round of preemptions per process, and the
   * extra runs are claimed again.
   */
  #checkPreemption(): void {
    if (
      !this.#running ||
      this.#preemptAfterMs <= 0 ||
      this.#checkingPreemption ||
      this.#solo !== undefined
    )
      return;
    if (!this.#slotsFull() || this.#preemptPacer.paused(this.#clock.now())) return;
    const held = this.#heldRuns();
    const candidates = held.filter((h) => h.priority === 'batch' && !h.exempt).length;
    if (candidates === 0) return;
    const pending = this.#pendingPreemptions();
    const now = this.#clock.now();
    this.#checkingPreemption = true;
    this.#store
      .starvedInteractive({
        cutoff: now - this.#preemptAfterMs,
        served: this.#registry.served(),
        limit: candidates + pending,
      })
      .then(({ count, oldestSince }) => {
        const pendingNow = this.#pendingPreemptions();
        const victims = choosePreemptions({
          starved: count,
          pending: pendingNow,
          full: this.#slotsFull(),
          held: this.#heldRuns(),
        });
        if (victims.length === 0) return;
        if (!this.#preemptPacer.startRound(this.#clock.now(), pendingNow)) {
          this.#log(
            'info',
            'preemption paused: the slots it freed went to other work (fair order across tenants)',
            { pauseMs: this.#preemptPacer.pauseMs, starved: count },
          );
          return;
        }
        const waitedMs = oldestSince === null ? 0 : Math.max(0, now - oldestSince);
        for (const id of victims) this.#active.get(id)?.preempt({ waitedMs });
        this.#log('info', 'preempting batch runs for interactive runs waiting too long', {
          runs: victims.length,
          starved: count,
          waitedMs,
        });
      })
      .catch((error: unknown) =>
        this.#log('warn', 'preemption check failed', { error: String(error) }),
      )
      .finally(() => {
        this.#checkingPreemption = false;
      });
  }

  /**
   * Run slots in use: runs in memory and about to start, except those waiting for a resource pool.
   */
  #occupied(): number {
    return this.#active.size - this.#inPool.size + this.#awaitingStart;
  }

  #slotsFull(): boolean {
    return this.#occupied() >= this.#maxActive;
  }

  #pendingPreemptions(): number {
    let n = 0;
    for (const x of this.#active.values()) if (x.preemptPending) n++;
    return n;
  }

  #heldRuns(): HeldRun[] {
    return [...this.#active.values()].map((x) => ({
      runId: x.runId,
      priority: x.run.priority,
      positions: x.positions,
      startedAt: x.startedAt,
      // A run waiting in a pool holds no run slot: preempting it would free none.
      exempt:
        x.preemptPending ||
        x.settling ||
        x.stopped !== undefined ||
        this.#probation.has(x) ||
        this.#inPool.has(x),
    }));
  }

  /**
   * Whether anything else runs or is about to: runs in memory, claimed runs not started yet, an
   * ordinary claim in flight (its runs would start beside a suspect meant to run alone, and die
   * with it).
   */
  #busy(): boolean {
    return this.#active.size > 0 || this.#awaitingStart > 0 || this.#claiming;
  }

  #poisonThreshold(): number {
    return this.#poisonAfter ?? POISON_LEASE_LOSSES_DEFAULT;
  }

  /** One more loss would quarantine it (a run at the threshold is quarantined at start instead). */
  #lastChance(run: RunRecord): boolean {
    return run.leaseLosses === this.#poisonThreshold() - 1;
  }

  #startExecution(run: RunRecord): RunExecution {
    const agent = this.#registry.get(run.agent, run.agentVersion);
    const execution = new RunExecution(
      run,
      agent,
      this.#store,
      {
        onDone: (x, outcome) => this.#onDone(x, outcome.status, outcome.wakeAt ?? null),
        onPoolWait: (x, waiting) => {
          if (!waiting) this.#inPool.delete(x);
          else if (this.#active.get(x.runId) === x) {
            this.#inPool.add(x);
            this.#claim(); // it gave its run slot back while it waits
          }
        },
        onDispatch: (_kind, ms) => this.dispatchLatency.record(Math.max(1, Math.round(ms * 1e6))),
        log: this.#log,
        toolFor: (name) => this.#registry.tool(name),
        onFirstCommit: (x) => {
          if (this.#probation.has(x) || x === this.#solo) this.#claimProbation();
        },
        ...(this.#poisonAfter !== undefined ? { poisonAfterLeaseLosses: this.#poisonAfter } : {}),
        ...(this.#cancelGraceMs !== undefined ? { cancelGraceMs: this.#cancelGraceMs } : {}),
      },
      this.#clock,
    );
    // Re-claimed while an older execution is still here (its lease expired, e.g. a blocked event
    // loop): the old one is fenced off by the new token anyway; drop it now so it stops
    // dispatching.
    const replaced = this.#active.get(run.id);
    if (replaced !== undefined) {
      replaced.stop({ kind: 'lost' });
      this.#inPool.delete(replaced);
    }
    this.#active.set(run.id, execution);
    const deps = {
      gateway: this.#gateway,
      registry: this.#registry,
      pools: this.#pools,
      newRunId,
      toolNode: this.#toolNode,
      toolTimeoutMs: this.#toolTimeoutMs,
      delegation: this.#delegation,
      mcp: this.#mcp,
    };
    void execution
      .start((x) => this.#host.run(x, deps))
      .catch((error: unknown) => {
        this.#log('error', 'execution crashed', { runId: run.id, error: String(error) });
        execution.stop({ kind: 'lost' });
      });
    return execution;
  }

  #onDone(execution: RunExecution, status: string, wakeAt: number | null): void {
    try {
      this.#onRunLeft?.(execution.runId, status);
    } catch (error) {
      this.#log('warn', 'onRunLeft failed', { runId: execution.runId, error: String(error) });
    }
    if (this.#active.get(execution.runId) === execution) this.#active.delete(execution.runId);
    this.#inPool.delete(execution);
    if (this.#probation.has(execution) || this.#soloPending) this.#claimProbation();
    if (status === 'waiting' && wakeAt !== null) this.#scheduleWake(wakeAt);
    if (status === 'queued') this.#claim();
    if (this.#active.size === 0) for (const resolve of this.#drained.splice(0)) resolve();
    else if (this.#running) this.#claim();
  }

  /** A run parked on a timer: claim again when it is due instead of waiting for the next poll. */
  #scheduleWake(wakeAt: number): void {
    if (!this.#running) return;
    if (
      this.#wakeTimer !== undefined &&
      this.#wakeTimer.at <= wakeAt &&
      this.#wakeTimer.at > this.#clock.now()
    )
      return;
    if (this.#wakeTimer !== undefined) this.#clock.clearTimeout(this.#wakeTimer.timer);
    const timer = this.#clock.setTimeout(
      () => {
        this.#wakeTimer = undefined;
        this.#claim();
      },
      Math.max(0, wakeAt - this.#clock.now()),
    );
    this.#wakeTimer = { at: wakeAt, timer };
  }

  async #heartbeat(): Promise<void> {
    const ids = [...this.#active.keys()];
    if (ids.length === 0) return;
    try {
      const { held } = await this.#store.heartbeat(this.owner, ids, this.#leaseTtlMs);
      const heldById = new Map(held.map((h) => [h.id, h]));
      for (const id of ids) {
        const execution = this.#active.get(id);
        if (execution === undefined || execution.settling) continue;
        const h = heldById.get(id);
        if (h === undefined) execution.stop({ kind: 'lost' });
        else if (h.status === 'cancelling')
          execution.cancelRequested(h.stateVersion, h.cancelGraceMs);
      }
    } catch (error) {
      this.#log('warn', 'heartbeat failed', { error: String(error) });
    }
  }
}
