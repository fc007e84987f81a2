// The Store both backends are, written once: every method is a shared procedure (procedures/) or a
// shared read, run through the two hooks a backend supplies: `write` (its group-commit transaction,
// driven synchronously on SQLite and with await on Postgres) and `read` (its read connection). A
// backend adds only what it alone owns: connections, migrations, durability, health, the change
// feed and how a heartbeat reaches the database.
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
  ApprovalNotificationFilter,
  ApprovalNotificationRecord,
  ApprovalWebhook,
  DeliveryOutcome,
} from '../domain/approval-webhooks.ts';
import type {
  SharedFile,
  SharedFileInfo,
  SharedFileWrite,
  SharedWriteOutcome,
} from '../domain/shared-space.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { EventCursor, TenantEventFilter, TenantEventPage } from '../domain/event-cursor.ts';
import type { Json } from '../domain/json.ts';
import type { RunSnapshot } from '../domain/run-snapshot.ts';
import type { MessageDelivery, MessagePost } from '../domain/messages.ts';
import type { SealedSecret, SecretInfo, SecretRecord } from '../domain/secrets.ts';
import type {
  JournalEntry,
  NewRun,
  RunEventRecord,
  RunRecord,
  TenantQuotas,
  TenantRecord,
} from '../domain/records.ts';
import type { LiveMetrics } from './live-metrics.ts';
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
import * as access from './procedures/access.ts';
import * as approvalNotifications from './procedures/approval-notifications.ts';
import * as approvals from './procedures/approvals.ts';
import * as attempts from './procedures/attempts.ts';
import * as claims from './procedures/claims.ts';
import { FairBacklogState } from './fair-claim.ts';
import { applyCommit, type StaleCommit } from './procedures/commit.ts';
import * as lineage from './procedures/lineage.ts';
import * as mcp from './procedures/mcp.ts';
import * as messages from './procedures/messages.ts';
import type { McpServerRow, McpToolPinRow } from './mcp-rows.ts';
import * as processes from './procedures/processes.ts';
import * as poolSlots from './procedures/pool-slots.ts';
import type {
  PoolSlotGrant,
  PoolSlotHolder,
  PoolSlotLease,
  PoolSlotRenewal,
  PoolSlotRequest,
} from './pool-slot-leases.ts';
import * as nodes from './procedures/nodes.ts';
import type {
  NodeCapacity,
  NodeEvent,
  NodeLoadReport,
  SandboxNodeRecord,
} from '../domain/sandbox-nodes.ts';
import * as reads from './procedures/reads.ts';
import type { ServingProcess } from './serving-processes.ts';
import * as runs from './procedures/runs.ts';
import * as secrets from './procedures/secrets.ts';
import * as payloads from './procedures/payloads.ts';
import * as sharedSpace from './procedures/shared-space.ts';
import * as tenants from './procedures/tenants.ts';
import * as versions from './procedures/versions.ts';
import { run, type Procedure, type Tx } from './procedures/transaction.ts';
import type { EndedRunsBucket, RunSummaryRow, TenantSummaryRow } from './run-summaries.ts';
import type {
  ClaimRequest,
  CommitOutcome,
  CopyRunRequest,
  CreateRunResult,
  Durability,
  EventWrite,
  ExecutionResolution,
  HeartbeatResult,
  RunChange,
  RunCommit,
  RunFilter,
  RunTreeNode,
  StarvedInteractive,
  StarvedRequest,
  Store,
  StoreCapabilities,
  StoreHealth,
} from './store.ts';
import type { TenantUsage } from './usage.ts';
import type { PayloadInfo } from '../domain/payload-ref.ts';
import type { QueuedVersion, VersionMigration, VersionMigrationResult } from './store.ts';

/** How a backend queues a write transaction. */
export interface WriteOptions {
  /**
   * False for writes that acknowledge nothing outside Keel (claims, heartbeats): they need not wait
   * for a flush.
   */
  fsync: boolean;
  /**
   * The run (or object) the write is about: where transactions overlap, its writes still apply in
   * order.
   */
  key?: string;
  /**
   * A transaction of its own: it holds a lock other claimers wait for, so it must not wait for
   * others' writes.
   */
  alone?: boolean;
  /**
   * Each statement of the procedure is a whole transaction by itself (it needs no transaction
   * around them, and announces nothing: it touches no run): a backend whose statements commit on
   * their own may send them without BEGIN and COMMIT. Implies `alone`.
   */
  autocommit?: boolean;
}

const DURABLE: WriteOptions = { fsync: true };
/** Longest a tenant-event horizon is reused (see #eventHorizon). */
const EVENT_HORIZON_REUSE_MS = 100;
/**
 * Claims acknowledge nobody outside Keel, so they need no flush of their own: a later flushed
 * commit makes them durable too, and a claim lost to a power cut only leaves the run queued (no
 * effect can have committed under it).
 */
const LEASE_ONLY: WriteOptions = { fsync: false };
/**
 * A fair claim: lease state only, in transactions of its own. With shared fair claims (Postgres)
 * each pass is one statement, its own transaction (procedures/claims.ts), so it goes without BEGIN
 * and COMMIT, and keel_fair_claim (migration 0054) commits it with synchronous_commit off, as
 * LEASE_ONLY. Why a claim may be lost without harm: only a crash of the database server (or the
 * machine) within its WAL flush delay loses it, and then it is lost whole (lease, attempt, the
 * tenant's virtual time): the run is queued again as before, under its old fencing token and
 * state version. No commit under the lost lease can have been durable, since flushing any later
 * commit flushes the WAL up to it, claim included. The next claim gives the run the same token and
 * state version the lost one gave; if the worker that held the lost claim is still running, its
 * commits and those of the new holder are both conditioned on (token, stateVersion), and every
 * commit advances the state version: the first to commit wins, the other is fenced off
 * (stale_write) and drops the run. So each effect still commits at most once, and what may run
 * twice is only an effect in flight and not committed, as after any crash or lost lease (dispatch is
 * at least once: docs/guides/agents-and-tools.md, "Guarantees in detail").
 */
const FAIR_CLAIM: WriteOptions = { fsync: false, alone: true, autocommit: true };
/** A pool-slot grant: durable, in a transaction of its own (it holds the pool's lock). */
const POOL_GRANT: WriteOptions = { fsync: true, alone: true };
/**
 * Every other write of the cluster's pool-slot rows (return, renew, open, drop): lease state only,
 * and in a transaction of its own. Those rows are what every process's grants lock; a group commit
 * would hold them until its slowest member ended (a batch of 500 run creations: seconds), and every
 * grant of the pool, in every process, would wait that long (seen at 10,000 concurrent runs).
 */
const POOL_LEASE: WriteOptions = { fsync: false, alone: true };
/**
 * Run creations: durable; a batch of several goes in a transaction of its own, so its hundreds of
 * statements never hold up the group commit that effect commits of running runs share.
 */
const createOptions = (count: number): WriteOptions =>
  count > 1 ? { fsync: true, alone: true } : DURABLE;

export abstract class ProcedureStore implements Store {
  /** When this store last refreshed the backlogged tenants of fair claims (sharedFairClaims). */
  readonly #fairBacklog = new FairBacklogState();
  /**
   * The tenant event order's horizon (reads.eventHorizon), shared by the tenant-event reads of this
   * process until the next change is heard or EVENT_HORIZON_REUSE_MS has passed (a change written
   * by no Keel, or a lost notification): streams woken by the same change (one per follower)
   * compute it once. Reusing it is safe: a horizon only grows, and an older one holds back more.
   */
  #eventHorizon: { value: Promise<string>; at: number } | undefined;
  abstract readonly capabilities: StoreCapabilities;
  abstract readonly durability: Durability;
  abstract notDurableCommits(): number;
  abstract migrate(): Promise<void>;
  abstract close(): Promise<void>;
  abstract health(): Promise<StoreHealth>;
  abstract heartbeat(owner: string, runIds: string[], leaseMs: number): Promise<HeartbeatResult>;

  /**
   * Runs a procedure in a write transaction (group commit) and settles when the transaction reaches
   * the durability.
   */
  protected abstract write<T>(
    options: WriteOptions,
    procedure: (tx: Tx) => Procedure<T>,
  ): Promise<T>;
  /** Runs a read procedure outside any write transaction. */
  protected abstract read<T>(procedure: Procedure<T>): Promise<T>;

  readonly #listeners = new Set<(changes: readonly RunChange[]) => void>();

  onChange(listener: (changes: readonly RunChange[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells the change listeners which runs a committed transaction (or another process) changed. */
  protected emitChanges(changes: readonly RunChange[]): void {
    // Events may have been written below a new horizon: the next tenant-event read finds it anew.
    this.#eventHorizon = undefined;
    for (const listener of this.#listeners) listener(changes);
  }

  // Tenants

  createTenant(
    name: string,
    apiKeyHash: string,
    quotas?: Partial<TenantQuotas>,
  ): Promise<TenantRecord> {
    return this.write(DURABLE, (tx) => tenants.createTenant(tx, name, apiKeyHash, quotas));
  }

  updateTenant(id: string, quotas: Partial<TenantQuotas>): Promise<TenantRecord> {
    return this.write(DURABLE, (tx) => tenants.updateTenant(tx, id, quotas));
  }

  ensureTenant(name: string, apiKeyHash: string): Promise<TenantRecord> {
    return this.write(DURABLE, (tx) => tenants.ensureTenant(tx, name, apiKeyHash));
  }

  getTenant(id: string): Promise<TenantRecord | null> {
    return this.read(reads.getTenant(id));
  }

  listTenants(): Promise<TenantRecord[]> {
    return this.read(reads.listTenants());
  }

  heldRuns(tenantId: string): Promise<number> {
    return this.read(reads.heldRuns(tenantId));
  }

  admissionSample(agent: string, dueAt: number, since: number): Promise<AdmissionSample> {
    return this.read(reads.admissionSample(agent, dueAt, since));
  }

  queuedRoom(tenantId: string): Promise<number | null> {
    return this.read(tenants.queuedRoom(tenantId));
  }

  findTenantByKeyHash(apiKeyHash: string): Promise<TenantRecord | null> {
    return this.read(reads.findTenantByKeyHash(apiKeyHash));
  }

  tenantUsage(tenantId: string): Promise<TenantUsage> {
    return this.read(reads.tenantUsage(tenantId));
  }

  tenantUsageSince(
    tenantId: string,
    sinceMs: number,
  ): Promise<{ tokens: number; costUsd: number }> {
    return this.read(reads.tenantUsageSince(tenantId, sinceMs));
  }

  platformUsageSince(sinceMs: number): Promise<{ tokens: number; costUsd: number }> {
    return this.read(reads.platformUsageSince(sinceMs));
  }

  agentSpendSample(
    agent: string,
    limit: number,
  ): Promise<{ runs: number; tokens: number; costUsd: number }> {
    return this.read(reads.agentSpendSample(agent, limit));
  }

  // Serving processes

  announceProcess(process: Omit<ServingProcess, 'lastSeenAt'>): Promise<void> {
    return this.write(LEASE_ONLY, (tx) => processes.announceProcess(tx, process));
  }

  retireProcess(workerId: string): Promise<void> {
    return this.write(LEASE_ONLY, () => processes.retireProcess(workerId));
  }

  listServingProcesses(seenSince: number): Promise<ServingProcess[]> {
    return this.read(processes.listServingProcesses(seenSince));
  }

  // Pool slots leased across processes

  openPoolSlotHolder(holder: string, leaseMs: number): Promise<PoolSlotHolder> {
    return this.write(POOL_LEASE, (tx) => poolSlots.openPoolSlotHolder(tx, holder, leaseMs));
  }

  grantPoolSlots(request: PoolSlotRequest): Promise<PoolSlotGrant> {
    // Durable and alone: a grant lost to a database crash would let another process take the same
    // slot, and the pool's lock must not wait for other writes' flush.
    return this.write(POOL_GRANT, (tx) => poolSlots.grantPoolSlots(tx, request));
  }

  returnPoolSlots(
    pool: string,
    tenantId: string,
    token: number,
    count: number,
    wanted: number,
  ): Promise<boolean> {
    return this.write(POOL_LEASE, () =>
      poolSlots.returnPoolSlots(pool, tenantId, token, count, wanted),
    );
  }

  renewPoolSlotHolder(token: number, leaseMs: number): Promise<PoolSlotRenewal> {
    return this.write(POOL_LEASE, (tx) => poolSlots.renewPoolSlotHolder(tx, token, leaseMs));
  }

  dropPoolSlotHolder(token: number): Promise<void> {
    return this.write(POOL_LEASE, () => poolSlots.dropPoolSlotHolder(token));
  }

  listPoolSlotLeases(): Promise<PoolSlotLease[]> {
    return this.read(poolSlots.listPoolSlotLeases(Date.now()));
  }

  // Sandbox nodes

  createNode(name: string, tokenHash: string): Promise<SandboxNodeRecord> {
    return this.write(DURABLE, (tx) => nodes.createNode(tx, name, tokenHash));
  }

  findNodeByToken(tokenHash: string): Promise<SandboxNodeRecord | undefined> {
    return this.read(nodes.findNodeByToken(tokenHash));
  }

  registerNode(id: string, url: string, capacity: NodeCapacity): Promise<SandboxNodeRecord> {
    return this.write(LEASE_ONLY, (tx) => nodes.registerNode(tx, id, url, capacity));
  }

  heartbeatNode(id: string, load: NodeLoadReport): Promise<boolean> {
    return this.write(LEASE_ONLY, (tx) => nodes.heartbeatNode(tx, id, load));
  }

  moveNode(id: string, event: NodeEvent): Promise<SandboxNodeRecord> {
    return this.write(DURABLE, () => nodes.moveNode(id, event));
  }

  removeNode(id: string): Promise<void> {
    return this.write(DURABLE, () => nodes.removeNode(id));
  }

  listNodes(): Promise<SandboxNodeRecord[]> {
    return this.read(nodes.listNodes());
  }

  // Runs

  createRun(newRun: NewRun): Promise<CreateRunResult> {
    return this.write(DURABLE, (tx) => runs.createRun(tx, newRun));
  }

  createRuns(newRuns: readonly NewRun[]): Promise<Array<CreateRunResult | KeelError>> {
    return this.write(createOptions(newRuns.length), (tx) => runs.createRuns(tx, newRuns));
  }

  getRun(id: string): Promise<RunRecord | null> {
    return this.read(reads.getRun(id));
  }

  listRuns(tenantId: string, filter: RunFilter): Promise<RunRecord[]> {
    return this.read(reads.listRuns(tenantId, filter));
  }

  listRunTree(tenantId: string, rootId: string, limit: number): Promise<RunTreeNode[]> {
    return this.read(reads.listRunTree(tenantId, rootId, limit));
  }

  requestCancel(runId: string, graceMs: number | null = null): Promise<RunRecord> {
    return this.write({ fsync: true, key: runId }, (tx) => runs.requestCancel(tx, runId, graceMs));
  }

  provideInput(runId: string, key: string, value: Json): Promise<RunRecord> {
    return this.write({ fsync: true, key: runId }, (tx) =>
      runs.provideInput(tx, runId, key, value),
    );
  }

  postMessage(runId: string, post: MessagePost): Promise<MessageDelivery> {
    return this.write({ fsync: true, key: runId }, (tx) => messages.postMessage(tx, runId, post));
  }

  writeSharedFile(write: SharedFileWrite): Promise<SharedWriteOutcome> {
    return this.write({ fsync: true, key: `shared:${write.rootRunId}` }, (tx) =>
      sharedSpace.writeSharedFile(tx, write),
    );
  }

  // Large payloads: one transaction per chunk, so no statement holds a whole payload. A chunk needs
  // no flush of its own: its seal is flushed after it, and an unsealed chunk is only collectable.
  putPayloadChunk(sha256: string, seq: number, bytes: Uint8Array): Promise<void> {
    return this.write({ fsync: false, key: `payload:${sha256}` }, (tx) =>
      payloads.putPayloadChunk(tx, sha256, seq, bytes),
    );
  }

  sealPayload(runId: string, payload: PayloadInfo, runMaxBytes: number): Promise<void> {
    return this.write({ fsync: true, key: runId }, (tx) =>
      payloads.sealPayload(tx, runId, payload, runMaxBytes),
    );
  }

  getPayload(sha256: string): Promise<PayloadInfo | null> {
    return this.read(payloads.getPayload(sha256));
  }

  readPayloadChunk(sha256: string, seq: number): Promise<Uint8Array | null> {
    return this.read(payloads.readPayloadChunk(sha256, seq));
  }

  runReferencesPayload(runId: string, sha256: string): Promise<boolean> {
    return this.read(payloads.runReferencesPayload(runId, sha256));
  }

  releaseRunPayloads(runId: string): Promise<number> {
    return this.write(DURABLE, () => payloads.releaseRunPayloads(runId));
  }

  collectUnreferencedPayloads(before: number): Promise<string[]> {
    return this.write(DURABLE, () => payloads.collectUnreferencedPayloads(before));
  }

  readSharedFile(rootRunId: string, path: string): Promise<SharedFile | null> {
    return this.read(sharedSpace.readSharedFile(rootRunId, path));
  }

  listSharedFiles(rootRunId: string, prefix: string, limit: number): Promise<SharedFileInfo[]> {
    return this.read(sharedSpace.listSharedFiles(rootRunId, prefix, limit));
  }

  getInput(runId: string, key: string): Promise<{ value: Json } | null> {
    return this.read(reads.getInput(runId, key));
  }

  resolveExecution(
    runId: string,
    executionId: string,
    resolution: ExecutionResolution,
  ): Promise<RunRecord> {
    return this.write({ fsync: true, key: runId }, (tx) =>
      runs.resolveExecution(tx, runId, executionId, resolution),
    );
  }

  readmitRun(runId: string): Promise<RunRecord> {
    return this.write({ fsync: true, key: runId }, (tx) => runs.readmitRun(tx, runId));
  }

  copyRun(request: CopyRunRequest): Promise<CreateRunResult> {
    return this.write(DURABLE, (tx) => lineage.copyRun(tx, request));
  }

  migrateRunVersion(migration: VersionMigration): Promise<VersionMigrationResult> {
    return this.write(DURABLE, (tx) => versions.migrateRunVersion(tx, migration));
  }

  queuedByVersion(): Promise<QueuedVersion[]> {
    return this.read(versions.queuedByVersion());
  }

  // Work

  /**
   * A fair claim runs in a transaction of its own: the tenants (or, with one writer, the fair
   * clock) it locks are held only as long as it takes itself.
   */
  claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    return this.write(request.probation === true ? LEASE_ONLY : FAIR_CLAIM, (tx) =>
      claims.claimRuns(tx, request, this.#fairBacklog),
    );
  }

  starvedInteractive(request: StarvedRequest): Promise<StarvedInteractive> {
    return this.read(reads.starvedInteractive(request));
  }

  releaseLeases(owner: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return Promise.resolve();
    return this.write(DURABLE, (tx) => runs.releaseLeases(tx, owner, runIds));
  }

  expireForeignLeases(owner: string): Promise<number> {
    return this.write(DURABLE, function* (tx) {
      return (yield run('expire-foreign-leases', { owner, now: tx.now })) as number;
    });
  }

  announceAttempt(runId: string, leaseToken: number, events: EventWrite[]): Promise<boolean> {
    return this.write({ fsync: true, key: runId }, (tx) =>
      attempts.announceAttempt(tx, runId, leaseToken, events),
    );
  }

  commit(commit: RunCommit): Promise<CommitOutcome> {
    return this.writeCommit(commit).then((outcome) => {
      if ('stale' in outcome)
        throw new KeelError('stale_write', `commit to run ${commit.runId} was fenced off`, {
          details: outcome.stale,
        });
      return outcome;
    });
  }

  /**
   * Applies a commit, or audits it as stale; a backend may apply some commits its own faster way.
   */
  protected writeCommit(commit: RunCommit): Promise<CommitOutcome | StaleCommit> {
    return this.write({ fsync: true, key: commit.runId }, (tx) => applyCommit(tx, commit));
  }

  // History and metrics

  loadJournal(runId: string): Promise<JournalEntry[]> {
    return this.read(reads.loadJournal(runId));
  }

  loadJournalFrom(runId: string, fromSeq: number): Promise<JournalEntry[]> {
    return this.read(reads.loadJournalFrom(runId, fromSeq));
  }

  latestSnapshot(runId: string): Promise<RunSnapshot | null> {
    return this.read(reads.latestSnapshot(runId));
  }

  listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEventRecord[]> {
    return this.read(reads.listEvents(runId, afterSeq, limit));
  }

  async listTenantEvents(
    tenantId: string,
    filter: TenantEventFilter,
    after: EventCursor,
    limit: number,
  ): Promise<TenantEventPage> {
    const now = Date.now();
    if (this.#eventHorizon === undefined || now - this.#eventHorizon.at >= EVENT_HORIZON_REUSE_MS) {
      const entry = { value: this.read(reads.eventHorizon()), at: now };
      this.#eventHorizon = entry;
      entry.value.catch(() => {
        if (this.#eventHorizon === entry) this.#eventHorizon = undefined;
      });
    }
    const horizon = await this.#eventHorizon.value;
    return this.read(reads.listTenantEvents(tenantId, filter, after, limit, horizon));
  }

  tenantEventsHead(): Promise<EventCursor> {
    return this.read(reads.tenantEventsHead());
  }

  listAttempts(runId: string): Promise<AttemptRecord[]> {
    return this.read(attempts.listAttempts(runId));
  }

  liveMetrics(now: number): Promise<LiveMetrics> {
    return this.read(reads.liveMetrics(now));
  }

  // Dashboard: read-only aggregates, never on the commit path

  summarizeRuns(tenantId: string): Promise<RunSummaryRow[]> {
    return this.read(reads.summarizeRuns(tenantId));
  }

  countEndedRuns(tenantId: string, sinceMs: number, bucketMs: number): Promise<EndedRunsBucket[]> {
    return this.read(reads.countEndedRuns(tenantId, sinceMs, bucketMs));
  }

  summarizeTenants(): Promise<TenantSummaryRow[]> {
    return this.read(reads.summarizeTenants());
  }

  // API keys and the audit log

  createApiKey(key: NewApiKey): Promise<ApiKeyRecord> {
    return this.write(DURABLE, (tx) => access.createApiKey(tx, key));
  }

  listApiKeys(tenantId: string): Promise<ApiKeyRecord[]> {
    return this.read(access.listApiKeys(tenantId));
  }

  revokeApiKey(tenantId: string, id: string): Promise<ApiKeyRecord> {
    return this.write(DURABLE, (tx) => access.revokeApiKey(tx, tenantId, id));
  }

  findApiKey(keyHash: string): Promise<{ key: ApiKeyRecord; tenant: TenantRecord } | null> {
    return this.read(access.findApiKey(keyHash));
  }

  /** A last-used stamp acknowledges nothing: it need not wait for a flush. */
  touchApiKey(id: string): Promise<void> {
    return this.write(LEASE_ONLY, (tx) => access.touchApiKey(tx, id));
  }

  createAdminPrincipal(name: string, keyHash: string): Promise<AdminPrincipalRecord> {
    return this.write(DURABLE, (tx) => access.createAdminPrincipal(tx, name, keyHash));
  }

  listAdminPrincipals(): Promise<AdminPrincipalRecord[]> {
    return this.read(access.listAdminPrincipals());
  }

  revokeAdminPrincipal(id: string): Promise<AdminPrincipalRecord> {
    return this.write(DURABLE, (tx) => access.revokeAdminPrincipal(tx, id));
  }

  findAdminPrincipal(keyHash: string): Promise<AdminPrincipalRecord | null> {
    return this.read(access.findAdminPrincipal(keyHash));
  }

  deploymentKey(name: string, candidate: string): Promise<string> {
    return this.write(DURABLE, (tx) => access.deploymentKey(tx, name, candidate));
  }

  appendAudit(entry: NewAuditEntry): Promise<void> {
    return this.write(DURABLE, (tx) => access.appendAudit(tx, entry));
  }

  // Secrets (sealed: src/secrets/ encrypts and decrypts)

  createSecret(tenantId: string, name: string, sealed: SealedSecret): Promise<SecretInfo> {
    return this.write(DURABLE, (tx) => secrets.createSecret(tx, tenantId, name, sealed));
  }

  rotateSecret(
    tenantId: string,
    name: string,
    version: number,
    sealed: SealedSecret,
  ): Promise<SecretInfo> {
    return this.write(DURABLE, (tx) => secrets.rotateSecret(tx, tenantId, name, version, sealed));
  }

  getSecret(tenantId: string, name: string): Promise<SecretRecord | null> {
    return this.read(secrets.getSecret(tenantId, name));
  }

  listSecrets(tenantId: string): Promise<SecretInfo[]> {
    return this.read(secrets.listSecrets(tenantId));
  }

  deleteSecret(tenantId: string, name: string): Promise<void> {
    return this.write(DURABLE, () => secrets.deleteSecret(tenantId, name));
  }

  anySecret(): Promise<boolean> {
    return this.read(secrets.anySecret());
  }

  listAudit(tenantId: string, filter: AuditFilter): Promise<AuditEntry[]> {
    return this.read(access.listAudit(tenantId, filter));
  }

  appendPlatformAudit(entry: NewPlatformAuditEntry): Promise<void> {
    return this.write(DURABLE, (tx) => access.appendPlatformAudit(tx, entry));
  }

  listPlatformAudit(filter: PlatformAuditFilter): Promise<PlatformAuditEntry[]> {
    return this.read(access.listPlatformAudit(filter));
  }

  async pruneAudit(before: number): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.write(LEASE_ONLY, () => access.pruneAudit(before));
      total += deleted;
      if (deleted < access.AUDIT_PRUNE_BATCH_ROWS) return total;
    }
  }

  // Tool policy and human approval

  getToolPolicy(tenantId: string): Promise<ToolPolicy | null> {
    return this.read(approvals.getToolPolicy(tenantId));
  }

  putToolPolicy(tenantId: string, policy: ToolPolicy): Promise<ToolPolicy> {
    return this.write(DURABLE, (tx) => approvals.putToolPolicy(tx, tenantId, policy));
  }

  requestApproval(request: NewApproval): Promise<ApprovalRecord> {
    return this.write(DURABLE, () => approvals.requestApproval(request));
  }

  getApproval(runId: string, executionId: string): Promise<ApprovalRecord | null> {
    return this.read(approvals.getApproval(runId, executionId));
  }

  listApprovals(tenantId: string, filter: ApprovalFilter): Promise<ApprovalRecord[]> {
    return this.read(approvals.listApprovals(tenantId, filter));
  }

  decideApproval(
    runId: string,
    executionId: string,
    decision: ApprovalDecision,
  ): Promise<ApprovalRecord> {
    return this.write(DURABLE, (tx) => approvals.decideApproval(tx, runId, executionId, decision));
  }

  expireApproval(runId: string, executionId: string): Promise<ApprovalRecord | null> {
    return this.write(DURABLE, (tx) => approvals.expireApproval(tx, runId, executionId));
  }

  // The approver webhook and its outbox

  putApprovalWebhook(webhook: Omit<ApprovalWebhook, 'updatedAt'>): Promise<ApprovalWebhook> {
    return this.write(DURABLE, (tx) => approvalNotifications.putApprovalWebhook(webhook, tx.now));
  }

  getApprovalWebhook(tenantId: string): Promise<ApprovalWebhook | null> {
    return this.read(approvalNotifications.getApprovalWebhook(tenantId));
  }

  deleteApprovalWebhook(tenantId: string): Promise<boolean> {
    return this.write(DURABLE, () => approvalNotifications.deleteApprovalWebhook(tenantId));
  }

  claimApprovalNotifications(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<ApprovalNotificationRecord[]> {
    return this.write(DURABLE, () =>
      approvalNotifications.claimApprovalNotifications(owner, now, leaseMs, limit),
    );
  }

  finishApprovalNotification(
    id: string,
    claimToken: number,
    outcome: DeliveryOutcome,
    now: number,
  ): Promise<boolean> {
    return this.write(DURABLE, () =>
      approvalNotifications.finishApprovalNotification(id, claimToken, outcome, now),
    );
  }

  listApprovalNotifications(
    tenantId: string,
    filter: ApprovalNotificationFilter,
  ): Promise<ApprovalNotificationRecord[]> {
    return this.read(approvalNotifications.listApprovalNotifications(tenantId, filter));
  }

  releaseApprovalNotificationClaims(owner: string): Promise<number> {
    return this.write(DURABLE, () =>
      approvalNotifications.releaseApprovalNotificationClaims(owner),
    );
  }

  // MCP servers and tool pins

  putMcpServer(tenantId: string, name: string, config: Json): Promise<McpServerRow> {
    return this.write(DURABLE, (tx) => mcp.putMcpServer(tx, tenantId, name, config));
  }

  listMcpServers(tenantId: string): Promise<McpServerRow[]> {
    return this.read(mcp.listMcpServers(tenantId));
  }

  deleteMcpServer(tenantId: string, name: string): Promise<boolean> {
    return this.write(DURABLE, () => mcp.deleteMcpServer(tenantId, name));
  }

  /** Durable before the first call of a pinned tool: a recovered run must find the same pin. */
  pinMcpTools(
    runId: string,
    server: string,
    pin: { hash: string; tools: Json },
  ): Promise<McpToolPinRow> {
    return this.write(DURABLE, (tx) => mcp.pinMcpTools(tx, runId, server, pin));
  }

  getMcpToolPin(runId: string, server: string): Promise<McpToolPinRow | null> {
    return this.read(mcp.getMcpToolPin(runId, server));
  }
}
