// Assembles a Keel process for a role: `dev` (everything, SQLite unless KEEL_DATABASE_URL is set),
// `server` (API + orchestrator + pools on Postgres), `worker` (orchestrator + pools, no API) or
// `embedded` (inside an application, keel/embedded: SQLite or Postgres, the API only when asked).
// One start path for all of them: startRuntime loads an agents file, startRuntimeWith takes the
// agents as values. Owns start and graceful stop; holds no state of its own beyond the parts it
// wires together.
import { McpClientPool } from '../tools/mcp/client-pool.ts';
import type { EgressRecord, RevealSecret } from '../sandbox/egress/egress-proxy.ts';
import { McpToolSource } from '../tools/mcp/tool-source.ts';
import { applyMcpServersFile } from '../tools/mcp/servers-file.ts';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApi } from '../api/server.ts';
import { startAdminListener, type AdminListener } from '../api/admin-listener.ts';
import { generateApiKey, hashApiKey } from '../api/auth.ts';
import type { KeelConfig } from '../config/config.ts';
import { armCrashPoint } from '../domain/crash-points.ts';
import { Orchestrator } from '../engine/orchestrator.ts';
import { inThreadHost } from '../engine/agent-host.ts';
import { IsolateHost } from '../engine/isolation/isolate-host.ts';
import { AgentRegistry } from '../engine/registry.ts';
import { announceServing } from '../engine/serving-announcer.ts';
import { warnUnservedVersions } from './version-warnings.ts';
import { AgentsModuleGenerations } from './agents-watch.ts';
import { watchAgentsForReload } from './agents-reload.ts';
import { KeelError } from '../domain/keel-error.ts';
import { TenantPolicy } from '../models/tenant-policy.ts';
import { PlatformCaps } from '../models/platform-caps.ts';
import { ModelGateway } from '../models/gateway.ts';
import { loadModelsFile } from '../models/model-config.ts';
import { readSecretEnv } from '../config/config.ts';
import type { StoreBackend } from '../store/backend.ts';
import type { TenantRecord } from '../domain/records.ts';
import type { LoadedAgents } from '../engine/agents-module.ts';
import type { LiveDeltas } from '../models/live-deltas.ts';
import { selectBackend } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { attachNodeSandboxes } from '../sandbox/node-sandboxes.ts';
import { attachNodeBrowser } from '../browser/node-browser.ts';
import { SandboxPlacer } from '../nodes/sandbox-placer.ts';
import { auditEgress, auditSecretUse } from '../sandbox/egress/egress-audit.ts';
import { EnvKeyProvider } from '../secrets/key-provider.ts';
import { SecretVault } from '../secrets/secret-vault.ts';
import { DelegatedTokens, delegationIssuer, delegationKey } from '../secrets/delegated-tokens.ts';
import { StartupError } from './kit/output.ts';
import { createSchedulesPlane, type SchedulesPlane } from '../schedules/schedules-plane.ts';
import { observeStore } from '../telemetry/observed-store.ts';
import { runScopedLog } from '../telemetry/log-context.ts';
import { startMetricsListener } from '../telemetry/metrics-listener.ts';
import { telemetry } from '../telemetry/telemetry.ts';
import { startTracing, tracingOptionsFrom } from '../telemetry/tracing.ts';
import { lockDataDir } from './data-dir-lock.ts';
import type { ModeChange } from '../store/sqlite/data-dir-modes.ts';
import { PoolRegistry, poolKind } from '../scheduling/pool-registry.ts';
import type { DashboardSources } from '../api/dashboard-sources.ts';
import { loadPoolsFile } from '../scheduling/pool-config.ts';
import { watchPoolsFile } from '../scheduling/pool-config-watch.ts';
import { followTenantPoolPolicy } from '../scheduling/tenant-pool-policy.ts';
import { GlobalSlots } from '../scheduling/global-slots.ts';
import { credentialProblems } from '../models/credentials.ts';
import { ApprovalNotifier } from '../engine/approval-notifier.ts';
import { redactValue } from '../api/redaction.ts';
import { SYSTEM_CLOCK } from '../domain/clock.ts';
import { startArchivePlane } from '../archive/archive-plane.ts';
import {
  assertCanListen,
  credentialsStartupError,
  secretIsSet,
  databaseStartupError,
  isolateStartupError,
  listenStartupError,
  loadAgentsForStart,
  sqliteStartupError,
} from './startup-checks.ts';

export type Role = 'dev' | 'server' | 'worker' | 'embedded';

/** What each role runs besides the orchestrator, the pools and the scheduler. */
const ROLE_SHAPES: Record<Role, { api: 'always' | 'never' | 'when asked'; ownsSqlite: boolean }> = {
  dev: { api: 'always', ownsSqlite: true },
  server: { api: 'always', ownsSqlite: false },
  worker: { api: 'never', ownsSqlite: false },
  embedded: { api: 'when asked', ownsSqlite: true },
};

export const DEV_TENANT_NAME = 'dev';
/** The tenant a `keel server` creates for KEEL_API_KEY, when that is set. */
export const DEFAULT_TENANT_NAME = 'default';
/** The tenant an embedded runtime's runs belong to. */
export const EMBEDDED_TENANT_NAME = 'embedded';

export interface RunningKeel {
  store: Store;
  orchestrator: Orchestrator;
  app: FastifyInstance | undefined;
  address: string | undefined;
  /**
   * The API key of the dev tenant (dev role) or the embedded tenant (embedded role): KEEL_API_KEY,
   * else generated.
   */
  devApiKey: string | undefined;
  /** The embedded tenant (embedded role only). */
  tenant: TenantRecord | undefined;
  registry: AgentRegistry;
  /** Model token deltas as they stream (ephemeral, never stored). */
  live: LiveDeltas;
  recovered: number;
  schedules: SchedulesPlane;
  /** Where GET /metrics is served without auth (KEEL_METRICS_PORT), if anywhere. */
  metricsAddress: string | undefined;
  /** Where the admin surface is served alone (KEEL_ADMIN_PORT), if it is separated. */
  adminAddress: string | undefined;
  stop(): Promise<void>;
}

/**
 * Opens the process's store backend; one on a data directory (not shared by processes) is locked to
 * this process.
 */
export function openStore(
  config: KeelConfig,
  role: Role,
  onModeChange?: (change: ModeChange) => void,
): { backend: StoreBackend; unlock: () => void } {
  const dataDir = resolve(config.dataDir);
  const factory = selectBackend({
    databaseUrl: config.databaseUrl,
    dataDir,
    durability: config.durability,
    groupCommit: { maxBatch: config.groupCommitMaxBatch, maxWaitMs: config.groupCommitMaxWaitMs },
    onCommitBatch: (size, flushed, acknowledged) =>
      telemetry.commitBatch(size, flushed, acknowledged),
    payloads: {
      inlineMaxBytes: config.payloadInlineMaxBytes,
      storedMaxBytes: config.payloadStoredMaxBytes,
      runMaxBytes: config.runPayloadMaxBytes,
    },
  });
  if (factory.capabilities.multiProcess) return { backend: factory.open(), unlock: () => {} };
  if (!ROLE_SHAPES[role].ownsSqlite)
    throw new KeelError(
      'config_invalid',
      `keel ${role} needs KEEL_DATABASE_URL (a PostgreSQL connection string); for one process on SQLite, use keel dev`,
    );
  const unlock = lockDataDir(dataDir, onModeChange);
  try {
    return { backend: factory.open(), unlock };
  } catch (error) {
    unlock();
    throw error;
  }
}

/**
 * openStore, with a data directory holding something that is not a Keel database refused in one
 * line.
 */
function openStoreForStart(
  config: KeelConfig,
  role: Role,
  log: Logger,
): ReturnType<typeof openStore> {
  try {
    return openStore(config, role, (change) =>
      log.warn(
        { path: change.path, from: change.from, to: change.to },
        `data directory: mode of ${change.path} changed from ${change.from} to ${change.to} (only Keel's user may read the store)`,
      ),
    );
  } catch (error) {
    throw sqliteStartupError(error, join(resolve(config.dataDir), 'keel.db')) ?? error;
  }
}

export interface RuntimeOptions {
  /** A model whose credentials cannot work fails the start (exit 2) instead of a warning. */
  strict?: boolean;
  /**
   * Reload the agents module when it or a project file it imports changes (`keel dev --watch`):
   * new runs use the new code; runs in flight finish their turn on the code that started them.
   */
  watch?: boolean;
  /** Told one line per reload, or per reload refused because the changed module does not load. */
  onReload?: (line: string) => void;
  /** Embedded role: serve the HTTP API and dashboard on config.host:config.port. */
  serveApi?: boolean;
}

/** What a runtime serves, given as values (startRuntimeWith). */
export interface RuntimeDefinitions extends LoadedAgents {
  /**
   * The module the definitions come from: isolates load it (KEEL_AGENT_ISOLATION=isolate), and
   * `watch` reloads it. Without it, agents run in the process's own thread only.
   */
  agentsFile: string | undefined;
}

/** Loads the agents file, then starts as startRuntimeWith. */
export async function startRuntime(
  role: Role,
  agentsFile: string,
  config: KeelConfig,
  log: Logger,
  options: RuntimeOptions = {},
): Promise<RunningKeel> {
  // Before the first import, so that every project file of the module's graph is known.
  const generations = options.watch ? new AgentsModuleGenerations(agentsFile) : undefined;
  const loaded = await loadAgentsForStart(agentsFile);
  return startRuntimeWith(role, { ...loaded, agentsFile }, config, log, options, generations);
}

/**
 * Starts a runtime serving `definitions` (agents, tools and models as values). Agents given without
 * their module cannot run in isolates: 400 config_invalid unless KEEL_AGENT_ISOLATION=thread.
 */
export async function startRuntimeWith(
  role: Role,
  definitions: RuntimeDefinitions,
  config: KeelConfig,
  log: Logger,
  options: RuntimeOptions = {},
  generations?: AgentsModuleGenerations,
): Promise<RunningKeel> {
  const { agents, models, tools, agentsFile } = definitions;
  if (config.agentIsolation === 'isolate' && agentsFile === undefined)
    throw new KeelError(
      'config_invalid',
      'agents given as values run in the process’s thread: set agentIsolation to "thread", or give the module that exports them (agentsModule) to run them in isolates',
    );
  const shape = ROLE_SHAPES[role];
  const serveApi =
    shape.api === 'always' || (shape.api === 'when asked' && options.serveApi === true);
  if (config.testCrashAt !== undefined) {
    armCrashPoint(config.testCrashAt);
    log.warn(
      { crashAt: config.testCrashAt },
      'fault injection armed (KEEL_TEST_CRASH_AT): this process will SIGKILL itself; for tests only',
    );
  }
  // One registry per process, shared by the gateway (model:*) and the tools; a bad pools file fails
  // the start here, and later edits (file change, SIGHUP) are applied live or rejected with a
  // logged error.
  const pools = new PoolRegistry({ telemetry, fairness: config.fairnessPolicy });
  const poolsFile = config.poolsFile === undefined ? undefined : resolve(config.poolsFile);
  if (poolsFile !== undefined) pools.configure(loadPoolsFile(poolsFile));
  // Models from the agents module plus the models file (KEEL_MODELS_FILE)
  const modelsFile =
    config.modelsFile === undefined ? undefined : loadModelsFile(resolve(config.modelsFile));
  const declaredModels = [...models, ...(modelsFile?.models ?? [])];
  const gateway = new ModelGateway(declaredModels, {
    ...modelsFile?.options,
    secret: (name) => readSecretEnv(name),
    pools,
  });
  // Preflight: a model whose key variable is unset is named now, not by every run's 401.
  const credentials = credentialProblems(declaredModels, secretIsSet);
  if (credentials.length > 0 && options.strict === true) throw credentialsStartupError(credentials);
  for (const problem of credentials)
    log.warn(
      { model: problem.model, endpoint: problem.endpoint, variable: problem.variable ?? null },
      problem.message,
    );
  // A bad models file fails here, before the store is opened or locked.
  // A taken port fails the start here, before the store is opened or locked.
  const apiTarget = { host: config.host, port: config.port, flag: '--port' };
  if (serveApi) await assertCanListen(apiTarget);
  const adminTarget =
    config.adminPort === undefined || !serveApi
      ? undefined
      : { host: config.adminHost, port: config.adminPort, flag: 'KEEL_ADMIN_PORT' };
  if (adminTarget !== undefined) await assertCanListen(adminTarget);
  if (config.metricsPort !== undefined)
    await assertCanListen({
      host: config.metricsHost,
      port: config.metricsPort,
      flag: 'KEEL_METRICS_PORT',
    });
  const { backend, unlock } = openStoreForStart(config, role, log);
  const store = backend.runs;
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => {});
    unlock();
    throw (
      (config.databaseUrl === undefined
        ? undefined
        : databaseStartupError(error, config.databaseUrl)) ?? error
    );
  }
  // Secrets: sealed under KEEL_SECRETS_KEY. Stored secrets without the key would fail every use at
  // run time: refuse the start instead, saying how to fix it.
  const secrets = new SecretVault(
    store,
    config.secretsKey === undefined ? undefined : new EnvKeyProvider(config.secretsKey),
  );
  if (!secrets.configured && (await store.anySecret())) {
    await store.close().catch(() => {});
    unlock();
    throw new StartupError(
      'the store holds secrets, but KEEL_SECRETS_KEY is not set: they cannot be used',
      'set KEEL_SECRETS_KEY to the key they were stored with (32 bytes, base64)',
    );
  }
  // Per-run delegated tokens: signed with KEEL_DELEGATION_KEY, else with the key the deployment
  // keeps in its store (one per database, so processes accept each other's tokens).
  const delegatedTokens = await delegationKey(store, config.delegationKey).then(
    (key) =>
      new DelegatedTokens({
        key,
        audience: config.delegationAudience,
        ttlMs: config.delegationTtlMs,
      }),
    async (error: unknown) => {
      await store.close().catch(() => {});
      unlock();
      throw error;
    },
  );
  /** This process's API address once it listens: where tools call back unless configured. */
  let apiAddress: string | undefined;
  // Processes sharing a database share their model RPM/TPM limits too (one process's own limiter is
  // exact alone).
  if (backend.rateWindows !== undefined) gateway.shareLimits(backend.rateWindows);
  // ... and live output: a follower on this process sees a run another process executes.
  const liveRelay = backend.openLiveRelay?.();
  if (liveRelay !== undefined) {
    await liveRelay.start();
    gateway.live.attachRelay(liveRelay);
  }
  gateway.useTenantPolicy(new TenantPolicy(store)); // tenants' own RPM/TPM and daily budgets
  // Platform-wide daily caps, counted from the store's committed model calls (cluster-wide on
  // Postgres).
  const platformCaps = new PlatformCaps(store, {
    tokensPerDay: config.platformTokenCapPerDay,
    costUsdPerDay: config.platformCostCapPerDay,
  });
  if (platformCaps.enabled) gateway.usePlatformCaps(platformCaps);
  const detachPlatformCaps = platformCaps.enabled
    ? telemetry.attachPlatformCaps(platformCaps)
    : () => {};
  const registry = new AgentRegistry();
  for (const agent of agents) registry.register(agent);
  for (const tool of tools) registry.registerTool(tool);
  await warnUnservedVersions(store, registry, store.capabilities.multiProcess, log);
  // Traces (off unless OTEL_* says otherwise), metrics derived from the store, run context in logs
  const stopTracing = await startTracing(tracingOptionsFrom(config));
  const detachStore = telemetry.attachStore(store);
  telemetry.providerOf = (model) =>
    gateway.has(model) ? gateway.resolve(model).definition.provider : undefined;
  const metricsListener =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsListener(config.metricsHost, config.metricsPort, async () => {
          const health = await store.health();
          return {
            ready: health.reachable && health.changeFeed,
            store: health.reachable ? 'ok' : 'unavailable',
            changeFeed: health.changeFeed ? 'ok' : 'reconnecting',
          };
        });
  // Agent code runs in isolates (worker threads) under a watchdog unless
  // KEEL_AGENT_ISOLATION=thread.
  const agentHost =
    config.agentIsolation === 'isolate' && agentsFile !== undefined
      ? new IsolateHost({
          agentsFile: resolve(agentsFile),
          models: gateway.names(),
          isolates: config.agentIsolates,
          blockedAfterMs: config.agentBlockedMs,
          memoryMb: config.agentMemoryMb,
          log: (level, message, fields) => log[level](fields ?? {}, message),
        })
      : inThreadHost;
  // Isolates load the agents module before any run is claimed (a module that fails there fails the
  // start).
  if (agentHost instanceof IsolateHost) {
    await agentHost.ready().catch(async (error: unknown) => {
      await agentHost.close();
      await metricsListener?.close();
      await store.close().catch(() => {});
      unlock();
      throw isolateStartupError(error, agentsFile ?? '');
    });
  }
  // The node's sandboxes (opened on first use) reach tools through their context; environments are
  // released when their run ends, and their memory-time is counted per tenant.
  // Every connection out of a sandbox or to an MCP server is counted and audited; every secret use
  // is audited before the value is handed over: a use the log does not show never happened.
  const onEgress = (record: EgressRecord) => {
    telemetry.egressConnection(
      record.tenantId,
      record.verdict,
      record.bytesSent,
      record.bytesReceived,
    );
    auditEgress(store, record).catch((error: unknown) =>
      log.warn({ err: error, runId: record.runId }, 'could not audit an egress connection'),
    );
  };
  const revealSecret: RevealSecret = async (tenantId, ref, use) => {
    const value = await secrets.reveal(tenantId, ref);
    await auditSecretUse(store, tenantId, ref, use);
    return value;
  };
  const sandboxes = attachNodeSandboxes(store, config, {
    onEnvironmentTime: ({ tenantId, gibSeconds }) => {
      if (tenantId !== undefined) telemetry.sandboxEnvironment(tenantId, gibSeconds);
    },
    onLifecycle: (event) => telemetry.sandboxLifecycle(event),
    onEgress,
    revealSecret,
  });
  const detachSandboxes = telemetry.attachSandboxes(() => sandboxes.environmentCounts());
  // Headless Chromium sessions for the browser tools: Chromium starts on the first browser action.
  const browser = attachNodeBrowser(store, config, pools, {
    started: (seconds, restored) => telemetry.browserStarted(seconds, restored),
    reclaimed: (reason, seconds) => telemetry.browserReclaimed(reason, seconds),
  });
  const detachBrowser = telemetry.attachBrowser(() => browser.gauges());
  // KEEL_SANDBOX_PLACEMENT=nodes: built-in sandbox tools run on the cluster's `keel node`s.
  const placer =
    config.sandboxPlacement === 'nodes'
      ? new SandboxPlacer({
          listNodes: () => store.listNodes(),
          k: config.placementK,
          refreshMs: config.placementRefreshMs,
          staleAfterMs: config.nodeStaleMs,
          placementDeadlineMs: config.placementDeadlineMs,
        })
      : undefined;
  // MCP servers' tools, as Keel tools: a client pool for this process, pins in the store.
  const mcpPool = new McpClientPool({
    allowedOrigins: config.mcpAllowedOrigins,
    env: (name) => readSecretEnv(name),
    sandboxes: () => sandboxes.manager(),
    onEgress,
    revealSecret,
  });
  const orchestrator = new Orchestrator({
    store: observeStore(store, telemetry),
    registry,
    gateway,
    leaseTtlMs: config.leaseTtlMs,
    maxActiveRuns: config.maxActiveRuns,
    poisonAfterLeaseLosses: config.poisonLeaseLosses,
    agentHost,
    pools,
    preemptAfterMs: config.preemptAfterMs,
    ...(config.toolTimeoutMs > 0 ? { toolTimeoutMs: config.toolTimeoutMs } : {}),
    cancelGraceMs: config.cancelGraceMs,
    log: runScopedLog(log),
    toolNode: {
      dataDir: sandboxes.dataDir,
      sandboxManager: () => sandboxes.manager(),
      browserPool: () => browser.pool(),
      ...(placer === undefined ? {} : { sandboxNodes: () => placer }),
    },
    onRunLeft: (runId, status) => browser.runLeft(runId, status),
    mcp: new McpToolSource({ store, pool: mcpPool }),
    delegation: delegationIssuer(delegatedTokens, () => config.delegationApiUrl ?? apiAddress),
  });
  // A store this process owns alone (the SQLite file under its lock): a dead predecessor's leases
  // are taken back at once. A shared store waits for leases to expire instead: their holders may be
  // alive.
  const recovered = store.capabilities.multiProcess
    ? 0
    : await store.expireForeignLeases(orchestrator.owner);
  let devApiKey: string | undefined;
  let tenant: TenantRecord | undefined;
  if (role === 'dev' || role === 'embedded') {
    devApiKey = config.apiKey ?? generateApiKey();
    const name = role === 'dev' ? DEV_TENANT_NAME : EMBEDDED_TENANT_NAME;
    const ensured = await store.ensureTenant(name, hashApiKey(devApiKey));
    if (role === 'embedded') tenant = ensured;
  } else if (role === 'server' && config.apiKey !== undefined) {
    await store.ensureTenant(DEFAULT_TENANT_NAME, hashApiKey(config.apiKey));
  }
  if (config.mcpServersFile !== undefined) {
    const written = await applyMcpServersFile(store, config.mcpServersFile);
    log.info({ file: config.mcpServersFile, servers: written }, 'MCP servers file applied');
  }
  const tenantPoolPolicy = followTenantPoolPolicy(store, pools); // pools share effects by tenant weight, within tenant caps
  // Processes sharing the database share pool limits and tenant caps too (pools of cluster scope):
  // slots leased from the store. Alone on its store, a process's own pools are exact: no round trip.
  const globalSlots = store.capabilities.multiProcess
    ? new GlobalSlots({
        store,
        holder: orchestrator.owner,
        leaseMs: config.poolLeaseMs,
        retryMs: config.poolGrantRetryMs,
        limitOf: (pool) => pools.limitOf(pool),
        capOf: (tenantId, pool) => pools.capOf(tenantId, pool),
        observer: telemetry,
        onError: (what, error) => log.warn({ err: error }, `pool slots: ${what} failed; retrying`),
      })
    : undefined;
  if (globalSlots !== undefined) {
    await globalSlots.start();
    pools.useGlobalSlots(globalSlots);
  }
  const poolsWatch =
    poolsFile === undefined
      ? undefined
      : watchPoolsFile(
          poolsFile,
          (c) => pools.configure(c),
          (level, message, fields) => log[level](fields ?? {}, message),
        );
  orchestrator.start();
  // Which processes serve which versions, for GET /v1/agents on any API process.
  const announcer = await announceServing(
    store,
    { workerId: orchestrator.owner, role, served: () => registry.served() },
    (error) => log.warn({ err: error }, 'could not announce the served agent versions'),
  );
  const watcher =
    generations === undefined || agentsFile === undefined
      ? undefined
      : watchAgentsForReload({
          agentsFile,
          generations,
          registry,
          agentHost,
          log,
          onReload: options.onReload ?? (() => {}),
        });
  // Schedules: every process runs the (leaderless) scheduler; fires are claimed with leases, so
  // none fires twice.
  const schedules = createSchedulesPlane(store, registry, {
    schedules: backend.schedules,
    tickMs: config.schedulerTickMs,
    leaseMs: config.schedulerLeaseMs,
    log: (level, message, fields) => log[level](fields ?? {}, message),
  });
  await schedules.scheduler.start();
  // The approver webhook's outbox: every process delivers, claims keep a notification to one.
  const approvalNotifier = new ApprovalNotifier({
    store,
    clock: SYSTEM_CLOCK,
    allowlist: (tenantId) => schedules.store.getWebhookAllowlist(tenantId),
    revealSecret: (tenantId, ref) => secrets.reveal(tenantId, ref),
    redactArgs: async (tenantId, args) => {
      const owner = await store.getTenant(tenantId);
      return owner === null ? args : redactValue(args, owner.redact);
    },
    tickMs: config.schedulerTickMs,
    log: (level, message, fields) => log[level](fields ?? {}, message),
  });
  await approvalNotifier.start();
  // Retention: every process archives (claims keep a run to one archiver); the API reads archived
  // runs back through the plane's store view.
  const archive = startArchivePlane(backend, store, config, {
    owner: orchestrator.owner,
    clock: SYSTEM_CLOCK,
    metrics: telemetry.metrics,
    log: (level, message, fields) => log[level](fields ?? {}, message),
  });
  let app: FastifyInstance | undefined;
  if (serveApi) {
    app = await buildApi({
      store: archive.apiStore,
      registry,
      live: gateway.live,
      adminKey: config.adminKey,
      secrets,
      payloadMaxBytes: config.payloadMaxBytes,
      stepPreviewMaxBytes: config.stepPreviewMaxBytes,
      batchRunsMax: config.batchRunsMax,
      auditRetentionMs: config.auditRetentionDays * 24 * 60 * 60 * 1000,
      ready: () => true,
      logger: log.child({ role: 'api' }),
      schedules: schedules.service,
      pools: () => pools.snapshot(),
      tenantPolicy: gateway.tenantPolicy,
      dashboard: dashboardSources(store, pools),
      separateAdmin: adminTarget !== undefined,
      corsOrigins: config.corsOrigins,
      keyRequestsPerMinute: config.keyRequestsPerMinute,
      delegation: delegatedTokens,
      keyRateWindows: backend.rateWindows,
      spend: gateway,
    });
  }
  let adminListener: AdminListener | undefined;
  const running: RunningKeel = {
    store,
    orchestrator,
    app,
    address: undefined,
    devApiKey,
    tenant,
    registry,
    live: gateway.live,
    recovered,
    schedules,
    metricsAddress: metricsListener?.address,
    adminAddress: undefined,
    async stop() {
      watcher?.close();
      await adminListener?.close();
      await app?.close();
      await metricsListener?.close();
      await schedules.scheduler.stop();
      await approvalNotifier.stop();
      await archive.stop();
      await orchestrator.stop();
      await globalSlots
        ?.close()
        .catch((error: unknown) =>
          log.warn(
            { err: error },
            'could not give the pool slots back (they expire with the lease)',
          ),
        );
      await announcer.stop();
      poolsWatch?.close();
      tenantPoolPolicy.close();
      pools.close();
      await agentHost.close();
      await mcpPool.close();
      await sandboxes.close();
      await browser.close();
      detachStore();
      detachPlatformCaps();
      detachSandboxes();
      detachBrowser();
      await stopTracing(); // flushes the spans of runs that ended during shutdown
      await liveRelay?.close();
      await store.close();
      unlock();
    },
  };
  if (app !== undefined) {
    try {
      running.address = await app.listen({ port: config.port, host: config.host });
      apiAddress = running.address;
    } catch (error) {
      // Taken between the check above and now: everything started so far is stopped before the
      // start fails.
      await running.stop();
      throw listenStartupError(error, apiTarget) ?? error;
    }
    if (adminTarget !== undefined) {
      try {
        adminListener = await startAdminListener(app, adminTarget.host, adminTarget.port);
      } catch (error) {
        await running.stop();
        throw listenStartupError(error, adminTarget) ?? error;
      }
      running.adminAddress = adminListener.address;
      log.info(
        { address: adminListener.address },
        'admin listener: /v1/admin/* and /metrics are served here only',
      );
    }
  }
  return running;
}

/**
 * Takes SIGINT and SIGTERM from the moment it is called, before the runtime starts: a signal sent
 * while Keel starts, or as soon as its banner is out, stops it gracefully once it is up. (Installed
 * only after the banner, a supervisor's SIGTERM could land before the handler and kill Keel by the
 * default action, exit by signal instead of 0.)
 */
export function stopSignals(log: Logger): {
  /** Resolves with exit code 0 after a signal, once the runtime stopped gracefully. */
  untilSignalled(runtime: RunningKeel): Promise<number>;
  /** Removes the handlers (the start failed: the process ends by its error). */
  dispose(): void;
} {
  let received: string | undefined;
  let onSignal: ((signal: string) => void) | undefined;
  const take = (signal: string) => {
    if (received !== undefined) return;
    received = signal;
    onSignal?.(signal);
  };
  const onInterrupt = () => take('SIGINT');
  const onTerminate = () => take('SIGTERM');
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onTerminate);
  return {
    untilSignalled: (runtime) =>
      new Promise<number>((resolveExit) => {
        const shutdown = async (signal: string) => {
          log.info({ signal }, 'shutting down');
          await runtime.stop();
          resolveExit(0);
        };
        if (received !== undefined) void shutdown(received);
        else onSignal = (signal) => void shutdown(signal);
      }),
    dispose: () => {
      process.off('SIGINT', onInterrupt);
      process.off('SIGTERM', onTerminate);
    },
  };
}

/**
 * What the dashboard shows beyond the store: this process's effect pools (totals only: a tenant's
 * page must not show other tenants) and each tenant's quotas from its record.
 */
function dashboardSources(store: Store, pools: PoolRegistry): DashboardSources {
  const kinds = { model: 'model', sandbox: 'sandbox', inline: 'tool', declared: 'tool' } as const;
  return {
    pools: () =>
      pools.snapshot().map((p) => ({
        name: p.name,
        kind: kinds[poolKind(p.name)],
        queued: p.queued,
        running: p.running,
        concurrency: p.limit,
        oldestQueuedAgeMs: p.oldestWaitMs,
      })),
    // Sandbox nodes (issue 24) as they last heartbeated: the Nodes page.
    nodes: async () =>
      (await store.listNodes()).map((node) => ({
        id: node.name,
        isolation: node.capacity?.tiers.join(', ') ?? '',
        state: node.state,
        slotsUsed: node.load?.active ?? 0,
        slotsTotal: node.capacity?.slots ?? 0,
        memoryUsedBytes: node.load?.memoryUsedBytes ?? null,
        memoryTotalBytes: node.capacity?.memoryBytes ?? null,
        lastSeenAt: new Date(node.heartbeatAt ?? node.createdAt).toISOString(),
      })),
    quotas: async (tenantId) => {
      const tenant = await store.getTenant(tenantId);
      return tenant === null
        ? null
        : {
            maxConcurrentRuns: tenant.maxConcurrentRuns,
            requestsPerMinute: tenant.rpm,
            tokensPerMinute: tenant.tpm,
            weight: tenant.weight,
          };
    },
  };
}
