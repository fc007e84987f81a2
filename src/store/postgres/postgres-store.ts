// The distributed store: PostgreSQL through `pg`, shared by any number of Keel processes. Writes go through the
// PgWriteQueue (group commit, one transaction at a time); reads use the pool; other processes' changes arrive
// through LISTEN/NOTIFY. Like the SQLite store it applies the engine's commits under their guards and decides nothing.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { KeelError } from '../../domain/keel-error.ts';
import { isTerminal, statusesAllowing, type RunStatus } from '../../domain/run-status.ts';
import type { Json } from '../../domain/json.ts';
import type { JournalEntry, NewRun, RunEventRecord, RunRecord, TenantQuotas, TenantRecord } from '../../domain/records.ts';
import { claimAfterFor, inClaimOrder, priorityRank } from '../claim-rules.ts';
import { notQuarantined } from '../quarantine.ts';
import { jsonText, toEvent, toJournalEntry, toRun, toTenant } from '../rows.ts';
import { toEndedRunsBucket, toRunSummaryRow, toTenantSummaryRow, type EndedRunsBucket, type RunSummaryRow, type TenantSummaryRow } from '../run-summaries.ts'; // dashboard (issue 9)
import type {
  ClaimRequest, CommitBatchListener, CommitOutcome, CreateRunResult, Durability, EventWrite, GroupCommit, ExecutionResolution, HeartbeatResult, JournalWrite,
  RunChange, RunCommit, RunFilter, StarvedInteractive, StarvedRequest, Store, StoreCapabilities, StoreHealth,
} from '../store.ts';
import { ChangeListener } from './change-listener.ts';
import type { LiveMetrics } from '../live-metrics.ts';
import { migratePostgres } from './migrate.ts';
import { loadPgStatements, type PgStatements } from './statements.ts';
import { CHANGE_CHANNEL, PgWriteQueue, type PgWriteScope } from './write-queue.ts';
import { toTenantUsage, type TenantUsage } from '../usage.ts';
import { FairClaim } from '../../domain/fair-share.ts';
import { claimedByTenant, toBackloggedTenants } from '../fair-claim.ts';
import { admitQueuedRun, insertQuotaParams, patchesBudget, tenantNotFound, updateQuotaParams } from '../tenant-quotas.ts';

export const PG_POOL_MAX_CONNECTIONS_DEFAULT = 10;
const CLAIMABLE_STATUSES = JSON.stringify(statusesAllowing('claim'));
const CANCELLABLE_STATUSES = JSON.stringify(statusesAllowing('cancel').filter((s) => s !== 'cancelling'));
const LEASE_ONLY = { fsync: false } as const;
const DURABLE = { fsync: true } as const;

export interface PostgresStoreOptions {
  connectionString: string;
  poolSize?: number;
  /**
   * `fsync` (default): synchronous_commit=local, flushed on this server. `replicated`: synchronous_commit=on, which
   * waits for a synchronous standby (refused at migrate() when synchronous_standby_names is empty). `memory`/`os`:
   * synchronous_commit=off: Postgres acknowledges before the WAL flush, which its WAL writer does within
   * 3 × wal_writer_delay (a Postgres crash loses at most that window; Keel's own crash loses nothing).
   */
  durability?: Durability;
  groupCommit?: GroupCommit;
  /** Told after each write transaction (the process's commit-batch metrics). */
  onCommitBatch?: CommitBatchListener;
  /** A schema to keep Keel's tables in (created if missing); several installations can share a database. */
  schema?: string;
}

const SYNCHRONOUS_COMMIT: Record<Durability, string> = { memory: 'off', os: 'off', fsync: 'local', replicated: 'on' };

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

type Row = Record<string, unknown>;

/** @internal What a store area kept in its own files may do inside the run store's transaction. */
export interface PgTransaction {
  readonly client: pg.PoolClient;
  readonly now: number;
  insertRun(run: NewRun): Promise<void>;
  /** Requests cancellation of a run that is not terminal (a terminal or missing run is left alone). */
  requestCancel(runId: string, by: string): Promise<void>;
}

export class PostgresStore implements Store {
  readonly capabilities: StoreCapabilities = { multiProcess: true };
  readonly durability: Durability;
  readonly #pool: pg.Pool;
  readonly #origin = randomUUID();
  readonly #listeners = new Set<(changes: readonly RunChange[]) => void>();
  readonly #writes: PgWriteQueue;
  readonly #listener: ChangeListener;
  readonly #s: PgStatements = loadPgStatements();

  readonly #schema: string | undefined;
  /** With synchronous_commit off, how long an acknowledged commit may wait for the WAL flush (3 × wal_writer_delay). */
  #flushWindowMs = 600;

  constructor(options: PostgresStoreOptions) {
    this.durability = options.durability ?? 'fsync';
    if (options.schema !== undefined && !SCHEMA_PATTERN.test(options.schema)) throw new KeelError('config_invalid', `invalid schema name ${JSON.stringify(options.schema)}`);
    this.#schema = options.schema;
    const settings = [
      ...(options.schema !== undefined ? [`-c search_path=${options.schema}`] : []),
      `-c synchronous_commit=${SYNCHRONOUS_COMMIT[this.durability]}`,
    ];
    const channel = options.schema === undefined ? CHANGE_CHANNEL : `${CHANGE_CHANNEL}_${options.schema}`;
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? PG_POOL_MAX_CONNECTIONS_DEFAULT,
      ...(settings.length > 0 ? { options: settings.join(' ') } : {}),
    });
    // An idle client's connection error (the server restarted) must not crash the process; the pool replaces it.
    this.#pool.on('error', () => {});
    const emit = (changes: readonly RunChange[]) => {
      for (const listener of this.#listeners) listener(changes);
    };
    this.#writes = new PgWriteQueue(this.#pool, this.#origin, channel, emit, {
      ...(options.groupCommit !== undefined ? { maxBatch: options.groupCommit.maxBatch } : {}),
      flushesOnCommit: this.durability === 'fsync' || this.durability === 'replicated',
      ...(options.onCommitBatch !== undefined ? { onBatch: options.onCommitBatch } : {}),
    });
    this.#listener = new ChangeListener(options.connectionString, this.#origin, channel, emit);
  }

  get writeStats(): { writes: number; transactions: number; fsyncedTransactions: number } {
    return this.#writes.stats;
  }

  async health(): Promise<StoreHealth> {
    let reachable = true;
    try {
      await this.#pool.query('SELECT 1');
    } catch {
      reachable = false;
    }
    return { reachable, changeFeed: this.#listener.connected };
  }

  async migrate(): Promise<void> {
    await this.#checkDurability();
    if (this.#schema !== undefined) await this.#pool.query(`CREATE SCHEMA IF NOT EXISTS ${this.#schema}`);
    await migratePostgres(this.#pool);
    await this.#listener.start();
  }

  /** Refuses `replicated` without a synchronous standby; learns the WAL writer's flush window for the not-durable count. */
  async #checkDurability(): Promise<void> {
    const { rows } = await this.#pool.query<{ names: string; delay: string }>(
      "SELECT current_setting('synchronous_standby_names') AS names, current_setting('wal_writer_delay') AS delay");
    if (this.durability === 'replicated' && rows[0]!.names.trim() === '') {
      throw new KeelError('durability_unavailable', 'durability `replicated` needs synchronous replication: synchronous_standby_names is empty on this server');
    }
    const delay = /^(\d+)(ms|s)?$/.exec(rows[0]!.delay.trim());
    if (delay !== null) this.#flushWindowMs = 3 * Number(delay[1]) * (delay[2] === 's' ? 1000 : 1);
  }

  notDurableCommits(): number {
    return this.durability === 'memory' || this.durability === 'os' ? this.#writes.acknowledgedWithin(this.#flushWindowMs) : 0;
  }

  async close(): Promise<void> {
    await this.#writes.close();
    await this.#listener.close();
    await this.#pool.end();
  }

  async liveMetrics(now: number): Promise<LiveMetrics> {
    const [runs, queue, unknown] = await Promise.all([
      this.#s['live-run-counts'].rows(this.#pool),
      this.#s['run-queue'].row(this.#pool, { now, claimable_statuses: CLAIMABLE_STATUSES }),
      this.#s['count-unknown-executions'].row(this.#pool),
    ]);
    return {
      runs: runs.map((r) => ({ tenantId: String(r.tenant_id), status: r.status as RunStatus, count: Number(r.runs) })),
      claimable: Number(queue?.depth ?? 0),
      oldestClaimableSince: queue?.oldest_since === null || queue?.oldest_since === undefined ? null : Number(queue.oldest_since),
      unknownExecutions: Number(unknown?.executions ?? 0),
    };
  }

  onChange(listener: (changes: readonly RunChange[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // Tenants

  createTenant(name: string, apiKeyHash: string, quotas?: Partial<TenantQuotas>): Promise<TenantRecord> {
    return this.#writes.submit(DURABLE, async ({ client, now }) => {
      const id = `ten_${randomUUID()}`;
      await client.query('SAVEPOINT tenant');
      try {
        await this.#s['insert-tenant'].run(client, { id, name, now, ...insertQuotaParams(quotas) });
      } catch (error) {
        await client.query('ROLLBACK TO SAVEPOINT tenant');
        if ((error as { code?: string }).code !== '23505') throw error;
        throw new KeelError('validation_failed', `a tenant named ${JSON.stringify(name)} exists already`, { cause: error });
      }
      await this.#s['insert-api-key'].run(client, { key_hash: apiKeyHash, tenant_id: id, now });
      return toTenant((await this.#s['get-tenant'].row(client, { id }))!);
    });
  }

  updateTenant(id: string, quotas: Partial<TenantQuotas>): Promise<TenantRecord> {
    return this.#writes.submit(DURABLE, async (scope) => {
      const row = await this.#s['update-tenant'].row(scope.client, { id, now: scope.now, ...updateQuotaParams(quotas) });
      if (row === undefined) throw tenantNotFound(id);
      if (patchesBudget(quotas)) {
        for (const woken of await this.#s['wake-budget-waiting-runs'].rows(scope.client, { tenant_id: id, now: scope.now })) scope.touch(String(woken.id), 'runnable');
      }
      return toTenant(row);
    });
  }

  async getTenant(id: string): Promise<TenantRecord | null> {
    const row = await this.#s['get-tenant'].row(this.#pool, { id });
    return row === undefined ? null : toTenant(row);
  }

  async listTenants(): Promise<TenantRecord[]> {
    return (await this.#s['list-tenants'].rows(this.#pool)).map(toTenant);
  }

  async heldRuns(tenantId: string): Promise<number> {
    return Number((await this.#s['count-held-runs'].row(this.#pool, { tenant_id: tenantId }))!.held);
  }

  async queuedRoom(tenantId: string): Promise<number | null> {
    const tenant = await this.#s['get-tenant'].row(this.#pool, { id: tenantId });
    const max = tenant === undefined ? null : toTenant(tenant).maxQueuedRuns;
    if (max === null) return null;
    return Math.max(0, max - Number((await this.#s['count-queued-runs'].row(this.#pool, { tenant_id: tenantId, limit: max }))!.queued));
  }

  ensureTenant(name: string, apiKeyHash: string): Promise<TenantRecord> {
    return this.#writes.submit(DURABLE, async ({ client, now }) => {
      await client.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [`ten_${randomUUID()}`, name, now]);
      const tenant = toTenant((await this.#s['find-tenant-by-name'].row(client, { name }))!);
      await this.#s['insert-api-key'].run(client, { key_hash: apiKeyHash, tenant_id: tenant.id, now });
      return tenant;
    });
  }

  async findTenantByKeyHash(apiKeyHash: string): Promise<TenantRecord | null> {
    const row = await this.#s['find-tenant-by-key'].row(this.#pool, { key_hash: apiKeyHash });
    return row === undefined ? null : toTenant(row);
  }

  async tenantUsage(tenantId: string): Promise<TenantUsage> {
    return toTenantUsage((await this.#s['tenant-usage'].row(this.#pool, { tenant_id: tenantId }))!);
  }

  async tenantUsageSince(tenantId: string, sinceMs: number): Promise<{ tokens: number; costUsd: number }> {
    const row = (await this.#s['tenant-usage-since'].row(this.#pool, { tenant_id: tenantId, since: sinceMs }))!;
    return { tokens: Number(row.tokens), costUsd: Number(row.cost_usd) };
  }

  // Runs

  createRun(run: NewRun): Promise<CreateRunResult> {
    return this.#writes.submit(DURABLE, async (scope) => {
      if (run.idempotencyKey !== null) {
        // Serialise creations under one key across processes; the unique index is the backstop.
        await scope.client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${run.tenantId}:${run.idempotencyKey}`]);
        const existing = await this.#s['find-run-by-idempotency-key'].row(scope.client, { tenant_id: run.tenantId, idempotency_key: run.idempotencyKey });
        if (existing !== undefined) {
          if (existing.request_hash !== run.requestHash) {
            throw new KeelError('idempotency_conflict', `idempotency key ${JSON.stringify(run.idempotencyKey)} was used with a different request`, {
              details: { runId: existing.id as string },
            });
          }
          return { run: toRun(existing), created: false };
        }
      }
      await this.#admit(run.tenantId, scope);
      return { run: await this.#insertRun(run, scope), created: true };
    });
  }

  /**
   * Refuses a run over the tenant's max queued runs. Creations for a capped tenant are serialised across processes by
   * a transaction-scoped advisory lock (not a lock on the tenant row, which claims and quota updates also write), so
   * the count and the insert act as one.
   */
  async #admit(tenantId: string, scope: PgWriteScope): Promise<void> {
    const tenant = await this.#s['get-tenant'].row(scope.client, { id: tenantId });
    const maxQueued = tenant === undefined ? null : toTenant(tenant).maxQueuedRuns;
    if (maxQueued === null) return;
    await scope.client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`keel-admission:${tenantId}`]);
    const queued = await this.#s['count-queued-runs'].row(scope.client, { tenant_id: tenantId, limit: maxQueued });
    admitQueuedRun(tenantId, maxQueued, Number(queued!.queued));
  }

  async getRun(id: string): Promise<RunRecord | null> {
    const row = await this.#s['get-run'].row(this.#pool, { id });
    return row === undefined ? null : toRun(row);
  }

  async listRuns(tenantId: string, filter: RunFilter): Promise<RunRecord[]> {
    const rows = await this.#s['list-runs'].rows(this.#pool, {
      tenant_id: tenantId, status: filter.status ?? null, agent: filter.agent ?? null, code: filter.errorCode ?? null, after_id: filter.afterId ?? null, limit: filter.limit,
    });
    return rows.map(toRun);
  }

  requestCancel(runId: string): Promise<RunRecord> {
    return this.#writes.submit({ ...DURABLE, key: runId }, async (scope) => {
      const run = await this.#lockRun(scope, runId);
      if (isTerminal(run.status)) throw new KeelError('run_terminal', `run ${runId} has already ${run.status}`);
      await this.#requestCancel(run, scope, 'api');
      return this.#requireRun(scope, runId);
    });
  }

  provideInput(runId: string, key: string, value: Json): Promise<RunRecord> {
    return this.#writes.submit({ ...DURABLE, key: runId }, async (scope) => {
      const run = await this.#lockRun(scope, runId);
      if (isTerminal(run.status)) throw new KeelError('run_terminal', `run ${runId} has already ${run.status}`);
      const inserted = await scope.client.query('INSERT INTO inputs (run_id, key, value, at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [runId, key, JSON.stringify(value), scope.now]);
      if (inserted.rowCount === 0) throw new KeelError('input_already_provided', `input ${JSON.stringify(key)} of run ${runId} was provided already`);
      const events: EventWrite[] = [{ type: 'input.received', data: { key } }];
      if ((await this.#s['wake-on-input'].row(scope.client, { id: runId, key, now: scope.now })) !== undefined) {
        events.push({ type: 'run.queued', data: { reason: 'input', key } });
        scope.touch(runId, 'runnable');
      }
      await this.#appendEvents(runId, events, scope);
      return this.#requireRun(scope, runId);
    });
  }

  readmitRun(runId: string): Promise<RunRecord> {
    return this.#writes.submit({ ...DURABLE, key: runId }, async (scope) => {
      const run = await this.#lockRun(scope, runId);
      if ((await this.#s['readmit-run'].row(scope.client, { id: runId, now: scope.now })) === undefined) throw notQuarantined(run);
      await this.#s['insert-audit'].run(scope.client, { run_id: runId, at: scope.now, kind: 'run_readmitted', data: JSON.stringify({ leaseLosses: run.leaseLosses, error: run.error }) });
      await this.#appendEvents(runId, [{ type: 'run.readmitted', data: { after: run.error as unknown as Json } }], scope);
      scope.touch(runId, 'runnable');
      return this.#requireRun(scope, runId);
    });
  }

  async getInput(runId: string, key: string): Promise<{ value: Json } | null> {
    const row = await this.#s['get-input'].row(this.#pool, { run_id: runId, key });
    return row === undefined ? null : { value: JSON.parse(row.value as string) as Json };
  }

  resolveExecution(runId: string, executionId: string, resolution: ExecutionResolution): Promise<RunRecord> {
    return this.#writes.submit({ ...DURABLE, key: runId }, async (scope) => {
      const run = await this.#lockRun(scope, runId);
      if (isTerminal(run.status)) throw new KeelError('run_terminal', `run ${runId} has already ${run.status}`);
      const row = await this.#s['find-execution'].row(scope.client, { run_id: runId, execution_id: executionId });
      if (row === undefined) throw new KeelError('execution_not_found', `run ${runId} has no execution ${executionId}`);
      const entry = toJournalEntry(row);
      const changed = await this.#s['resolve-execution'].row(scope.client, {
        run_id: runId, seq: entry.seq, status: resolution.action === 'retry' ? 'pending' : resolution.action, now: scope.now,
        result: resolution.action === 'succeeded' ? jsonText(resolution.result) : null,
        error: resolution.action === 'failed' ? jsonText(resolution.error) : null,
      });
      if (changed === undefined) {
        throw new KeelError('execution_not_unknown', `execution ${executionId} is ${entry.status}; only unknown executions can be resolved`, { details: { status: entry.status } });
      }
      await this.#s['insert-audit'].run(scope.client, { run_id: runId, at: scope.now, kind: 'execution_resolved', data: JSON.stringify({ executionId, seq: entry.seq, resolution }) });
      const events: EventWrite[] = [{ type: 'effect.resolved', data: { seq: entry.seq, executionId, action: resolution.action } }];
      if ((await this.#s['wake-run'].row(scope.client, { id: runId, now: scope.now })) !== undefined) {
        events.push({ type: 'run.queued', data: { reason: 'resolved', executionId } });
        scope.touch(runId, 'runnable');
      }
      await this.#appendEvents(runId, events, scope);
      return this.#requireRun(scope, runId);
    });
  }

  // Work

  claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    return this.#writes.submit({ ...LEASE_ONLY, alone: request.probation !== true }, async ({ client, now }) => {
      const lease = { owner: request.owner, now, lease_expires_at: now + request.leaseMs, served: JSON.stringify(request.served), claimable_statuses: CLAIMABLE_STATUSES };
      if (request.probation === true) {
        return inClaimOrder((await this.#s['claim-probation-runs'].rows(client, { ...lease, limit: request.limit })).map(toRun));
      }
      return this.#claimFairly(client, lease, request.limit);
    });
  }

  /**
   * One fair claim (src/domain/fair-share.ts). The fair clock's row lock, taken first, makes claimers of all
   * processes plan and apply one after another, so the virtual times they read are never stale.
   */
  async #claimFairly(client: pg.PoolClient, lease: { owner: string; now: number; lease_expires_at: number; served: string; claimable_statuses: string }, limit: number): Promise<RunRecord[]> {
    const clock = Number((await this.#s['read-fair-clock'].row(client))!.vtime);
    const backlog = await this.#s['fair-backlog'].rows(client, { now: lease.now, served: lease.served, claimable_statuses: lease.claimable_statuses });
    const claim = new FairClaim<RunRecord>(toBackloggedTenants(backlog), clock, limit);
    for (let plan = claim.next(); plan !== null; plan = claim.next()) {
      const allocation = JSON.stringify([...plan].map(([tenantId, n]) => ({ tenant_id: tenantId, n })));
      claim.record(claimedByTenant((await this.#s['claim-runs'].rows(client, { ...lease, allocation })).map(toRun)));
    }
    const { items, vtimes, clock: newClock } = claim.result();
    if (vtimes.size > 0) {
      await this.#s['save-tenant-vtimes'].run(client, { vtimes: JSON.stringify(Object.fromEntries(vtimes)) });
      await this.#s['save-fair-clock'].run(client, { clock: newClock });
    }
    return items;
  }

  async starvedInteractive(request: StarvedRequest): Promise<StarvedInteractive> {
    const row = (await this.#s['starved-interactive'].row(this.#pool, {
      cutoff: request.cutoff, served: JSON.stringify(request.served), claimable_statuses: CLAIMABLE_STATUSES, limit: request.limit,
    }))!;
    return { count: Number(row.starved), oldestSince: row.oldest_since === null ? null : Number(row.oldest_since) };
  }

  async heartbeat(owner: string, runIds: string[], leaseMs: number): Promise<HeartbeatResult> {
    if (runIds.length === 0) return { held: [] };
    // Straight to the pool, not through the write queue: lease renewal must never wait behind a backlog of commits,
    // or a busy but healthy worker would lose its leases. It is one statement and order-insensitive (it only extends
    // leases the owner still holds), so it needs neither the queue's ordering nor its transaction.
    const rows = await this.#s.heartbeat.rows(this.#pool, { owner, ids: JSON.stringify(runIds), lease_expires_at: Date.now() + leaseMs });
    const extended = new Set(rows.map((r) => r.id as string));
    const skipped = runIds.filter((id) => !extended.has(id));
    if (skipped.length > 0) rows.push(...(await this.#s['find-held-runs'].rows(this.#pool, { owner, ids: JSON.stringify(skipped) })));
    return { held: rows.map((r) => ({ id: r.id as string, status: r.status as RunStatus, stateVersion: Number(r.state_version) })) };
  }

  releaseLeases(owner: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return Promise.resolve();
    return this.#writes.submit(DURABLE, async (scope) => {
      await this.#s['release-leases'].run(scope.client, { owner, ids: JSON.stringify(runIds), now: scope.now });
      for (const id of runIds) scope.touch(id, 'runnable');
    });
  }

  expireForeignLeases(owner: string): Promise<number> {
    return this.#writes.submit(DURABLE, ({ client, now }) => this.#s['expire-foreign-leases'].run(client, { owner, now }));
  }

  commit(commit: RunCommit): Promise<CommitOutcome> {
    const write = isEffectOnly(commit)
      ? this.#writes.submitMergeable(DURABLE, this.#commitEffects, commit.runId, commit)
      : this.#writes.submit({ ...DURABLE, key: commit.runId }, (scope) => this.#applyCommit(commit, scope));
    return write.then((outcome) => {
      if ('stale' in outcome) throw new KeelError('stale_write', `commit to run ${commit.runId} was fenced off`, { details: outcome.stale });
      return outcome;
    });
  }

  // History

  async loadJournal(runId: string): Promise<JournalEntry[]> {
    return (await this.#s['load-journal'].rows(this.#pool, { run_id: runId })).map(toJournalEntry);
  }

  async listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEventRecord[]> {
    return (await this.#s['list-events'].rows(this.#pool, { run_id: runId, after_seq: afterSeq, limit })).map(toEvent);
  }

  // ── Extension point for store areas kept in their own files (schedules) ──

  /** @internal The pool, for the reads of a store area kept in its own files. */
  get pool(): pg.Pool {
    return this.#pool;
  }

  /**
   * @internal Runs `apply` inside a group-commit transaction, so another store area's rows commit atomically with the
   * runs it creates (`insertRun`, as createRun does) and the cancels it requests (`requestCancel`, as the API's cancel
   * does). `apply` may run twice (a failed batch is retried write by write): it must only write through `client`.
   */
  transact<T>(key: string, apply: (tx: PgTransaction) => Promise<T>): Promise<T> {
    return this.#writes.submit({ ...DURABLE, key }, (scope) => apply({
      client: scope.client,
      now: scope.now,
      insertRun: async (run) => {
        await this.#insertRun(run, scope);
      },
      requestCancel: async (runId, by) => {
        const { rows } = await scope.client.query<Row>('SELECT * FROM runs WHERE id = $1 FOR UPDATE', [runId]);
        if (rows[0] !== undefined) await this.#requestCancel(toRun(rows[0]), scope, by);
      },
    }));
  }

  // --- dashboard (issue 9): read-only aggregates ---
  async summarizeRuns(tenantId: string): Promise<RunSummaryRow[]> {
    return (await this.#s['summarize-runs'].rows(this.#pool, { tenant_id: tenantId })).map(toRunSummaryRow);
  }

  async countEndedRuns(tenantId: string, sinceMs: number, bucketMs: number): Promise<EndedRunsBucket[]> {
    return (await this.#s['count-ended-runs'].rows(this.#pool, { tenant_id: tenantId, since: sinceMs, bucket_ms: bucketMs })).map(toEndedRunsBucket);
  }

  async summarizeTenants(): Promise<TenantSummaryRow[]> {
    return (await this.#s['summarize-tenants'].rows(this.#pool)).map(toTenantSummaryRow);
  }
  // --- end dashboard ---

  // Internals (inside a write transaction)

  async #requireRun(scope: PgWriteScope, runId: string): Promise<RunRecord> {
    const row = await this.#s['get-run'].row(scope.client, { id: runId });
    if (row === undefined) throw new KeelError('run_not_found', `run ${runId} not found`);
    return toRun(row);
  }

  /** Reads the run under a row lock, so checks and writes on it see no concurrent change from another process. */
  async #lockRun(scope: PgWriteScope, runId: string): Promise<RunRecord> {
    const { rows } = await scope.client.query<Row>('SELECT * FROM runs WHERE id = $1 FOR UPDATE', [runId]);
    if (rows[0] === undefined) throw new KeelError('run_not_found', `run ${runId} not found`);
    return toRun(rows[0]);
  }

  async #requestCancel(run: RunRecord, scope: PgWriteScope, by: string): Promise<void> {
    if (run.status === 'cancelling' || isTerminal(run.status)) return;
    await this.#s['request-cancel'].row(scope.client, { id: run.id, now: scope.now, from_statuses: CANCELLABLE_STATUSES });
    await this.#appendEvents(run.id, [{ type: 'run.cancelling', data: { from: run.status, by } }], scope);
    scope.touch(run.id, run.leaseOwner === null ? 'runnable' : 'cancel');
  }

  async #insertRun(run: NewRun, scope: PgWriteScope): Promise<RunRecord> {
    const deadlineAt = run.budget.deadlineMs === undefined ? null : scope.now + run.budget.deadlineMs;
    const row = await this.#s['insert-run'].row(scope.client, {
      id: run.id, tenant_id: run.tenantId, agent: run.agent, agent_version: run.agentVersion,
      agent_key: `${run.agent}@${run.agentVersion}`, input: JSON.stringify(run.input), priority: run.priority,
      priority_rank: priorityRank(run.priority), budget: JSON.stringify(run.budget), metadata: jsonText(run.metadata),
      deadline_at: deadlineAt, parent_run_id: run.parentRunId, idempotency_key: run.idempotencyKey,
      request_hash: run.requestHash, now: scope.now,
    });
    await this.#insertEvents(run.id, 1, [{ type: 'run.created', data: { agent: run.agent, version: run.agentVersion, parentRunId: run.parentRunId } }], scope);
    scope.touch(run.id, 'runnable');
    return toRun(row!);
  }

  async #appendEvents(runId: string, events: EventWrite[], scope: PgWriteScope): Promise<void> {
    if (events.length === 0) return;
    const row = await this.#s['allocate-event-seqs'].row(scope.client, { id: runId, count: events.length });
    await this.#insertEvents(runId, Number(row!.first_seq), events, scope);
  }

  async #insertEvents(runId: string, firstSeq: number, events: EventWrite[], scope: PgWriteScope): Promise<void> {
    if (events.length === 0) return;
    await this.#s['insert-events'].run(scope.client, {
      run_id: runId, first_seq: firstSeq, at: scope.now, events: JSON.stringify(events.map((e) => ({ type: e.type, data: JSON.stringify(e.data) }))),
    });
    scope.touch(runId, 'events');
  }

  async #applyCommit(c: RunCommit, scope: PgWriteScope): Promise<CommitOutcome | { stale: Record<string, unknown> }> {
    const patch = c.run ?? {};
    const events = c.events ?? [];
    const status = patch.status;
    const guard = { id: c.runId, lease_token: c.leaseToken, expected_state_version: c.expectedStateVersion, now: scope.now, event_count: events.length };
    const deltas = {
      d_steps: patch.counters?.steps ?? 0, d_input_tokens: patch.counters?.inputTokens ?? 0,
      d_output_tokens: patch.counters?.outputTokens ?? 0, d_cost_usd: patch.counters?.costUsd ?? 0,
    };
    const claimAfter = status === undefined ? undefined : claimAfterFor(status, patch.releaseLease === true, patch.wakeAt ?? null, scope.now);
    const entries = JSON.stringify((c.journal ?? []).map(journalRow));
    const row = await this.#s['commit-run'].row(scope.client, {
      ...guard, ...deltas,
      set_status: status === undefined ? 0 : 1, status: status ?? null, terminal: status !== undefined && isTerminal(status) ? 1 : 0,
      set_result: 'result' in patch ? 1 : 0, result: jsonText(patch.result),
      set_error: 'error' in patch ? 1 : 0, error: jsonText(patch.error),
      set_outcome: 'outcome' in patch ? 1 : 0, outcome: patch.outcome ?? null,
      set_compensation: 'compensation' in patch ? 1 : 0, compensation: jsonText(patch.compensation),
      set_waiting: 'waitingReason' in patch ? 1 : 0, waiting_reason: patch.waitingReason ?? null,
      set_wake_at: 'wakeAt' in patch ? 1 : 0, wake_at: patch.wakeAt ?? null,
      release: patch.releaseLease === true ? 1 : 0, set_claim_after: claimAfter === undefined ? 0 : 1, claim_after: claimAfter ?? null,
    });
    if (row === undefined) return { stale: await this.#auditStale(c, scope) };
    if (patch.preempted === true) await this.#s['mark-preempted'].run(scope.client, { id: c.runId, now: scope.now });
    if ((c.journal ?? []).length > 0) {
      await this.#s['upsert-journal'].run(scope.client, { run_id: c.runId, lease_token: c.leaseToken, entries });
    }
    await this.#insertEvents(c.runId, Number(row.first_seq), events, scope);
    if (status !== undefined && isTerminal(status)) scope.touch(c.runId, 'ended');
    if (status === 'queued' || (patch.releaseLease === true && status === 'cancelling')) scope.touch(c.runId, 'runnable');
    for (const key of c.consumeInputs ?? []) await this.#s['consume-input'].run(scope.client, { run_id: c.runId, key });
    for (const child of c.createRuns ?? []) await this.#insertRun(child, scope);
    for (const id of c.wakeRuns ?? []) {
      if ((await this.#s['wake-run'].row(scope.client, { id, now: scope.now })) !== undefined) {
        await this.#appendEvents(id, [{ type: 'run.queued', data: { reason: 'child', childRunId: c.runId } }], scope);
        scope.touch(id, 'runnable');
      }
    }
    for (const id of c.cancelRuns ?? []) {
      const child = await this.#s['get-run'].row(scope.client, { id });
      if (child !== undefined) await this.#requestCancel(toRun(child), scope, `parent ${c.runId}`);
    }
    let finalStatus = row.status as RunStatus;
    if (finalStatus === 'waiting' && c.wakeIf !== undefined) {
      const woke = await this.#s['wake-if-ready'].row(scope.client, {
        id: c.runId, now: scope.now, input_keys: JSON.stringify(c.wakeIf.inputKeys ?? []), child_ids: JSON.stringify(c.wakeIf.childRunIds ?? []),
      });
      if (woke !== undefined) {
        finalStatus = 'queued';
        await this.#appendEvents(c.runId, [{ type: 'run.queued', data: { reason: 'ready' } }], scope);
        scope.touch(c.runId, 'runnable');
      }
    }
    return { stateVersion: Number(row.state_version), status: finalStatus };
  }

  /**
   * The hot path: effect commits (counters, journal, events only) of different runs in one statement; the group
   * commit queue merges neighbouring ones. A commit missing from the result was stale: it is audited here.
   */
  readonly #commitEffects = async (scope: PgWriteScope, commits: RunCommit[]): Promise<Array<CommitOutcome | { stale: Record<string, unknown> }>> => {
    const rows = await this.#s['commit-effects'].rows(scope.client, {
      now: scope.now,
      commits: JSON.stringify(commits.map((c, idx) => ({
        idx, id: c.runId, lease_token: c.leaseToken, expected_state_version: c.expectedStateVersion,
        d_steps: c.run?.counters?.steps ?? 0, d_input_tokens: c.run?.counters?.inputTokens ?? 0,
        d_output_tokens: c.run?.counters?.outputTokens ?? 0, d_cost_usd: c.run?.counters?.costUsd ?? 0,
        entries: (c.journal ?? []).map(journalRow), events: (c.events ?? []).map((e) => ({ type: e.type, data: JSON.stringify(e.data) })),
      }))),
    });
    const applied = new Map(rows.map((r) => [Number(r.idx), r]));
    const outcomes: Array<CommitOutcome | { stale: Record<string, unknown> }> = [];
    for (const [idx, c] of commits.entries()) {
      const row = applied.get(idx);
      if (row === undefined) {
        outcomes.push({ stale: await this.#auditStale(c, scope) });
        continue;
      }
      if ((c.events ?? []).length > 0) scope.touch(c.runId, 'events');
      outcomes.push({ stateVersion: Number(row.state_version), status: row.status as RunStatus });
    }
    return outcomes;
  };

  async #auditStale(c: RunCommit, scope: PgWriteScope): Promise<Record<string, unknown>> {
    const current = await this.#s['get-run'].row(scope.client, { id: c.runId });
    const stale = {
      leaseToken: c.leaseToken, expectedStateVersion: c.expectedStateVersion,
      currentLeaseToken: current === undefined ? null : Number(current.lease_token),
      currentStateVersion: current === undefined ? null : Number(current.state_version), currentStatus: current?.status ?? null,
    };
    await this.#s['insert-audit'].run(scope.client, {
      run_id: c.runId, at: scope.now, kind: 'stale_commit',
      data: JSON.stringify({ ...stale, journal: (c.journal ?? []).map((j) => ({ seq: j.seq, kind: j.kind, name: j.name, status: j.status })) }),
    });
    return stale;
  }
}

/** A commit that only adds counters, journal entries and events: the shape most effect results have. */
function isEffectOnly(c: RunCommit): boolean {
  const patchKeys = Object.keys(c.run ?? {});
  const sideWork = [c.createRuns, c.wakeRuns, c.cancelRuns, c.consumeInputs].some((list) => (list ?? []).length > 0) || c.wakeIf !== undefined;
  return patchKeys.every((k) => k === 'counters') && !sideWork;
}

function journalRow(j: JournalWrite): Record<string, unknown> {
  return {
    seq: j.seq, kind: j.kind, name: j.name, status: j.status, args: jsonText(j.args), result: jsonText(j.result), error: jsonText(j.error),
    execution_id: j.executionId ?? null, effect_class: j.effectClass ?? null, attempts: j.attempts ?? 1, worker: j.worker ?? null,
    queued_at: j.queuedAt ?? null, started_at: j.startedAt ?? null, ended_at: j.endedAt ?? null, deadline_at: j.deadlineAt ?? null,
  };
}

