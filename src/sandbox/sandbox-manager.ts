// Owns every run's environment on this node: creates it (from a warm pool or cold), restores its
// workspace from the run's latest manifest, runs calls one at a time per run, snapshots the
// workspace after each call, and applies the profile's lifecycle policy while the environment is
// idle. It measures GiB·s, CPU, peaks and cold/warm starts per run and reports memory-time as it
// accrues through the callback it is given (it imports no telemetry). It never runs a command
// outside a driver, and never keeps an environment after endRun() or close().
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { KeelError } from '../domain/keel-error.ts';
import { emptyAccounting, MemoryMeter, type RunAccounting } from './accounting.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import type {
  EnvironmentSpec,
  SandboxDriver,
  SandboxEnvironment,
  ServiceProcess,
} from './driver.ts';
import { ENV_STATE, transition, type EnvEvent, type EnvState } from './environment-state.ts';
import type { EgressNarrowing } from '../domain/egress-scope.ts';
import type { EgressProxy, RevealSecret, SecretUse } from './egress/egress-proxy.ts';
import { EGRESS_SOCKET_NAME } from './egress/sandbox-relay.ts';
import { GvisorDriver } from './gvisor-driver.ts';
import { ImageCache } from './images/image-cache.ts';
import {
  decideAuto,
  idleActionOf,
  type AutoDecision,
  type IdleAction,
} from './lifecycle-policy.ts';
import { restoreWorkspace, snapshotWorkspace } from './manifest.ts';
import { SnapshotWorker } from './snapshot-worker.ts';
import { NamespaceDriver } from './namespace-driver.ts';
import { ProcessDriver } from './process-driver.ts';
import type { SandboxProfile } from './profile.ts';
import { prewarmDelayMs, prewarmHoldMs } from './prewarm.ts';
import { SharedMount, type SharedSpaceReader } from './shared-mount.ts';
import { ownedEnvironmentId, sweepStaleSandboxes } from './stale-sweep.ts';
import type { Tier } from './tiers.ts';
import { WarmPool } from './warm-pool.ts';

/** Weight of the newest measurement in the moving averages of idle gaps and transition times. */
const EWMA_WEIGHT = 0.3;
const GIB = 1024 ** 3;

interface RunEnvironment {
  profile: SandboxProfile;
  /** The run's tenant, when the caller named it: memory-time is reported per tenant. */
  tenantId: string | undefined;
  /** Memory-time already handed to `onEnvironmentTime`. */
  reportedGibSeconds: number;
  env: SandboxEnvironment | undefined;
  state: EnvState;
  meter: MemoryMeter | undefined;
  idleSince: number | undefined;
  queue: Promise<unknown>;
  accounting: RunAccounting;
  decisions: AutoDecision[];
  /** How long the last pause took; added to the resume's time as the pause's measured cost. */
  pauseSeconds: number;
  /** Pending pre-warm (or its expiry) of a rebuild-policy environment. */
  prewarmTimer: NodeJS.Timeout | undefined;
  /** Reclaims a kept or paused environment left unused past the profile's `limits.idleMs`. */
  idleTimer: NodeJS.Timeout | undefined;
  prewarmed: boolean;
  ended: boolean;
}

export interface CallInfo {
  cold: boolean;
  /** Manifest the workspace was restored from, when the environment was (re)built. */
  restoredFrom: string | undefined;
}

/**
 * How a call got its environment: built from nothing (`cold`), taken from the warm pool (`warm`),
 * or a paused one resumed (`resumed`). A call that finds its environment live starts nothing.
 */
export type SandboxStart = 'cold' | 'warm' | 'resumed';

/** A start or a reclaim of an environment, with how long it took (for the node's metrics). */
export type SandboxLifecycleEvent =
  | { kind: 'started'; tier: Tier; start: SandboxStart; seconds: number }
  | { kind: 'reclaimed'; tier: Tier; ok: boolean; seconds: number };

/** The node's environments right now, by what they are doing. */
export interface EnvironmentCounts {
  /** Running a call. */
  busy: number;
  /** Live between calls (kept or resident). */
  idle: number;
  paused: number;
  /** Being torn down or handed back to a warm pool. */
  reclaiming: number;
  /** Started ahead of need in warm pools. */
  warm: number;
  /** Long-lived services (stdio MCP servers). */
  service: number;
}

/** Memory-time a run's environment accrued since the last report, in GiB·s. */
export interface EnvironmentTime {
  runId: string;
  tenantId: string | undefined;
  gibSeconds: number;
}

export interface SandboxManagerOptions {
  /** Where environments and their workspaces live (the node's `<dataDir>/sandboxes`). */
  root: string;
  /** Workspace manifests and blobs, shared by every node that may pick the run up. */
  artifacts: ArtifactStore;
  drivers?: Partial<Record<Tier, SandboxDriver>>;
  /**
   * Called after each call and when an environment goes away, with the memory-time accrued since
   * the last report.
   */
  onEnvironmentTime?: (time: EnvironmentTime) => void;
  /** Each environment start and reclaim, with its duration and outcome. */
  onLifecycle?: (event: SandboxLifecycleEvent) => void;
  /**
   * The sweep of crashed processes' leftovers, when the caller already started it (a node starts
   * it at attach, before any call); otherwise the manager starts one itself.
   */
  swept?: Promise<unknown>;
  /**
   * Keel's egress proxy on this node: profiles with a network allowlist reach the network only
   * through it (without it they are refused).
   */
  egress?: EgressProxy;
  /** The current value of a tenant's `secret:NAME`, for profiles that declare secret variables. */
  revealSecret?: RevealSecret;
  /**
   * The tenant's and the run's egress lists (those that exist), read at the start of each call of a
   * profile with a network allowlist: they narrow the profile's for that call's connections. A
   * failure to read them fails the call (never a connection under a wider list than meant).
   */
  egressNarrowings?: (tenantId: string, runId: string) => Promise<EgressNarrowing[]>;
  /**
   * The store's shared spaces, for profiles that mount the run tree's space (`sharedSpace`):
   * refreshed into the environment before each call (without it such profiles are refused).
   */
  sharedSpace?: SharedSpaceReader;
  /**
   * Built environment images (the caller keeps and closes it); default: a cache in `images/` beside
   * `root`, owned and closed by the manager.
   */
  images?: ImageCache;
}

/** A long-lived program to run in its own environment (see openService). */
export interface ServiceRequest {
  /** Whose service it is: its egress connections and secret uses are recorded under the tenant. */
  tenantId: string;
  /** Names the service in egress records and audit entries (`mcp:<server>`). */
  label: string;
  argv: string[];
  env?: Record<string, string> | undefined;
  readOnlyBinds?: EnvironmentSpec['readOnlyBinds'];
  workspaceBind?: EnvironmentSpec['workspaceBind'];
}

export interface SandboxService {
  readonly process: ServiceProcess;
  readonly environmentId: string;
  /** The uid the program runs as. */
  readonly uid: number;
  /** Ends the program and tears its environment down (cgroup, workspace, egress). Idempotent. */
  close(): Promise<void>;
}

export interface CallOutcome<T> {
  value: T;
  /**
   * The workspace manifest after the call: a new snapshot, or for a call that does not snapshot,
   * the run's latest one (undefined before its first snapshot).
   */
  manifestSha256: string | undefined;
  cold: boolean;
}

export interface CallOptions {
  /** Labels the run's memory-time in reports, and the call's egress records. */
  tenantId?: string;
  /** The tool execution making the call: its egress connections are recorded under it. */
  executionId?: string;
  /**
   * Snapshot the workspace after the call (default true). A call that only reads the workspace
   * passes false: it commits no new manifest, so reading costs no walk of the workspace and leaves
   * the run's latest snapshot as it was.
   */
  snapshot?: boolean;
}

export class SandboxManager {
  private readonly drivers: Record<Tier, SandboxDriver>;
  private readonly artifacts: ArtifactStore;
  private readonly runs = new Map<string, RunEnvironment>();
  private readonly services = new Set<SandboxService>();
  private readonly pools = new Map<string, WarmPool>();
  /** Measured per tier, in seconds: pause+resume, and destroy+create+restore. */
  private readonly transitionSeconds = new Map<string, number>();
  private readonly idleSeconds = new Map<string, number>();
  /** Leftovers of crashed Keel processes, removed before this node creates its first sandbox. */
  private readonly swept: Promise<unknown>;
  private readonly onEnvironmentTime: ((time: EnvironmentTime) => void) | undefined;
  private readonly onLifecycle: ((event: SandboxLifecycleEvent) => void) | undefined;
  /** Releases under way (destroy or give-back not finished). */
  private reclaiming = 0;
  /** Walks workspaces off the main thread and remembers what it hashed per workspace. */
  private readonly snapshots = new SnapshotWorker();
  private readonly root: string;
  private readonly egress: EgressProxy | undefined;
  private readonly revealSecret: SandboxManagerOptions['revealSecret'];
  private readonly egressNarrowings: SandboxManagerOptions['egressNarrowings'];
  private readonly sharedSpace: SharedSpaceReader | undefined;
  /** Materialized shared spaces by environment id (profiles with `sharedSpace`). */
  private readonly sharedMounts = new Map<string, SharedMount>();
  /** Environment images, built on a sandbox's first need (bounded wait) or ahead of time. */
  readonly images: ImageCache;
  private readonly ownsImages: boolean;

  constructor(options: SandboxManagerOptions) {
    this.artifacts = options.artifacts;
    this.root = options.root;
    this.egress = options.egress;
    this.revealSecret = options.revealSecret;
    this.egressNarrowings = options.egressNarrowings;
    this.sharedSpace = options.sharedSpace;
    this.onEnvironmentTime = options.onEnvironmentTime;
    this.onLifecycle = options.onLifecycle;
    this.drivers = {
      process: options.drivers?.process ?? new ProcessDriver(options.root),
      namespace: options.drivers?.namespace ?? new NamespaceDriver(options.root),
      gvisor: options.drivers?.gvisor ?? new GvisorDriver(options.root),
    };
    this.swept = options.swept ?? sweepStaleSandboxes(options.root).catch(() => undefined);
    this.ownsImages = options.images === undefined;
    this.images = options.images ?? new ImageCache({ dir: join(dirname(options.root), 'images') });
  }

  /** The tier's driver, or a clear error naming the package to install. */
  driverFor(tier: Tier): SandboxDriver {
    const driver = this.drivers[tier];
    const availability = driver.availability();
    if (!availability.ok)
      throw new KeelError(
        'sandbox_unavailable',
        `sandbox tier ${tier} is unavailable: ${availability.reason} (fix: ${availability.fix})`,
        { details: { tier } },
      );
    return driver;
  }

  /**
   * Runs `fn` in the run's environment under the profile's policy, then snapshots the workspace
   * (unless `snapshot: false`). Calls of one run queue.
   */
  call<T>(
    runId: string,
    profile: SandboxProfile,
    fn: (env: SandboxEnvironment, info: CallInfo) => Promise<T>,
    options: CallOptions = {},
  ): Promise<CallOutcome<T>> {
    const record = this.recordOf(runId, profile);
    record.tenantId ??= options.tenantId;
    const snapshot = options.snapshot ?? true;
    if (snapshot) this.snapshots.prepare();
    const next = record.queue.then(() =>
      this.callNow(runId, record, fn, snapshot, options.executionId),
    );
    record.queue = next.catch(() => undefined);
    return next;
  }

  private recordOf(runId: string, profile: SandboxProfile): RunEnvironment {
    let record = this.runs.get(runId);
    if (record === undefined) {
      record = {
        profile,
        tenantId: undefined,
        reportedGibSeconds: 0,
        env: undefined,
        state: ENV_STATE.released,
        meter: undefined,
        idleSince: undefined,
        queue: Promise.resolve(),
        accounting: emptyAccounting(),
        decisions: [],
        pauseSeconds: 0,
        prewarmTimer: undefined,
        idleTimer: undefined,
        prewarmed: false,
        ended: false,
      };
      this.runs.set(runId, record);
    }
    return record;
  }

  private async callNow<T>(
    runId: string,
    record: RunEnvironment,
    fn: (env: SandboxEnvironment, info: CallInfo) => Promise<T>,
    snapshot: boolean,
    executionId: string | undefined,
  ): Promise<CallOutcome<T>> {
    await this.swept;
    clearTimeout(record.prewarmTimer);
    clearTimeout(record.idleTimer);
    record.prewarmed = false;
    if (record.idleSince !== undefined)
      this.observeIdle(record.profile, (performance.now() - record.idleSince) / 1000);
    // Read before the environment is touched: a failure leaves it as it was.
    const narrowings =
      record.profile.network.allow.length > 0 && this.egressNarrowings !== undefined
        ? await this.egressNarrowings(record.tenantId ?? '', runId)
        : [];
    const info = await this.ready(runId, record);
    const env = record.env!;
    this.move(record, 'call_started');
    const started = performance.now();
    const before = env.counters().cpuSeconds;
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    // Connections through the sandbox's proxy socket belong to this call, and only while it runs.
    this.egress?.bind(env.id, {
      tenantId: record.tenantId ?? '',
      runId,
      executionId,
      rules: record.profile.network.allow,
      narrowings,
    });
    try {
      if (record.profile.sharedSpace) await this.refreshShared(runId, record, env);
      outcome = { ok: true, value: await fn(env, info) };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      this.egress?.unbind(env.id);
    }
    record.accounting.executions++;
    record.accounting.wallMs += performance.now() - started;
    record.accounting.cpuSeconds += Math.max(0, safeCpu(env) - before);
    this.move(record, 'call_ended');
    if (!outcome.ok) {
      // A failed or cancelled call still leaves the environment to the policy (one-shot ones must
      // not linger); its workspace is not snapshotted, so the next call starts from the last call
      // that succeeded.
      await this.afterCall(runId, record).catch(() => this.release(record));
      record.idleSince = performance.now();
      this.armIdleDeadline(runId, record);
      this.reportTime(runId, record);
      throw outcome.error;
    }
    let manifestSha256: string | undefined;
    try {
      manifestSha256 = snapshot
        ? await this.snapshot(runId, record, env)
        : await this.artifacts.getRef(runRef(runId));
    } catch (error) {
      // A workspace over its limits (workspace_limit) fails the call; the environment still goes
      // to its policy, and the run's latest manifest stays the last good one.
      this.snapshots.forget(env.workspaceDir);
      await this.afterCall(runId, record).catch(() => this.release(record));
      record.idleSince = performance.now();
      this.reportTime(runId, record);
      throw error;
    }
    await this.afterCall(runId, record);
    record.idleSince = performance.now();
    this.armIdleDeadline(runId, record);
    this.reportTime(runId, record);
    return { value: outcome.value, manifestSha256, cold: info.cold };
  }

  /**
   * Makes the run's environment usable: resume a paused one, or build one and restore the latest
   * manifest.
   */
  private async ready(runId: string, record: RunEnvironment): Promise<CallInfo> {
    if (record.state === ENV_STATE.paused) {
      const started = performance.now();
      await record.env!.resume();
      // The cost of a pause is both halves: pausing now, and resuming later.
      this.observeTransition(
        `${record.profile.tier}:pause`,
        record.pauseSeconds + (performance.now() - started) / 1000,
      );
      this.move(record, 'resumed');
      record.accounting.warmStarts++;
      this.started(record, 'resumed', started);
      return { cold: false, restoredFrom: undefined };
    }
    if (record.env !== undefined) {
      record.accounting.warmStarts++;
      return { cold: false, restoredFrom: undefined };
    }
    // Before the clock starts: building an image is not a sandbox's start-up time.
    await this.images.ensure(record.profile.image);
    const started = performance.now();
    const pooled = this.poolFor(record.profile)?.take();
    const { env, manifest } = await withStartupDeadline(
      record.profile,
      (late) => this.build(runId, record, pooled, late),
      (lateEnv) => this.reclaim(record.profile.tier, () => this.discard(lateEnv)),
    );
    if (manifest !== undefined)
      this.observeTransition(
        `${record.profile.tier}:rebuild`,
        (performance.now() - started) / 1000,
      );
    record.env = env;
    this.move(record, 'built');
    record.meter = new MemoryMeter(env, record.accounting);
    if (pooled === undefined) record.accounting.coldStarts++;
    else record.accounting.warmStarts++;
    this.started(record, pooled === undefined ? 'cold' : 'warm', started);
    return { cold: pooled === undefined, restoredFrom: manifest };
  }

  /**
   * Creates (or takes from the pool) the run's environment, opens its egress and restores the run's
   * latest workspace. `late()` says the start-up deadline passed meanwhile: the caller has given up.
   */
  private async build(
    runId: string,
    record: RunEnvironment,
    pooled: SandboxEnvironment | undefined,
    late: () => boolean,
  ): Promise<{ env: SandboxEnvironment; manifest: string | undefined }> {
    const env = pooled ?? (await this.create(record.profile));
    if (late()) return { env, manifest: undefined };
    if (record.profile.network.allow.length > 0) {
      try {
        await this.egress!.open(env.id, join(this.egressDir(env.id), EGRESS_SOCKET_NAME));
      } catch (error) {
        await env.destroy();
        throw new KeelError('sandbox_failed', `could not open the egress proxy of ${env.id}`, {
          cause: error,
        });
      }
    }
    const manifest = await this.artifacts.getRef(runRef(runId));
    try {
      if (manifest !== undefined)
        await restoreWorkspace(env.workspaceDir, this.artifacts, manifest, env.uid);
    } catch (error) {
      await env.destroy();
      throw new KeelError(
        'sandbox_failed',
        `could not restore the workspace of run ${runId} from manifest ${manifest}`,
        { cause: error },
      );
    }
    return { env, manifest };
  }

  /** A new environment of the profile; what its spec made on the host goes if it fails. */
  private async create(profile: SandboxProfile): Promise<SandboxEnvironment> {
    const spec = this.specFor(profile);
    try {
      return await this.driverFor(profile.tier).create(spec);
    } catch (error) {
      await this.removeShared(spec.id).catch(() => undefined);
      throw error;
    }
  }

  /** Tears down an environment no record holds (one that started too late). */
  private async discard(env: SandboxEnvironment): Promise<void> {
    try {
      await env.destroy();
    } finally {
      await this.closeEgress(env.id).catch(() => undefined);
      await this.removeShared(env.id).catch(() => undefined);
    }
  }

  /**
   * Arms the idle deadline of a kept or paused environment: unused past `limits.idleMs`, it is
   * reclaimed in the run's call queue (never under a call), its workspace left in the manifest.
   */
  private armIdleDeadline(runId: string, record: RunEnvironment): void {
    const idleMs = record.profile.limits.idleMs;
    if (idleMs === undefined || record.env === undefined || record.ended) return;
    clearTimeout(record.idleTimer);
    record.idleTimer = setTimeout(() => {
      const next = record.queue.then(async () => {
        if (record.env === undefined || record.state === ENV_STATE.busy) return;
        await this.releaseIdleOrPaused(record);
        this.reportTime(runId, record);
      });
      record.queue = next.catch(() => undefined);
    }, idleMs);
    record.idleTimer.unref();
  }

  /** Releases the run's environment whether idle or paused (a paused one is destroyed as it is). */
  private async releaseIdleOrPaused(record: RunEnvironment): Promise<void> {
    const env = record.env;
    if (env === undefined) return;
    if (record.state !== ENV_STATE.paused) return this.release(record);
    record.env = undefined;
    record.meter?.stop();
    record.meter = undefined;
    this.snapshots.forget(env.workspaceDir);
    record.state = transition(record.state, 'released');
    await this.reclaim(record.profile.tier, () => this.discard(env)).catch(() => undefined);
  }

  private async snapshot(
    runId: string,
    record: RunEnvironment,
    env: SandboxEnvironment,
  ): Promise<string> {
    // Frozen while walked: nothing in the sandbox can swap a file for a link under the snapshot.
    env.freezeCpu();
    try {
      const limits = record.profile.limits;
      const { manifestSha256 } = await snapshotWorkspace(
        env.workspaceDir,
        this.artifacts,
        {
          fileBytes: limits.fileBytes,
          workspaceBytes: limits.diskBytes,
          maxFiles: limits.maxFiles,
        },
        this.snapshots,
      );
      await this.artifacts.setRef(runRef(runId), manifestSha256);
      return manifestSha256;
    } finally {
      env.thawCpu();
    }
  }

  private async afterCall(runId: string, record: RunEnvironment): Promise<void> {
    const policy = record.profile.policy;
    const action: IdleAction | 'destroy' =
      policy === 'auto' ? this.autoAction(record) : idleActionOf(policy);
    if (action === 'keep') return;
    if (action === 'pause') {
      const started = performance.now();
      await record.env!.pause();
      record.pauseSeconds = (performance.now() - started) / 1000;
      record.meter?.sample();
      this.move(record, 'paused');
      return;
    }
    await this.release(record);
    if (action === 'rebuild' && record.profile.prewarm) this.schedulePrewarm(runId, record);
  }

  /**
   * Rebuilds the environment just before the next call is expected; releases it again if that call
   * does not come.
   */
  private schedulePrewarm(runId: string, record: RunEnvironment): void {
    const expectedIdle =
      this.idleSeconds.get(record.profile.name) ?? record.profile.auto.expectedIdleSeconds;
    const rebuildSeconds = this.transitionSeconds.get(`${record.profile.tier}:rebuild`) ?? 0;
    const enqueue = (work: () => Promise<unknown>) => {
      record.queue = record.queue.then(work).catch(() => undefined);
    };
    record.prewarmTimer = setTimeout(
      () =>
        enqueue(async () => {
          if (record.ended || record.env !== undefined) return;
          await this.ready(runId, record);
          record.prewarmed = true;
          record.prewarmTimer = setTimeout(
            () =>
              enqueue(async () => {
                if (record.prewarmed && record.state === ENV_STATE.idle) await this.release(record);
                record.prewarmed = false;
              }),
            prewarmHoldMs(expectedIdle),
          );
          record.prewarmTimer.unref();
        }),
      prewarmDelayMs(expectedIdle, rebuildSeconds),
    );
    record.prewarmTimer.unref();
  }

  private autoAction(record: RunEnvironment): IdleAction {
    const profile = record.profile;
    const env = record.env!;
    const price = profile.auto.transitionPricePerSecond;
    const measuredPause = this.transitionSeconds.get(`${profile.tier}:pause`);
    const measuredRebuild = this.transitionSeconds.get(`${profile.tier}:rebuild`);
    const decision = decideAuto({
      memoryPricePerGiBSecond: profile.auto.memoryPricePerGiBSecond,
      memoryGiB: safeMemory(env) / GIB,
      expectedIdleSeconds: this.idleSeconds.get(profile.name) ?? profile.auto.expectedIdleSeconds,
      pauseFreesMemory: env.pauseFreesMemory,
      pauseCost:
        profile.auto.pauseCost ?? (measuredPause === undefined ? undefined : measuredPause * price),
      rebuildCost: profile.auto.rebuildCost ?? (measuredRebuild ?? 0.1) * price,
    });
    record.decisions.push(decision);
    return decision.action;
  }

  /**
   * Destroys (or returns to its pool) the run's environment; its files live on in the latest
   * manifest.
   */
  private async release(record: RunEnvironment): Promise<void> {
    const env = record.env;
    if (env === undefined) return;
    record.meter?.stop();
    record.meter = undefined;
    record.env = undefined;
    this.snapshots.forget(env.workspaceDir);
    this.move(record, 'released');
    const pool = this.poolFor(record.profile);
    await this.reclaim(record.profile.tier, async () => {
      if (pool !== undefined) await pool.giveBack(env);
      else await env.destroy();
      await this.closeEgress(env.id);
      await this.removeShared(env.id);
    });
  }

  /** Tears an environment down (`teardown`), counted as reclaiming meanwhile and reported. */
  private async reclaim(tier: Tier, teardown: () => Promise<void>): Promise<void> {
    const started = performance.now();
    this.reclaiming++;
    let ok = false;
    try {
      await teardown();
      ok = true;
    } finally {
      this.reclaiming--;
      this.onLifecycle?.({
        kind: 'reclaimed',
        tier,
        ok,
        seconds: (performance.now() - started) / 1000,
      });
    }
  }

  private started(record: RunEnvironment, start: SandboxStart, since: number): void {
    this.onLifecycle?.({
      kind: 'started',
      tier: record.profile.tier,
      start,
      seconds: (performance.now() - since) / 1000,
    });
  }

  /** The node's environments right now, by state (for the environments gauge). */
  environmentCounts(): EnvironmentCounts {
    const counts: EnvironmentCounts = {
      busy: 0,
      idle: 0,
      paused: 0,
      reclaiming: this.reclaiming,
      warm: 0,
      service: this.services.size,
    };
    for (const record of this.runs.values()) {
      if (record.state === ENV_STATE.busy) counts.busy++;
      else if (record.state === ENV_STATE.idle && record.env !== undefined) counts.idle++;
      else if (record.state === ENV_STATE.paused) counts.paused++;
    }
    for (const pool of this.pools.values()) counts.warm += pool.available;
    return counts;
  }

  private egressDir(envId: string): string {
    return join(this.root, 'egress', envId);
  }

  /** The host directory of an environment's shared-space copy (swept with it after a crash). */
  private sharedBase(envId: string): string {
    return join(this.root, `${envId}.shared`);
  }

  /**
   * Brings the environment's /shared to the current versions of the run tree's shared files: the
   * files that changed since its last call are copied in, removed ones are deleted.
   */
  private async refreshShared(
    runId: string,
    record: RunEnvironment,
    env: SandboxEnvironment,
  ): Promise<void> {
    const mount = this.sharedMounts.get(env.id);
    if (mount === undefined || this.sharedSpace === undefined)
      throw new KeelError(
        'sandbox_failed',
        `profile ${record.profile.name} mounts the shared space, but environment ${env.id} has none`,
      );
    await mount.refresh(this.sharedSpace, record.tenantId ?? '', runId);
  }

  private async removeShared(envId: string): Promise<void> {
    const mount = this.sharedMounts.get(envId);
    this.sharedMounts.delete(envId);
    await mount?.destroy();
  }

  private async closeEgress(envId: string): Promise<void> {
    if (this.egress === undefined) return;
    await this.egress.close(envId);
    await rm(this.egressDir(envId), { recursive: true, force: true });
  }

  /**
   * The variables a profile declares from secrets (`secrets.env`), revealed now for the tenant:
   * they reach the program through the tier's environment carrier, never a command line.
   */
  secretEnv(
    tenantId: string,
    profile: SandboxProfile,
    use: { runId: string; executionId: string | null } = { runId: '', executionId: null },
  ): Promise<Record<string, string>> {
    return this.revealAll(tenantId, profile, profile.secrets.env, { ...use, via: 'env' });
  }

  /**
   * The files a profile declares from secrets (`secrets.files`: sandbox path → value), revealed
   * now for the tenant; placed by withSecretFiles (secret-files.ts), never on a command line.
   */
  secretFiles(
    tenantId: string,
    profile: SandboxProfile,
    use: { runId: string; executionId: string | null } = { runId: '', executionId: null },
  ): Promise<Record<string, string>> {
    return this.revealAll(tenantId, profile, profile.secrets.files, { ...use, via: 'file' });
  }

  private async revealAll(
    tenantId: string,
    profile: SandboxProfile,
    declared: Record<string, string>,
    use: SecretUse,
  ): Promise<Record<string, string>> {
    const entries = Object.entries(declared);
    if (entries.length === 0) return {};
    if (this.revealSecret === undefined)
      throw new KeelError(
        'secrets_unconfigured',
        `profile ${profile.name} declares secret ${use.via === 'env' ? 'variables' : 'files'}, but this node has no secrets`,
      );
    const reveal = this.revealSecret;
    return Object.fromEntries(
      await Promise.all(
        entries.map(async ([key, ref]) => [key, await reveal(tenantId, ref, use)] as const),
      ),
    );
  }

  /** Hands the memory-time accrued since the last report to `onEnvironmentTime`. */
  private reportTime(runId: string, record: RunEnvironment): void {
    if (this.onEnvironmentTime === undefined) return;
    const total = this.accountingOf(runId)?.gibSeconds ?? 0;
    const gibSeconds = total - record.reportedGibSeconds;
    if (!(gibSeconds > 0)) return;
    record.reportedGibSeconds = total;
    this.onEnvironmentTime({ runId, tenantId: record.tenantId, gibSeconds });
  }

  private move(record: RunEnvironment, event: EnvEvent): void {
    record.state = transition(record.state, event);
  }

  private poolFor(profile: SandboxProfile): WarmPool | undefined {
    if (profile.warm === 0 || profile.policy !== 'one-shot') return undefined;
    let pool = this.pools.get(profile.name);
    if (pool === undefined) {
      pool = new WarmPool({
        driver: this.driverFor(profile.tier),
        size: profile.warm,
        specOf: () => this.specFor(profile),
      });
      this.pools.set(profile.name, pool);
    }
    return pool;
  }

  /** Fills the profile's warm pool and waits until it is full. */
  async prewarm(profile: SandboxProfile): Promise<void> {
    if (this.poolFor(profile) === undefined) return;
    await this.images.ensure(profile.image);
    await this.poolFor(profile)?.refill();
  }

  private specFor(profile: SandboxProfile) {
    const id = ownedEnvironmentId(`${Date.now().toString(36)}${randomBytes(5).toString('hex')}`);
    const networked = profile.network.allow.length > 0;
    if (networked && this.egress === undefined)
      throw new KeelError(
        'sandbox_network_unsupported',
        `profile ${profile.name} allows network destinations, but this node has no egress proxy`,
      );
    if (profile.sharedSpace && this.sharedSpace === undefined)
      throw new KeelError(
        'sandbox_failed',
        `profile ${profile.name} mounts the shared space, but this node has no shared-space reader`,
      );
    let sharedDir: string | undefined;
    if (profile.sharedSpace) {
      const mount = new SharedMount(this.sharedBase(id));
      this.sharedMounts.set(id, mount);
      sharedDir = mount.dir;
    }
    return {
      id,
      limits: profile.limits,
      network: profile.network,
      egress: networked ? { dir: this.egressDir(id) } : undefined,
      keepProcesses: profile.policy !== 'one-shot',
      rootfs: this.images.rootfsOf(profile.image),
      readOnlyBinds: profile.readOnlyMounts.length === 0 ? undefined : profile.readOnlyMounts,
      sharedDir,
    };
  }

  private observeIdle(profile: SandboxProfile, seconds: number): void {
    const old = this.idleSeconds.get(profile.name);
    this.idleSeconds.set(
      profile.name,
      old === undefined ? seconds : old + EWMA_WEIGHT * (seconds - old),
    );
  }

  private observeTransition(key: string, seconds: number): void {
    const old = this.transitionSeconds.get(key);
    this.transitionSeconds.set(
      key,
      old === undefined ? seconds : old + EWMA_WEIGHT * (seconds - old),
    );
  }

  accountingOf(runId: string): RunAccounting | undefined {
    const record = this.runs.get(runId);
    record?.meter?.sample();
    return record === undefined ? undefined : { ...record.accounting };
  }

  decisionsOf(runId: string): AutoDecision[] {
    return [...(this.runs.get(runId)?.decisions ?? [])];
  }

  stateOf(runId: string): EnvState | undefined {
    return this.runs.get(runId)?.state;
  }

  /** The run's live environment, if it has one (for inspection: doctor, tests, metrics). */
  environmentOf(runId: string): SandboxEnvironment | undefined {
    return this.runs.get(runId)?.env;
  }

  /** Tears down the run's environment (the run ended); its accounting stays readable. */
  async endRun(runId: string): Promise<void> {
    const record = this.runs.get(runId);
    if (record === undefined) return;
    record.ended = true;
    clearTimeout(record.prewarmTimer);
    clearTimeout(record.idleTimer);
    // Queued: a second endRun (close() while the run's own end is releasing) waits for the
    // teardown under way instead of finding no environment and returning before it is done.
    const released = record.queue.then(() => this.releaseIdleOrPaused(record));
    record.queue = released.catch(() => undefined);
    await released;
    this.reportTime(runId, record);
  }

  /**
   * Starts a long-lived program (a stdio MCP server) in an environment of its own, built from
   * `profile` like a run's: its image, its cgroup limits, its network allowlist (bound to the
   * tenant for the service's whole life, since a service has no calls of its own) and its secret
   * variables (revealed now, through the tier's pipe, never a command line). Only tiers that can
   * serve (namespace) take it. The environment lives until close(), the program's exit is the
   * caller's to watch, and the manager's close() ends every service still open.
   */
  async openService(profile: SandboxProfile, request: ServiceRequest): Promise<SandboxService> {
    await this.swept;
    if (profile.tier !== 'namespace')
      throw new KeelError(
        'sandbox_tier_unsupported',
        `profile ${profile.name}: long-lived services run on the namespace tier only, not ${profile.tier}`,
        { details: { tier: profile.tier } },
      );
    const driver = this.driverFor(profile.tier);
    await this.images.ensure(profile.image);
    const secretEnv = await this.secretEnv(request.tenantId, profile, {
      runId: '',
      executionId: null,
    });
    const env = await driver.create({
      // A service belongs to no run: no run tree's shared space.
      ...this.specFor({ ...profile, sharedSpace: false }),
      keepProcesses: false,
      readOnlyBinds: [...(profile.readOnlyMounts ?? []), ...(request.readOnlyBinds ?? [])],
      workspaceBind: request.workspaceBind,
    });
    let process: ServiceProcess;
    try {
      if (profile.network.allow.length > 0) {
        await this.egress!.open(env.id, join(this.egressDir(env.id), EGRESS_SOCKET_NAME));
        this.egress!.bind(env.id, {
          tenantId: request.tenantId,
          runId: '',
          executionId: undefined,
          rules: profile.network.allow,
          service: request.label,
        });
      }
      process = await env.serve!({ argv: request.argv, env: { ...request.env, ...secretEnv } });
    } catch (error) {
      await env.destroy().catch(() => undefined);
      await this.closeEgress(env.id).catch(() => undefined);
      throw error;
    }
    let closing: Promise<void> | undefined;
    const service: SandboxService = {
      process,
      environmentId: env.id,
      uid: env.uid,
      close: () => {
        closing ??= (async () => {
          this.services.delete(service);
          process.kill();
          await env.destroy().catch(() => undefined);
          await this.closeEgress(env.id).catch(() => undefined);
        })();
        return closing;
      },
    };
    this.services.add(service);
    return service;
  }

  async close(): Promise<void> {
    await Promise.all([...this.services].map((service) => service.close()));
    await Promise.all([...this.runs.keys()].map((runId) => this.endRun(runId)));
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
    // Pooled environments never taken still had their (empty) shared-space directories.
    await Promise.all([...this.sharedMounts.keys()].map((id) => this.removeShared(id)));
    await this.egress?.closeAll();
    await this.snapshots.close();
    if (this.ownsImages) await this.images.close();
  }

  /**
   * Workspace walks in progress in the snapshot worker right now (for tests and metrics: the main
   * thread goes on serving requests meanwhile).
   */
  snapshotWalksRunning(): number {
    return this.snapshots.walking();
  }
}

export const runRef = (runId: string): string => `run/${runId}/workspace`;

function safeCpu(env: SandboxEnvironment): number {
  try {
    return env.counters().cpuSeconds;
  } catch {
    return 0;
  }
}

function safeMemory(env: SandboxEnvironment): number {
  try {
    return env.counters().memoryBytes;
  } catch {
    return 0;
  }
}

/**
 * Runs `start` under the profile's start-up deadline. Past it the call fails with
 * `sandbox_start_timeout` at once; an environment that still comes up later is handed to
 * `discard` (nothing keeps it).
 */
async function withStartupDeadline<T extends { env: SandboxEnvironment }>(
  profile: SandboxProfile,
  start: (late: () => boolean) => Promise<T>,
  discard: (env: SandboxEnvironment) => Promise<void>,
): Promise<T> {
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const starting = start(() => timedOut);
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(
        new KeelError(
          'sandbox_start_timeout',
          `sandbox of profile ${profile.name} did not start within ${profile.limits.startupMs} ms`,
          {
            details: {
              profile: profile.name,
              tier: profile.tier,
              startupMs: profile.limits.startupMs,
            },
          },
        ),
      );
    }, profile.limits.startupMs);
  });
  try {
    return await Promise.race([starting, deadline]);
  } catch (error) {
    if (timedOut)
      void starting.then(
        (late) => discard(late.env).catch(() => undefined),
        () => undefined,
      );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
