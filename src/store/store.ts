// The one store interface every backend implements (embedded SQLite, distributed Postgres). The
// engine and the API depend on this interface only; a backend difference is a capability flag,
// never a branch on its name.
import type { PayloadInfo } from '../domain/payload-ref.ts';
import type {
  ApprovalNotificationFilter,
  ApprovalNotificationRecord,
  ApprovalWebhook,
  DeliveryOutcome,
} from '../domain/approval-webhooks.ts';
import type { AdmissionSample } from '../domain/admission.ts';
import type { AttemptRecord } from '../domain/attempts.ts';
import type {
  ApprovalDecision,
  ApprovalFilter,
  ApprovalRecord,
  NewApproval,
} from '../domain/approvals.ts';
import type { ToolPolicy } from '../domain/tool-policy.ts';
import type {
  SharedFile,
  SharedFileInfo,
  SharedFileWrite,
  SharedWriteOutcome,
} from '../domain/shared-space.ts';
import type {
  AdminPrincipalRecord,
  ApiKeyRecord,
  AuditEntry,
  AuditFilter,
  NewApiKey,
  NewAuditEntry,
  NewPlatformAuditEntry,
  PlatformAuditEntry,
  PlatformAuditFilter,
} from '../domain/access.ts';
import type { KeelError, SerializedError } from '../domain/keel-error.ts';
import type { EventCursor, TenantEventFilter, TenantEventPage } from '../domain/event-cursor.ts';
import type { EffectStatus } from '../domain/effect-status.ts';
import type { RunStatus } from '../domain/run-status.ts';
import type { Json } from '../domain/json.ts';
import type { MessageDelivery, MessagePost } from '../domain/messages.ts';
import type { RunSnapshot } from '../domain/run-snapshot.ts';
import type { SealedSecret, SecretInfo, SecretRecord } from '../domain/secrets.ts';
import type {
  CancelOutcome,
  CompensationReport,
  EffectKind,
  JournalEntry,
  NewRun,
  RunCounters,
  RunEventRecord,
  RunProgress,
  RunRecord,
  RunStall,
  TenantQuotas,
  TenantRecord,
} from '../domain/records.ts';
import type { TenantUsage } from './usage.ts';
import type { LiveMetrics } from './live-metrics.ts';
import type { EndedRunsBucket, RunSummaryRow, TenantSummaryRow } from './run-summaries.ts';
import type { ServingProcess } from './serving-processes.ts';
import type {
  PoolSlotGrant,
  PoolSlotHolder,
  PoolSlotLease,
  PoolSlotRenewal,
  PoolSlotRequest,
} from './pool-slot-leases.ts';
import type {
  NodeCapacity,
  NodeEvent,
  NodeLoadReport,
  SandboxNodeRecord,
} from '../domain/sandbox-nodes.ts';
import type { McpServerRow, McpToolPinRow } from './mcp-rows.ts';

/**
 * Why a run changed: `events` (new events only), `runnable` (it may be claimed now), `cancel` (a
 * cancel was requested: its holder must stop), `ended` (it reached a terminal status).
 */
export type ChangeSignal = 'events' | 'runnable' | 'cancel' | 'ended';
export interface RunChange {
  /**
   * A run id, or '*' when changes may have been missed (a reconnected change feed): everyone should
   * look again.
   */
  runId: string;
  signal: ChangeSignal;
}

export interface StoreCapabilities {
  /** Several processes may share the store. */
  multiProcess: boolean;
}

/** Whether the store can serve, for readiness probes. */
export interface StoreHealth {
  /** The database answers. */
  reachable: boolean;
  /** Other processes' changes are heard (always true for a store no other process shares). */
  changeFeed: boolean;
}

/**
 * What "a commit was acknowledged" means: `memory` (applied, not yet written: a process crash loses
 * it), `os` (written to the operating system without fsync: survives a process crash, not a power
 * cut), `fsync` (on disk), `replicated` (on a synchronous Postgres standby too).
 */
export type Durability = 'memory' | 'os' | 'fsync' | 'replicated';
export const DURABILITY_LEVELS = [
  'memory',
  'os',
  'fsync',
  'replicated',
] as const satisfies readonly Durability[];

/**
 * Group commit: how many writes may share one transaction, and how long a write may wait for others
 * to join it.
 */
export interface GroupCommit {
  maxBatch: number;
  maxWaitMs: number;
}

/**
 * Told after each write transaction: how many writes it held, whether it was flushed to disk, and
 * how many of them asked for durability. The store knows nothing of metrics; the process that owns
 * telemetry passes this in.
 */
export type CommitBatchListener = (size: number, flushed: boolean, acknowledged: number) => void;

export interface JournalWrite {
  seq: number;
  kind: EffectKind;
  name: string;
  status: EffectStatus;
  args?: Json | null;
  result?: Json | null;
  error?: SerializedError | null;
  executionId?: string | null;
  effectClass?: string | null;
  attempts?: number;
  /** The lease owner writing this state (set by the engine on every write). */
  worker?: string | null;
  queuedAt?: number | null;
  startedAt?: number | null;
  endedAt?: number | null;
  deadlineAt?: number | null;
}

export interface EventWrite {
  type: string;
  data: Json;
}

/**
 * One atomic commit of a worker's progress on a run: journal entries, run state and counters,
 * events, and the work it starts (child runs) or wakes (a parent). Applied only if the run still
 * carries `leaseToken` and `expectedStateVersion`; otherwise it fails with `stale_write` and is
 * audited.
 */
export interface RunCommit {
  runId: string;
  leaseToken: number;
  expectedStateVersion: number;
  journal?: JournalWrite[];
  run?: {
    status?: RunStatus;
    result?: Json | null;
    error?: SerializedError | null;
    outcome?: CancelOutcome | null;
    compensation?: CompensationReport | null;
    waitingReason?: string | null;
    /** The agent's last ctx.progress (not a journal entry: replay never repeats it). */
    progress?: RunProgress;
    /** The run stalled (set) or moved again (null); a terminal commit clears it too. */
    stalled?: RunStall | null;
    /** When a waiting run becomes claimable again by itself (timer, timeout, deadline). */
    wakeAt?: number | null;
    counters?: Partial<RunCounters>;
    /** Give the lease up (park, finish, yield). */
    releaseLease?: boolean;
    /**
     * This commit yields a preempted run back to the queue: count the preemption and stamp
     * `preemptedAt`.
     */
    preempted?: boolean;
  };
  events?: EventWrite[];
  createRuns?: NewRun[];
  /** Runs to move from waiting to queued (a parent whose child just ended). */
  wakeRuns?: string[];
  /** Runs whose cancellation this commit requests (a cancelled parent's unfinished children). */
  cancelRuns?: string[];
  /**
   * For a park: if any of these conditions already holds, the run is queued instead of waiting,
   * closing the race between "nothing to wait for yet" and the arrival of what it waits for.
   */
  wakeIf?: { inputKeys?: string[]; childRunIds?: string[] };
  /** Inputs this commit consumed (their keys), so a later post for the same key is refused. */
  consumeInputs?: string[];
}

export type ExecutionResolution =
  | { action: 'retry' }
  | { action: 'succeeded'; result: Json }
  | { action: 'failed'; error: SerializedError };

export interface CommitOutcome {
  stateVersion: number;
  /** The status the run ended in (a park may end as queued through `wakeIf`). */
  status: RunStatus;
}

export interface ClaimRequest {
  owner: string;
  limit: number;
  leaseMs: number;
  /** `agent@version` keys this worker serves; runs of other versions are left for other workers. */
  served: string[];
  /**
   * Claim only runs on probation (they lost a lease without committing since: suspects of crashing
   * a process), instead of only runs that are not. Default false. A worker runs at most one
   * probation run at a time.
   */
  probation?: boolean;
  /**
   * With `probation`, for a worker that is not alone now: the loss count at which a suspect must run
   * alone (one short of quarantine). Such a suspect has its loss counted but takes no lease: it is
   * returned queued with `leaseOwner: null`, claimable at once, so no lease of it can be lost beside
   * other runs while the worker drains. Default: lease every suspect claimed.
   */
  heldAtLosses?: number;
}

/**
 * What a claim loop asks before preempting: interactive runs claimable since `cutoff` or earlier
 * (starved of a slot).
 */
export interface StarvedRequest {
  cutoff: number;
  /** `agent@version` keys this worker serves: it preempts only for runs it could claim itself. */
  served: string[];
  /** Count no more than this (the runs a worker could preempt). */
  limit: number;
}

export interface StarvedInteractive {
  /** Starved interactive runs, at most the request's limit. */
  count: number;
  /** Since when the oldest of them has been claimable; null when there is none. */
  oldestSince: number | null;
}

export interface RunFilter {
  status?: RunStatus;
  agent?: string;
  /** Runs whose error has this code (e.g. `poison_run`). */
  errorCode?: string;
  limit: number;
  /** Id of the last run of the previous page. */
  afterId?: string;
  /** Only the reruns of this run. */
  rerunOf?: string;
}

/** How deep GET /v1/runs/:id/tree walks (children nest no deeper in practice; a bound all the same). */
export const RUN_TREE_MAX_DEPTH = 64;

/** A run in a run tree: its depth under the root (0: the root) and its parent-end policy (null: the root). */
export interface RunTreeNode {
  run: RunRecord;
  depth: number;
  onParentEnd: 'cancel' | 'detach' | 'wait' | null;
}

export interface CreateRunResult {
  run: RunRecord;
  created: boolean;
}

/**
 * A new run made from another: a `rerun` copies nothing (lineage `rerunOf`); a `reset` copies
 * the source's journal positions 1..`position` (lineage `resetFrom`), so they are replayed, never
 * executed again. `run` is the new run: agent version and input may differ from the source's (a
 * fork).
 */
export interface CopyRunRequest {
  run: NewRun;
  sourceRunId: string;
  mode: 'rerun' | 'reset';
  /** For a reset: the last position copied (0 copies nothing). */
  position?: number;
}

export interface HeartbeatResult {
  /** Runs still leased to the owner, with their status (a `cancelling` one must stop). */
  held: Array<{
    id: string;
    status: RunStatus;
    stateVersion: number;
    /** A `cancelling` run's requested grace (ms); null: none given. */
    cancelGraceMs: number | null;
  }>;
}

export interface Store {
  readonly capabilities: StoreCapabilities;
  readonly durability: Durability;
  /**
   * Commits acknowledged to their writers but not yet durable at the `fsync` level (an upper bound
   * where exactness would cost).
   */
  notDurableCommits(): number;

  migrate(): Promise<void>;
  close(): Promise<void>;
  health(): Promise<StoreHealth>;

  // Tenants and keys
  /**
   * Creates a tenant with its first key; quotas not given take DEFAULT_TENANT_QUOTAS. A taken name
   * is `validation_failed`.
   */
  createTenant(
    name: string,
    apiKeyHash: string,
    quotas?: Partial<TenantQuotas>,
  ): Promise<TenantRecord>;
  /**
   * Changes the quotas given (null lifts a limit); `tenant_not_found` if there is no such tenant. A
   * patch naming a daily budget makes the tenant's runs waiting on `tenant_budget_exhausted` due
   * now (they check the budget again).
   */
  updateTenant(id: string, quotas: Partial<TenantQuotas>): Promise<TenantRecord>;
  getTenant(id: string): Promise<TenantRecord | null>;
  /** Every tenant, by name. */
  listTenants(): Promise<TenantRecord[]>;
  /** Runs a worker holds for the tenant now (what `maxConcurrentRuns` caps). */
  heldRuns(tenantId: string): Promise<number>;
  /**
   * For deadline-aware admission (src/domain/admission.ts): the agent's unfinished runs due no
   * later than `dueAt`, and its runs that succeeded since `since` with the fastest of them.
   */
  admissionSample(agent: string, dueAt: number, since: number): Promise<AdmissionSample>;
  /**
   * How many more runs the tenant may queue before `maxQueuedRuns` (0: its queue is full; null: no
   * limit). A read, for admitting runs created outside createRun (child runs, schedule fires):
   * concurrent creations may overshoot.
   */
  queuedRoom(tenantId: string): Promise<number | null>;
  /** Creates the tenant if missing and attaches the key to it if it is not attached yet. */
  ensureTenant(name: string, apiKeyHash: string): Promise<TenantRecord>;
  /** The tenant of a key that is not revoked (expiry is the caller's check: see findApiKey). */
  findTenantByKeyHash(apiKeyHash: string): Promise<TenantRecord | null>;
  /** Sums of the committed counters of the tenant's runs. */
  tenantUsage(tenantId: string): Promise<TenantUsage>;
  /**
   * Model tokens (input + output) and USD of the tenant's committed model effects that ended at or
   * after `sinceMs`.
   */
  tenantUsageSince(tenantId: string, sinceMs: number): Promise<{ tokens: number; costUsd: number }>;
  /**
   * Model tokens (input + output) and USD of every tenant's committed model effects that ended at
   * or after `sinceMs` (the platform-wide daily caps; on Postgres, the whole cluster's).
   */
  platformUsageSince(sinceMs: number): Promise<{ tokens: number; costUsd: number }>;
  /**
   * The average model spend (tokens, USD) of the agent's latest `limit` successful runs, and how
   * many there were (spend admission's rolling average).
   */
  agentSpendSample(
    agent: string,
    limit: number,
  ): Promise<{ runs: number; tokens: number; costUsd: number }>;

  // Runs
  /**
   * Inserts the run (and its `run.created` event), or returns the run already created with the same
   * idempotency key. Admission: a tenant with `maxQueuedRuns` queued runs already gets
   * `tenant_queue_full` (counted in the insert's transaction, serialised per tenant, so racing
   * creates cannot overshoot).
   */
  createRun(run: NewRun): Promise<CreateRunResult>;
  /**
   * Creates many runs in one write transaction, in order, each as createRun would; an item refused
   * with `idempotency_conflict` or `tenant_queue_full` is answered as that error (nothing of it is
   * written) and the others go on. Any other failure fails them all.
   */
  createRuns(runs: readonly NewRun[]): Promise<Array<CreateRunResult | KeelError>>;
  getRun(id: string): Promise<RunRecord | null>;
  listRuns(tenantId: string, filter: RunFilter): Promise<RunRecord[]>;
  /**
   * A run of the tenant and its descendants (children, theirs, ...), breadth first: at most `limit`
   * nodes, the root first; none when the run is not the tenant's.
   */
  listRunTree(tenantId: string, rootId: string, limit: number): Promise<RunTreeNode[]>;
  /**
   * Requests a run's cancellation; `graceMs` is the requester's grace for its tool calls in flight
   * (kept with the run; a run already cancelling keeps its own).
   */
  requestCancel(runId: string, graceMs?: number | null): Promise<RunRecord>;
  /** Stores an input; queues the run if it is waiting for that key. */
  provideInput(runId: string, key: string, value: Json): Promise<RunRecord>;
  getInput(runId: string, key: string): Promise<{ value: Json } | null>;
  /**
   * Delivers a message into a run (domain/messages.ts): deduplicated by id (a duplicate delivers
   * nothing and says so); `run_not_found`, or `run_terminal` for a run that has ended.
   */
  postMessage(runId: string, post: MessagePost): Promise<MessageDelivery>;
  /**
   * A compare-and-set write into a run tree's shared space (domain/shared-space.ts): the file's
   * next version if its latest is `expectedVersion`, else `{ ok: false, currentVersion }`; a write
   * id seen before answers the version it made.
   */
  writeSharedFile(write: SharedFileWrite): Promise<SharedWriteOutcome>;
  /** The latest version of a shared file, with its content, or null. */
  readSharedFile(rootRunId: string, path: string): Promise<SharedFile | null>;
  /** The latest version of each shared file whose path starts with `prefix`, by path. */
  listSharedFiles(rootRunId: string, prefix: string, limit: number): Promise<SharedFileInfo[]>;
  /**
   * Records an operator's verdict on a tool execution in state `unknown` (audited), and queues the
   * run if it was parked on it. `retry` runs the tool again; `succeeded`/`failed` settle it without
   * running it.
   */
  resolveExecution(
    runId: string,
    executionId: string,
    resolution: ExecutionResolution,
  ): Promise<RunRecord>;
  /**
   * Re-admits a quarantined run (failed with `poison_run`): queued again with its journal; audited.
   * 409 otherwise.
   */
  readmitRun(runId: string): Promise<RunRecord>;
  /**
   * Re-pins the tenant's queued runs of `agent@fromVersion` that never started (no journal entry)
   * to `toVersion`, up to `limit` of them, each audited (`run_version_migrated`) with a
   * `run.migrated` event. Queued runs that started are left, counted and (some) named. Whether the
   * new version is served is the caller's check.
   */
  migrateRunVersion(migration: VersionMigration): Promise<VersionMigrationResult>;
  /** Queued runs of every tenant by the agent version they are pinned to. */
  queuedByVersion(): Promise<QueuedVersion[]>;

  /**
   * Creates a run from another (rerun, reset, fork), or returns the one created before with the same
   * idempotency key. A reset needs an ended source (`run_not_terminal`), a position inside the
   * agent's journal (`reset_position_out_of_range`) and every position through it settled and not
   * compensated (`reset_position_unsettled`). Audited on the new run.
   */
  copyRun(request: CopyRunRequest): Promise<CreateRunResult>;

  // Work
  /**
   * Claims up to `limit` runs. Ordinary claims are fair across tenants (weighted fair queuing by
   * tenant weight, state kept in the store so every claimer follows one order;
   * src/domain/fair-share.ts), skip tenants at their concurrency cap, and inside a tenant take
   * interactive before batch with aging, then the run due first (src/domain/run-order.ts).
   * Probation claims take the most suspicious first.
   */
  claimRuns(request: ClaimRequest): Promise<RunRecord[]>;
  /**
   * Interactive runs starved of a slot (preemption): claimable since `cutoff` or earlier, of the
   * served versions, of tenants under their concurrency cap, suspects excluded. One indexed range
   * (runs_claimable), at most `limit` rows.
   */
  starvedInteractive(request: StarvedRequest): Promise<StarvedInteractive>;
  heartbeat(owner: string, runIds: string[], leaseMs: number): Promise<HeartbeatResult>;
  /** Gives up leases without progress (shutdown): runs become claimable at once. */
  releaseLeases(owner: string, runIds: string[]): Promise<void>;
  /** Expires every lease not held by `owner`: only for a store this process owns exclusively. */
  expireForeignLeases(owner: string): Promise<number>;
  commit(commit: RunCommit): Promise<CommitOutcome>;
  /**
   * Appends events about the attempt holding this lease (`run.started`, `run.recovered`) at once,
   * durably, without a commit: the state version and the poison counter (`leaseLosses`) do not move.
   * False when the lease is no longer held (nothing written).
   */
  announceAttempt(runId: string, leaseToken: number, events: EventWrite[]): Promise<boolean>;

  // Reading history
  loadJournal(runId: string): Promise<JournalEntry[]>;
  /**
   * The run's journal from position `fromSeq` on, in position order: what a resume from a snapshot
   * replays (the positions below it are covered by the snapshot).
   */
  loadJournalFrom(runId: string, fromSeq: number): Promise<JournalEntry[]>;
  /**
   * The run's latest snapshot (its last `checkpoint` journal entry), or null: the record that
   * covers every position below it. A resume starts from it; archival may drop history below it.
   */
  latestSnapshot(runId: string): Promise<RunSnapshot | null>;

  // Large payloads (issue 22; src/store/payload-offload.ts writes and resolves them)
  /** Stores one chunk of a payload (touching it if stored already). */
  putPayloadChunk(sha256: string, seq: number, bytes: Uint8Array): Promise<void>;
  /**
   * Seals a payload whose chunks are all stored and records that `runId` references it:
   * `run_payloads_too_large` past `runMaxBytes` of the run's payloads, `payload_incomplete` when a
   * chunk is missing.
   */
  sealPayload(runId: string, payload: PayloadInfo, runMaxBytes: number): Promise<void>;
  /** A sealed payload, or null. */
  getPayload(sha256: string): Promise<PayloadInfo | null>;
  readPayloadChunk(sha256: string, seq: number): Promise<Uint8Array | null>;
  runReferencesPayload(runId: string, sha256: string): Promise<boolean>;
  /** Drops a run's references (its journal was archived or deleted); returns how many. */
  releaseRunPayloads(runId: string): Promise<number>;
  /**
   * Deletes payloads no run references (and references of runs that no longer exist), untouched
   * since `before`; returns their hashes.
   */
  collectUnreferencedPayloads(before: number): Promise<string[]>;
  listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEventRecord[]>;
  /**
   * The tenant's events after `after` in the tenant-wide order (domain/event-cursor.ts), at most
   * `limit`, examining at most TENANT_EVENTS_EXAMINED_MAX events of all tenants (so a read costs a
   * bounded amount however rarely the filter matches). Never returns an event that a write still in
   * flight could sort before: an event committed after this read sorts after the page's cursor.
   */
  listTenantEvents(
    tenantId: string,
    filter: TenantEventFilter,
    after: EventCursor,
    limit: number,
  ): Promise<TenantEventPage>;
  /** The cursor of "now": events written after this call sort after it (a few earlier may too). */
  tenantEventsHead(): Promise<EventCursor>;
  /**
   * The run's attempts, oldest first: each claim that took its lease, with its worker, times and
   * how it ended (src/domain/attempts.ts).
   */
  listAttempts(runId: string): Promise<AttemptRecord[]>;

  /** Live work for metrics at scrape time (indexed queries only). */
  liveMetrics(now: number): Promise<LiveMetrics>;
  // Read-only aggregates, never on the commit path
  /**
   * The tenant's runs grouped by agent and status (counts, consumption, oldest queued and waiting
   * times).
   */
  summarizeRuns(tenantId: string): Promise<RunSummaryRow[]>;
  /**
   * The tenant's runs that ended since `sinceMs`, counted per `bucketMs`-wide bucket and final
   * status.
   */
  countEndedRuns(tenantId: string, sinceMs: number, bucketMs: number): Promise<EndedRunsBucket[]>;
  /** Every tenant's runs grouped by status, for the operator's view (scans all runs). */
  summarizeTenants(): Promise<TenantSummaryRow[]>;

  /** Called after each durable write with the runs it changed and why. */
  onChange(listener: (changes: readonly RunChange[]) => void): () => void;

  // Serving processes (serving-processes.ts)
  /**
   * Inserts or refreshes this process's row (`lastSeenAt` = now) with the versions it serves; rows
   * of processes unseen for a day are forgotten.
   */
  announceProcess(process: Omit<ServingProcess, 'lastSeenAt'>): Promise<void>;
  /** Removes a process's row (a graceful stop). */
  retireProcess(workerId: string): Promise<void>;
  /** Processes seen at `seenSince` (ms) or later, oldest first. */
  listServingProcesses(seenSince: number): Promise<ServingProcess[]>;

  // Pool slots leased across processes (pool-slot-leases.ts; issue 24)
  /** Starts a holder incarnation: a new fencing token and a lease of `leaseMs`; forgets expired holders. */
  openPoolSlotHolder(holder: string, leaseMs: number): Promise<PoolSlotHolder>;
  /**
   * Grants up to `count` slots, never past the pool's limit or the tenant's cap over every live
   * holder, nor past the holder's fair share while another waits. `pool_slot_lease_lost` if the
   * holder's lease has expired.
   */
  grantPoolSlots(request: PoolSlotRequest): Promise<PoolSlotGrant>;
  /** Gives slots back; false when they were not held under that token (a lost lease). */
  returnPoolSlots(
    pool: string,
    tenantId: string,
    token: number,
    count: number,
    wanted: number,
  ): Promise<boolean>;
  /** Extends the holder's lease unless it expired; forgets expired holders and their slots. */
  renewPoolSlotHolder(token: number, leaseMs: number): Promise<PoolSlotRenewal>;
  /** Gives back every slot of the holder and ends it (a graceful stop). */
  dropPoolSlotHolder(token: number): Promise<void>;
  /** Slot rows of live holders. */
  listPoolSlotLeases(): Promise<PoolSlotLease[]>;

  // Sandbox nodes (src/domain/sandbox-nodes.ts; issue 24)
  /** Adds a pending node with its token's hash (`node_exists` if the name or hash is taken). */
  createNode(name: string, tokenHash: string): Promise<SandboxNodeRecord>;
  /** The node a token's hash belongs to, if any. */
  findNodeByToken(tokenHash: string): Promise<SandboxNodeRecord | undefined>;
  /** A node's url and capacity, heartbeat now; a drained node stays drained (`node_not_found`). */
  registerNode(id: string, url: string, capacity: NodeCapacity): Promise<SandboxNodeRecord>;
  /** A registered node's load, heartbeat now; false when gone or never registered. */
  heartbeatNode(id: string, load: NodeLoadReport): Promise<boolean>;
  /** drain | undrain through the transition table (`node_not_found`, `node_state_conflict`). */
  moveNode(id: string, event: NodeEvent): Promise<SandboxNodeRecord>;
  /** Removes a node and its token (`node_not_found`). */
  removeNode(id: string): Promise<void>;
  /** Every node, by name. */
  listNodes(): Promise<SandboxNodeRecord[]>;

  // API keys and the audit log (src/domain/access.ts; issue 20)
  /** Adds a key to the tenant (`tenant_not_found` if there is none); the secret is never stored. */
  createApiKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /** The tenant's keys, oldest first, revoked and expired ones included. */
  listApiKeys(tenantId: string): Promise<ApiKeyRecord[]>;
  /** Revokes the key at once (idempotent); `key_not_found` if the tenant has no such key. */
  revokeApiKey(tenantId: string, id: string): Promise<ApiKeyRecord>;
  /** The key with this hash and its tenant (revoked and expired keys too: the caller refuses them). */
  findApiKey(keyHash: string): Promise<{ key: ApiKeyRecord; tenant: TenantRecord } | null>;
  /** Stamps the key's last use now (callers throttle it: not a write per request). */
  touchApiKey(id: string): Promise<void>;
  /** Adds a named platform admin (`admin_principal_exists` if the name is taken). */
  createAdminPrincipal(name: string, keyHash: string): Promise<AdminPrincipalRecord>;
  /** Every named platform admin, oldest first, revoked ones included. */
  listAdminPrincipals(): Promise<AdminPrincipalRecord[]>;
  /** Revokes a named platform admin at once (idempotent; `admin_principal_not_found`). */
  revokeAdminPrincipal(id: string): Promise<AdminPrincipalRecord>;
  /** The named platform admin with this key hash (revoked ones too: the caller refuses them). */
  findAdminPrincipal(keyHash: string): Promise<AdminPrincipalRecord | null>;
  /**
   * The deployment's secret `name` (the delegated tokens' signing key): `candidate` if none is
   * stored yet (then stored), else the stored one, so every process on the store shares it.
   */
  deploymentKey(name: string, candidate: string): Promise<string>;
  /** Appends an entry to the tenant's audit log, stamped with the store's time. */
  appendAudit(entry: NewAuditEntry): Promise<void>;
  /** A page of the tenant's audit log, newest first. */
  listAudit(tenantId: string, filter: AuditFilter): Promise<AuditEntry[]>;
  /** Appends an entry to the platform audit log (platform admins' actions), stamped with the store's time. */
  appendPlatformAudit(entry: NewPlatformAuditEntry): Promise<void>;
  /** A page of the platform audit log, newest first. */
  listPlatformAudit(filter: PlatformAuditFilter): Promise<PlatformAuditEntry[]>;
  /** Deletes every audit entry older than `before` (ms), in bounded batches; returns how many. */
  pruneAudit(before: number): Promise<number>;

  // Secrets, sealed (src/domain/secrets.ts; src/secrets/ seals and opens them; issue 20)
  /** Stores a new secret at version 1; `secret_exists` if the tenant has one of that name. */
  createSecret(tenantId: string, name: string, sealed: SealedSecret): Promise<SecretInfo>;
  /**
   * Replaces version `version`'s value and bumps the version; `secret_not_found`, or
   * `secret_conflict` when another rotation came first.
   */
  rotateSecret(
    tenantId: string,
    name: string,
    version: number,
    sealed: SealedSecret,
  ): Promise<SecretInfo>;
  /** One secret, sealed; null if the tenant has none of that name. */
  getSecret(tenantId: string, name: string): Promise<SecretRecord | null>;
  /** The tenant's secrets by name: names, versions and times, never values. */
  listSecrets(tenantId: string): Promise<SecretInfo[]>;
  /** Deletes the secret; `secret_not_found` if there is none. */
  deleteSecret(tenantId: string, name: string): Promise<void>;
  /** Whether any tenant has a secret (a start without a key-encryption key is refused then). */
  anySecret(): Promise<boolean>;
  // Tool policy and human approval (src/domain/tool-policy.ts, approvals.ts; issue 20)
  /** The tenant's tool policy; null when it has none. */
  getToolPolicy(tenantId: string): Promise<ToolPolicy | null>;
  /** Replaces the tenant's tool policy (`tenant_not_found` if there is none). */
  putToolPolicy(tenantId: string, policy: ToolPolicy): Promise<ToolPolicy>;
  /** Files a pending request for a call, once: filing it again returns the request as stored. */
  requestApproval(request: NewApproval): Promise<ApprovalRecord>;
  getApproval(runId: string, executionId: string): Promise<ApprovalRecord | null>;
  /** A page of the tenant's requests, newest first. */
  listApprovals(tenantId: string, filter: ApprovalFilter): Promise<ApprovalRecord[]>;
  /**
   * A human's decision on a pending request; queues the run if it is parked. `approval_not_found`,
   * `approval_already_decided`, `approval_expired`, `run_terminal`.
   */
  decideApproval(
    runId: string,
    executionId: string,
    decision: ApprovalDecision,
  ): Promise<ApprovalRecord>;
  /** Expires a pending request past its time; returns the request as it stands (null: none). */
  expireApproval(runId: string, executionId: string): Promise<ApprovalRecord | null>;
  // The approver webhook and its outbox (src/domain/approval-webhooks.ts; issue 20). Requests,
  // decisions and expiries above file their notification in their own transaction.
  /** Sets (replaces) the tenant's webhook (`tenant_not_found` if there is no such tenant). */
  putApprovalWebhook(webhook: Omit<ApprovalWebhook, 'updatedAt'>): Promise<ApprovalWebhook>;
  getApprovalWebhook(tenantId: string): Promise<ApprovalWebhook | null>;
  /** Removes it; false when there was none. Notifications filed already are still delivered. */
  deleteApprovalWebhook(tenantId: string): Promise<boolean>;
  /** Claims up to `limit` due notifications for `leaseMs` (each claim bumps its fencing token). */
  claimApprovalNotifications(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<ApprovalNotificationRecord[]>;
  /** Records one delivery attempt under the claim's token; false when the claim was lost. */
  finishApprovalNotification(
    id: string,
    claimToken: number,
    outcome: DeliveryOutcome,
    now: number,
  ): Promise<boolean>;
  /** The tenant's notifications and their delivery state, newest first. */
  listApprovalNotifications(
    tenantId: string,
    filter: ApprovalNotificationFilter,
  ): Promise<ApprovalNotificationRecord[]>;
  /** Frees claims of other owners: only for a store this process owns alone; returns how many. */
  releaseApprovalNotificationClaims(owner: string): Promise<number>;
  // MCP servers and tool pins (src/store/mcp-rows.ts; issue 19)
  /** Inserts or replaces a tenant's MCP server configuration (`tenant_not_found` if none). */
  putMcpServer(tenantId: string, name: string, config: Json): Promise<McpServerRow>;
  /** The tenant's MCP server configurations, by name. */
  listMcpServers(tenantId: string): Promise<McpServerRow[]>;
  /** Removes one; false when the tenant had none of this name. */
  deleteMcpServer(tenantId: string, name: string): Promise<boolean>;
  /**
   * Pins a server's tool list for a run unless it is pinned already, and returns the pin in force
   * (the first one written, whoever wrote it).
   */
  pinMcpTools(
    runId: string,
    server: string,
    pin: { hash: string; tools: Json },
  ): Promise<McpToolPinRow>;
  /** The run's pin for a server, or null. */
  getMcpToolPin(runId: string, server: string): Promise<McpToolPinRow | null>;
}

/** A request to move queued, never-started runs from one version of an agent to another. */
export interface VersionMigration {
  tenantId: string;
  agent: string;
  fromVersion: string;
  toVersion: string;
  /** At most this many runs move in one call. */
  limit: number;
  /** Who asked, for the audit record (e.g. the tenant's key name). */
  actor?: string;
}

export interface VersionMigrationResult {
  /** The runs moved, by id. */
  moved: string[];
  /** Queued runs of the old version left where they were because they had started (some ids). */
  started: string[];
  startedTotal: number;
  /** True when `limit` runs moved and more may be left: call again. */
  more: boolean;
}

export interface QueuedVersion {
  agent: string;
  version: string;
  runs: number;
}
