// The embedded store: one SQLite file through Node's built-in node:sqlite, one connection, one process.
// Every write goes through the WriteBatcher (group commit); reads are direct. It never decides what a run does next:
// it applies the engine's commits under their guards and reports which runs changed.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { KeelError } from '../../domain/keel-error.ts';
import { isTerminal, statusesAllowing } from '../../domain/run-status.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import type { Json } from '../../domain/json.ts';
import type { JournalEntry, NewRun, RunEventRecord, RunRecord, TenantQuotas, TenantRecord } from '../../domain/records.ts';
import type {
  ClaimRequest, CommitBatchListener, CommitOutcome, ExecutionResolution, RunChange, StoreHealth, CreateRunResult, Durability, GroupCommit, EventWrite, HeartbeatResult, RunCommit, RunFilter,
  StarvedInteractive, StarvedRequest, Store, StoreCapabilities,
} from '../store.ts';
import type { LiveMetrics } from '../live-metrics.ts';
import { migrate } from './migrate.ts';
import { claimAfterFor, inClaimOrder, priorityRank } from '../claim-rules.ts';
import { notQuarantined } from '../quarantine.ts';
import { jsonText, toEvent, toJournalEntry, toRun, toTenant } from '../rows.ts';
import { toEndedRunsBucket, toRunSummaryRow, toTenantSummaryRow, type EndedRunsBucket, type RunSummaryRow, type TenantSummaryRow } from '../run-summaries.ts'; // dashboard (issue 9)
import { prepareStatements, type Statements } from './statements.ts';
import { FairClaim } from '../../domain/fair-share.ts';
import { claimedByTenant, toBackloggedTenants } from '../fair-claim.ts';
import { admitQueuedRun, insertQuotaParams, patchesBudget, tenantNotFound, updateQuotaParams } from '../tenant-quotas.ts';
import { WRITE_BATCH_MAX_OPS, WriteBatcher, type WriteScope } from './write-batcher.ts';
import { toTenantUsage, type TenantUsage } from '../usage.ts';

/**
 * Claims and heartbeats acknowledge nobody outside Keel, so they need no fsync of their own: a later fsync'd commit
 * appends after them in the same WAL and makes them durable too, and a claim lost to a power cut only leaves the run
 * queued (no effect can have committed under it). A batch of such writes alone skips the fsync.
 */
const LEASE_ONLY = { fsync: false } as const;

const BUSY_TIMEOUT_MS = 5_000;
const CLAIMABLE_STATUSES = JSON.stringify(statusesAllowing('claim'));
const CANCELLABLE_STATUSES = JSON.stringify(statusesAllowing('cancel').filter((s) => s !== 'cancelling'));

export interface SqliteStoreOptions {
  /** Path of the database file. */
  path: string;
  /** Default `fsync`. `replicated` is refused: there is no standby to replicate to. */
  durability?: Durability;
  groupCommit?: GroupCommit;
  /** Told after each write transaction (the process's commit-batch metrics). */
  onCommitBatch?: CommitBatchListener;
}

/** One transaction per event-loop turn (max wait 0), at most WRITE_BATCH_MAX_OPS writes in it. */
const GROUP_COMMIT_DEFAULT: GroupCommit = { maxBatch: WRITE_BATCH_MAX_OPS, maxWaitMs: 0 };

type Row = Record<string, unknown>;

/** @internal What a store area kept in its own files may do inside the run store's transaction. */
export interface SqliteTransaction {
  readonly now: number;
  insertRun(run: NewRun): void;
  /** Requests cancellation of a run that is not terminal (a terminal or missing run is left alone). */
  requestCancel(runId: string, by: string): void;
}

export class SqliteStore implements Store {
  readonly capabilities: StoreCapabilities = { multiProcess: false };
  readonly durability: Durability;
  readonly #db: DatabaseSync;
  readonly #batcher: WriteBatcher;
  readonly #listeners = new Set<(changes: readonly RunChange[]) => void>();
  #sql: Statements | undefined;

  constructor(options: SqliteStoreOptions) {
    const durability = options.durability ?? 'fsync';
    if (durability === 'replicated') {
      throw new KeelError('durability_unavailable', 'durability `replicated` needs Postgres with synchronous replication; SQLite offers memory, os and fsync');
    }
    this.durability = durability;
    mkdirSync(dirname(options.path), { recursive: true });
    this.#db = new DatabaseSync(options.path);
    this.#db.exec(`PRAGMA journal_mode = WAL; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS};`);
    this.#batcher = new WriteBatcher(this.#db, durability, options.groupCommit ?? GROUP_COMMIT_DEFAULT, (changes) => {
      for (const listener of this.#listeners) listener(changes);
    }, options.onCommitBatch);
  }

  notDurableCommits(): number {
    return this.#batcher.notDurable;
  }

  /** Group-commit statistics: writes acknowledged, transactions used for them, and the fsync'd ones among those. */
  get writeStats(): { writes: number; transactions: number; fsyncedTransactions: number; lostWrites: number } {
    return this.#batcher.stats;
  }

  get #s(): Statements {
    if (this.#sql === undefined) throw new Error('SqliteStore used before migrate()');
    return this.#sql;
  }

  async migrate(): Promise<void> {
    migrate(this.#db);
    this.#sql = prepareStatements(this.#db);
  }

  async health(): Promise<StoreHealth> {
    try {
      this.#s['get-run'].get({ id: '' });
      return { reachable: true, changeFeed: true };
    } catch {
      return { reachable: false, changeFeed: true };
    }
  }

  async close(): Promise<void> {
    this.#batcher.close();
    this.#db.close();
  }

  async liveMetrics(now: number): Promise<LiveMetrics> {
    const queue = this.#s['run-queue'].get({ now, claimable_statuses: CLAIMABLE_STATUSES })!;
    return {
      runs: this.#s['live-run-counts'].all().map((r) => ({ tenantId: String(r.tenant_id), status: r.status as RunStatus, count: Number(r.runs) })),
      claimable: Number(queue.depth),
      oldestClaimableSince: queue.oldest_since === null ? null : Number(queue.oldest_since),
      unknownExecutions: Number(this.#s['count-unknown-executions'].get()!.executions),
    };
  }

  onChange(listener: (changes: readonly RunChange[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // Tenants

  createTenant(name: string, apiKeyHash: string, quotas?: Partial<TenantQuotas>): Promise<TenantRecord> {
    return this.#batcher.submit(({ now }) => {
      const id = `ten_${randomUUID()}`;
      try {
        this.#s['insert-tenant'].run({ id, name, now, ...insertQuotaParams(quotas) });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        throw new KeelError('validation_failed', `a tenant named ${JSON.stringify(name)} exists already`, { cause: error });
      }
      this.#s['insert-api-key'].run({ key_hash: apiKeyHash, tenant_id: id, now });
      return toTenant(this.#s['get-tenant'].get({ id }) as Row);
    });
  }

  updateTenant(id: string, quotas: Partial<TenantQuotas>): Promise<TenantRecord> {
    return this.#batcher.submit((scope) => {
      const row = this.#s['update-tenant'].get({ id, now: scope.now, ...updateQuotaParams(quotas) }) as Row | undefined;
      if (row === undefined) throw tenantNotFound(id);
      if (patchesBudget(quotas)) {
        for (const woken of this.#s['wake-budget-waiting-runs'].all({ tenant_id: id, now: scope.now }) as Row[]) scope.touch(String(woken.id), 'runnable');
      }
      return toTenant(row);
    });
  }

  async getTenant(id: string): Promise<TenantRecord | null> {
    const row = this.#s['get-tenant'].get({ id }) as Row | undefined;
    return row === undefined ? null : toTenant(row);
  }

  async listTenants(): Promise<TenantRecord[]> {
    return (this.#s['list-tenants'].all() as Row[]).map(toTenant);
  }

  async heldRuns(tenantId: string): Promise<number> {
    return Number((this.#s['count-held-runs'].get({ tenant_id: tenantId }) as Row).held);
  }

  async queuedRoom(tenantId: string): Promise<number | null> {
    const tenant = this.#s['get-tenant'].get({ id: tenantId }) as Row | undefined;
    const max = tenant === undefined ? null : toTenant(tenant).maxQueuedRuns;
    if (max === null) return null;
    return Math.max(0, max - Number((this.#s['count-queued-runs'].get({ tenant_id: tenantId, limit: max }) as Row).queued));
  }

  ensureTenant(name: string, apiKeyHash: string): Promise<TenantRecord> {
    return this.#batcher.submit(({ now }) => {
      let row = this.#s['find-tenant-by-name'].get({ name }) as Row | undefined;
      if (row === undefined) {
        this.#s['insert-tenant'].run({ id: `ten_${randomUUID()}`, name, now, ...insertQuotaParams() });
        row = this.#s['find-tenant-by-name'].get({ name }) as Row;
      }
      const tenant = toTenant(row);
      this.#s['insert-api-key'].run({ key_hash: apiKeyHash, tenant_id: tenant.id, now });
      return tenant;
    });
  }

  async findTenantByKeyHash(apiKeyHash: string): Promise<TenantRecord | null> {
    const row = this.#s['find-tenant-by-key'].get({ key_hash: apiKeyHash }) as Row | undefined;
    return row === undefined ? null : toTenant(row);
  }

  async tenantUsage(tenantId: string): Promise<TenantUsage> {
    return toTenantUsage(this.#s['tenant-usage'].get({ tenant_id: tenantId }) as Row);
  }

  async tenantUsageSince(tenantId: string, sinceMs: number): Promise<{ tokens: number; costUsd: number }> {
    const row = this.#s['tenant-usage-since'].get({ tenant_id: tenantId, since: sinceMs }) as Row;
    return { tokens: Number(row.tokens), costUsd: Number(row.cost_usd) };
  }

  // Runs

  createRun(run: NewRun): Promise<CreateRunResult> {
    return this.#batcher.submit((scope) => {
      if (run.idempotencyKey !== null) {
        const existing = this.#s['find-run-by-idempotency-key'].get({ tenant_id: run.tenantId, idempotency_key: run.idempotencyKey }) as Row | undefined;
        if (existing !== undefined) {
          if (existing.request_hash !== run.requestHash) {
            throw new KeelError('idempotency_conflict', `idempotency key ${JSON.stringify(run.idempotencyKey)} was used with a different request`, {
              details: { runId: existing.id as string },
            });
          }
          return { run: toRun(existing), created: false };
        }
      }
      // Admission inside the write transaction: the batcher runs one transaction at a time, so the count is exact.
      const tenant = this.#s['get-tenant'].get({ id: run.tenantId }) as Row | undefined;
      const maxQueued = tenant === undefined ? null : toTenant(tenant).maxQueuedRuns;
      if (maxQueued !== null) {
        admitQueuedRun(run.tenantId, maxQueued, Number((this.#s['count-queued-runs'].get({ tenant_id: run.tenantId, limit: maxQueued }) as Row).queued));
      }
      this.#insertRun(run, scope);
      return { run: toRun(this.#s['get-run'].get({ id: run.id }) as Row), created: true };
    });
  }

  async getRun(id: string): Promise<RunRecord | null> {
    const row = this.#s['get-run'].get({ id }) as Row | undefined;
    return row === undefined ? null : toRun(row);
  }

  async listRuns(tenantId: string, filter: RunFilter): Promise<RunRecord[]> {
    const rows = this.#s['list-runs'].all({
      tenant_id: tenantId, status: filter.status ?? null, agent: filter.agent ?? null, code: filter.errorCode ?? null, after_id: filter.afterId ?? null, limit: filter.limit,
    }) as Row[];
    return rows.map(toRun);
  }

  requestCancel(runId: string): Promise<RunRecord> {
    return this.#batcher.submit((scope) => {
      const run = this.#requireRun(runId);
      if (isTerminal(run.status)) throw new KeelError('run_terminal', `run ${runId} has already ${run.status}`);
      this.#requestCancel(run, scope, 'api');
      return this.#requireRun(runId);
    });
  }

  #requestCancel(run: RunRecord, scope: WriteScope, by: string): void {
    if (run.status === 'cancelling' || isTerminal(run.status)) return;
    this.#s['request-cancel'].get({ id: run.id, now: scope.now, from_statuses: CANCELLABLE_STATUSES });
    this.#appendEvents(run.id, [{ type: 'run.cancelling', data: { from: run.status, by } }], scope);
    scope.touch(run.id, run.leaseOwner === null ? 'runnable' : 'cancel');
  }

  provideInput(runId: string, key: string, value: Json): Promise<RunRecord> {
    return this.#batcher.submit((scope) => {
      const run = this.#requireRun(runId);
      if (isTerminal(run.status)) throw new KeelError('run_terminal', `run ${runId} has already ${run.status}`);
      try {
        this.#s['insert-input'].run({ run_id: runId, key, value: JSON.stringify(value), now: scope.now });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        throw new KeelError('input_already_provided', `input ${JSON.stringify(key)} of run ${runId} was provided already`, { cause: error });
      }
      const events: EventWrite[] = [{ type: 'input.received', data: { key } }];
      if (this.#s['wake-on-input'].get({ id: runId, key, now: scope.now }) !== undefined) {
        events.push({ type: 'run.queued', data: { reason: 'input', key } });
        scope.touch(runId, 'runnable');
      }
      this.#appendEvents(runId, events, scope);
      return this.#requireRun(runId);
    });
  }

  resolveExecution(runId: string, executionId: string, resolution: ExecutionResolution): Promise<RunRecord> {
    return this.#batcher.submit((scope) => {
      const run = this.#requireRun(runId);
      if (isTerminal(run.status)) throw new KeelError('run_terminal', `run ${runId} has already ${run.status}`);
      const row = this.#s['find-execution'].get({ run_id: runId, execution_id: executionId }) as Row | undefined;
      if (row === undefined) throw new KeelError('execution_not_found', `run ${runId} has no execution ${executionId}`);
      const entry = toJournalEntry(row);
      const status = resolution.action === 'retry' ? 'pending' : resolution.action;
      const changed = this.#s['resolve-execution'].get({
        run_id: runId, seq: entry.seq, status, now: scope.now,
        result: resolution.action === 'succeeded' ? jsonText(resolution.result) : null,
        error: resolution.action === 'failed' ? jsonText(resolution.error) : null,
      });
      if (changed === undefined) {
        throw new KeelError('execution_not_unknown', `execution ${executionId} is ${entry.status}; only unknown executions can be resolved`, { details: { status: entry.status } });
      }
      this.#s['insert-audit'].run({ run_id: runId, at: scope.now, kind: 'execution_resolved', data: JSON.stringify({ executionId, seq: entry.seq, resolution }) });
      const events: EventWrite[] = [{ type: 'effect.resolved', data: { seq: entry.seq, executionId, action: resolution.action } }];
      if (this.#s['wake-run'].get({ id: runId, now: scope.now }) !== undefined) {
        events.push({ type: 'run.queued', data: { reason: 'resolved', executionId } });
        scope.touch(runId, 'runnable');
      }
      this.#appendEvents(runId, events, scope);
      return this.#requireRun(runId);
    });
  }

  readmitRun(runId: string): Promise<RunRecord> {
    return this.#batcher.submit((scope) => {
      const run = this.#requireRun(runId);
      if (this.#s['readmit-run'].get({ id: runId, now: scope.now }) === undefined) throw notQuarantined(run);
      this.#s['insert-audit'].run({ run_id: runId, at: scope.now, kind: 'run_readmitted', data: JSON.stringify({ leaseLosses: run.leaseLosses, error: run.error }) });
      this.#appendEvents(runId, [{ type: 'run.readmitted', data: { after: run.error as unknown as Json } }], scope);
      scope.touch(runId, 'runnable');
      return this.#requireRun(runId);
    });
  }

  async getInput(runId: string, key: string): Promise<{ value: Json } | null> {
    const row = this.#s['get-input'].get({ run_id: runId, key }) as Row | undefined;
    return row === undefined ? null : { value: JSON.parse(row.value as string) as Json };
  }

  // Work

  claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    return this.#batcher.submit(LEASE_ONLY, (scope) => {
      // Lease state only, no events: what clients see must be durable, and this write is not fsync'd on its own.
      const lease = {
        owner: request.owner, now: scope.now, lease_expires_at: scope.now + request.leaseMs, served: JSON.stringify(request.served),
        claimable_statuses: CLAIMABLE_STATUSES,
      };
      if (request.probation === true) {
        // RETURNING yields rows in table order, not the subquery's: restore the claim order.
        return inClaimOrder((this.#s['claim-probation-runs'].all({ ...lease, limit: request.limit }) as Row[]).map(toRun));
      }
      return this.#claimFairly(lease, request.limit);
    });
  }

  /** One fair claim (src/domain/fair-share.ts): plan per tenant, claim per tenant, record the virtual times. */
  #claimFairly(lease: { owner: string; now: number; lease_expires_at: number; served: string; claimable_statuses: string }, limit: number): RunRecord[] {
    const backlog = this.#s['fair-backlog'].all({ now: lease.now, served: lease.served, claimable_statuses: lease.claimable_statuses }) as Row[];
    const clock = Number((this.#s['read-fair-clock'].get() as Row).vtime);
    const claim = new FairClaim<RunRecord>(toBackloggedTenants(backlog), clock, limit);
    for (let plan = claim.next(); plan !== null; plan = claim.next()) {
      const claimed: RunRecord[] = [];
      for (const [tenantId, n] of plan) {
        claimed.push(...(this.#s['claim-runs'].all({ ...lease, tenant_id: tenantId, limit: n }) as Row[]).map(toRun));
      }
      claim.record(claimedByTenant(claimed));
    }
    const { items, vtimes, clock: newClock } = claim.result();
    if (vtimes.size > 0) {
      this.#s['save-tenant-vtimes'].run({ vtimes: JSON.stringify(Object.fromEntries(vtimes)) });
      this.#s['save-fair-clock'].run({ clock: newClock });
    }
    return items;
  }

  async starvedInteractive(request: StarvedRequest): Promise<StarvedInteractive> {
    const row = this.#s['starved-interactive'].get({
      cutoff: request.cutoff, served: JSON.stringify(request.served), claimable_statuses: CLAIMABLE_STATUSES, limit: request.limit,
    }) as Row;
    return { count: Number(row.starved), oldestSince: row.oldest_since === null ? null : Number(row.oldest_since) };
  }

  heartbeat(owner: string, runIds: string[], leaseMs: number): Promise<HeartbeatResult> {
    if (runIds.length === 0) return Promise.resolve({ held: [] });
    return this.#batcher.submit(LEASE_ONLY, ({ now }) => {
      const rows = this.#s.heartbeat.all({ owner, ids: JSON.stringify(runIds), lease_expires_at: now + leaseMs }) as Row[];
      return { held: rows.map((r) => ({ id: r.id as string, status: r.status as RunStatus, stateVersion: Number(r.state_version) })) };
    });
  }

  releaseLeases(owner: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return Promise.resolve();
    return this.#batcher.submit((scope) => {
      this.#s['release-leases'].run({ owner, ids: JSON.stringify(runIds), now: scope.now });
      for (const id of runIds) scope.touch(id, 'runnable');
    });
  }

  expireForeignLeases(owner: string): Promise<number> {
    return this.#batcher.submit(({ now }) => Number(this.#s['expire-foreign-leases'].run({ owner, now }).changes));
  }

  commit(commit: RunCommit): Promise<CommitOutcome> {
    return this.#batcher.submit((scope) => this.#applyCommit(commit, scope)).then((outcome) => {
      if ('stale' in outcome) {
        throw new KeelError('stale_write', `commit to run ${commit.runId} was fenced off`, { details: outcome.stale });
      }
      return outcome;
    });
  }

  // History

  async loadJournal(runId: string): Promise<JournalEntry[]> {
    return (this.#s['load-journal'].all({ run_id: runId }) as Row[]).map(toJournalEntry);
  }

  async listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEventRecord[]> {
    return (this.#s['list-events'].all({ run_id: runId, after_seq: afterSeq, limit }) as Row[]).map(toEvent);
  }

  // ── Extension point for store areas kept in their own files (schedules) ──

  /** @internal The connection, for the statements and reads of a store area kept in its own files. */
  get connection(): DatabaseSync {
    return this.#db;
  }

  /**
   * @internal Runs `apply` inside the store's write transaction (group commit), so another store area's rows commit
   * atomically with the runs it creates (`insertRun`, exactly as createRun does) and the cancels it requests
   * (`requestCancel`, exactly as the API's cancel does).
   */
  transact<T>(apply: (tx: SqliteTransaction) => T): Promise<T> {
    return this.#batcher.submit((scope) => apply({
      now: scope.now,
      insertRun: (run) => this.#insertRun(run, scope),
      requestCancel: (runId, by) => {
        const row = this.#s['get-run'].get({ id: runId }) as Row | undefined;
        if (row !== undefined) this.#requestCancel(toRun(row), scope, by);
      },
    }));
  }

  // --- dashboard (issue 9): read-only aggregates ---
  async summarizeRuns(tenantId: string): Promise<RunSummaryRow[]> {
    return (this.#s['summarize-runs'].all({ tenant_id: tenantId }) as Row[]).map(toRunSummaryRow);
  }

  async countEndedRuns(tenantId: string, sinceMs: number, bucketMs: number): Promise<EndedRunsBucket[]> {
    return (this.#s['count-ended-runs'].all({ tenant_id: tenantId, since: sinceMs, bucket_ms: bucketMs }) as Row[]).map(toEndedRunsBucket);
  }

  async summarizeTenants(): Promise<TenantSummaryRow[]> {
    return (this.#s['summarize-tenants'].all() as Row[]).map(toTenantSummaryRow);
  }
  // --- end dashboard ---

  // Internals (run inside a write transaction)

  #requireRun(runId: string): RunRecord {
    const row = this.#s['get-run'].get({ id: runId }) as Row | undefined;
    if (row === undefined) throw new KeelError('run_not_found', `run ${runId} not found`);
    return toRun(row);
  }

  #insertRun(run: NewRun, scope: WriteScope): void {
    const deadlineAt = run.budget.deadlineMs === undefined ? null : scope.now + run.budget.deadlineMs;
    this.#s['insert-run'].run({
      id: run.id, tenant_id: run.tenantId, agent: run.agent, agent_version: run.agentVersion,
      agent_key: `${run.agent}@${run.agentVersion}`, input: JSON.stringify(run.input), priority: run.priority,
      priority_rank: priorityRank(run.priority), budget: JSON.stringify(run.budget), metadata: jsonText(run.metadata),
      deadline_at: deadlineAt, parent_run_id: run.parentRunId, idempotency_key: run.idempotencyKey,
      request_hash: run.requestHash, now: scope.now,
    });
    this.#s['insert-event'].run({
      run_id: run.id, seq: 1, type: 'run.created', at: scope.now,
      data: JSON.stringify({ agent: run.agent, version: run.agentVersion, parentRunId: run.parentRunId }),
    });
    scope.touch(run.id, 'runnable');
  }

  #appendEvents(runId: string, events: EventWrite[], scope: WriteScope, firstSeq?: number): void {
    if (events.length === 0) return;
    const first = firstSeq ?? Number((this.#s['allocate-event-seqs'].get({ id: runId, count: events.length }) as Row).first_seq);
    events.forEach((event, i) => {
      this.#s['insert-event'].run({ run_id: runId, seq: first + i, type: event.type, at: scope.now, data: JSON.stringify(event.data) });
    });
    scope.touch(runId, 'events');
  }

  #applyCommit(c: RunCommit, scope: WriteScope): CommitOutcome | { stale: Record<string, unknown> } {
    const patch = c.run ?? {};
    const events = c.events ?? [];
    const status = patch.status;
    const claimAfter = status === undefined ? undefined : claimAfterFor(status, patch.releaseLease === true, patch.wakeAt ?? null, scope.now);
    const countersOnly = Object.keys(patch).every((k) => k === 'counters');
    const guard = { id: c.runId, lease_token: c.leaseToken, expected_state_version: c.expectedStateVersion, now: scope.now, event_count: events.length };
    const deltas = {
      d_steps: patch.counters?.steps ?? 0, d_input_tokens: patch.counters?.inputTokens ?? 0,
      d_output_tokens: patch.counters?.outputTokens ?? 0, d_cost_usd: patch.counters?.costUsd ?? 0,
    };
    const row = countersOnly ? this.#s['commit-effect'].get({ ...guard, ...deltas }) : this.#s['commit-run'].get({
      ...guard, ...deltas,
      set_status: status === undefined ? 0 : 1, status: status ?? null,
      terminal: status !== undefined && isTerminal(status) ? 1 : 0,
      set_result: 'result' in patch ? 1 : 0, result: jsonText(patch.result),
      set_error: 'error' in patch ? 1 : 0, error: jsonText(patch.error),
      set_outcome: 'outcome' in patch ? 1 : 0, outcome: patch.outcome ?? null,
      set_compensation: 'compensation' in patch ? 1 : 0, compensation: jsonText(patch.compensation),
      set_waiting: 'waitingReason' in patch ? 1 : 0, waiting_reason: patch.waitingReason ?? null,
      set_wake_at: 'wakeAt' in patch ? 1 : 0, wake_at: patch.wakeAt ?? null,
      release: patch.releaseLease === true ? 1 : 0,
      set_claim_after: claimAfter === undefined ? 0 : 1, claim_after: claimAfter ?? null,
    }) as Row | undefined;
    if (row === undefined) {
      const current = this.#s['get-run'].get({ id: c.runId }) as Row | undefined;
      const stale = {
        leaseToken: c.leaseToken, expectedStateVersion: c.expectedStateVersion,
        currentLeaseToken: current?.lease_token ?? null, currentStateVersion: current?.state_version ?? null,
        currentStatus: current?.status ?? null,
      };
      this.#s['insert-audit'].run({
        run_id: c.runId, at: scope.now, kind: 'stale_commit',
        data: JSON.stringify({ ...stale, journal: (c.journal ?? []).map((j) => ({ seq: j.seq, kind: j.kind, name: j.name, status: j.status })) }),
      });
      return { stale };
    }
    if (patch.preempted === true) this.#s['mark-preempted'].run({ id: c.runId, now: scope.now });
    for (const j of c.journal ?? []) {
      this.#s['upsert-journal'].run({
        run_id: c.runId, seq: j.seq, kind: j.kind, name: j.name, status: j.status, args: jsonText(j.args),
        result: jsonText(j.result), error: jsonText(j.error), execution_id: j.executionId ?? null,
        effect_class: j.effectClass ?? null, attempts: j.attempts ?? 1, lease_token: c.leaseToken, worker: j.worker ?? null,
        queued_at: j.queuedAt ?? null, started_at: j.startedAt ?? null, ended_at: j.endedAt ?? null, deadline_at: j.deadlineAt ?? null,
      });
    }
    this.#appendEvents(c.runId, events, scope, Number(row.first_seq));
    if (status !== undefined && isTerminal(status)) scope.touch(c.runId, 'ended');
    if (status === 'queued' || (patch.releaseLease === true && status === 'cancelling')) scope.touch(c.runId, 'runnable');
    for (const key of c.consumeInputs ?? []) this.#s['consume-input'].run({ run_id: c.runId, key });
    for (const child of c.createRuns ?? []) this.#insertRun(child, scope);
    for (const id of c.wakeRuns ?? []) {
      if (this.#s['wake-run'].get({ id, now: scope.now }) !== undefined) {
        this.#appendEvents(id, [{ type: 'run.queued', data: { reason: 'child', childRunId: c.runId } }], scope);
        scope.touch(id, 'runnable');
      }
    }
    for (const id of c.cancelRuns ?? []) {
      const child = this.#s['get-run'].get({ id }) as Row | undefined;
      if (child !== undefined) this.#requestCancel(toRun(child), scope, `parent ${c.runId}`);
    }
    let finalStatus = row.status as RunStatus;
    if (finalStatus === 'waiting' && c.wakeIf !== undefined) {
      const woke = this.#s['wake-if-ready'].get({
        id: c.runId, now: scope.now, input_keys: JSON.stringify(c.wakeIf.inputKeys ?? []), child_ids: JSON.stringify(c.wakeIf.childRunIds ?? []),
      });
      if (woke !== undefined) {
        finalStatus = 'queued';
        this.#appendEvents(c.runId, [{ type: 'run.queued', data: { reason: 'ready' } }], scope);
        scope.touch(c.runId, 'runnable');
      }
    }
    return { stateVersion: Number(row.state_version), status: finalStatus };
  }
}

/** SQLITE_CONSTRAINT_PRIMARYKEY (1555) or SQLITE_CONSTRAINT_UNIQUE (2067): the row exists already. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { errcode?: number }).errcode;
  return code === 1555 || code === 2067;
}

