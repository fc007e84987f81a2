// The run procedures both stores share: creating a run (idempotency and queue admission),
// cancelling, posting an input, resolving an unknown execution, re-admitting a quarantined run, and
// the event appends they all make. Each is written once over named statements (see transaction.ts);
// each store runs it inside its own write transaction.
import { KeelError } from '../../domain/keel-error.ts';
import type { Json } from '../../domain/json.ts';
import type { NewRun, RunRecord } from '../../domain/records.ts';
import { runDueAt } from '../../domain/run-order.ts';
import { isTerminal, statusesAllowing } from '../../domain/run-status.ts';
import { waitingEvent } from '../../domain/waiting-reasons.ts';
import { priorityRank } from '../claim-rules.ts';
import { notQuarantined } from '../quarantine.ts';
import { jsonText, toJournalEntry, toRun, toTenant } from '../rows.ts';
import type { CreateRunResult, EventWrite, ExecutionResolution } from '../store.ts';
import { admitQueuedRun } from '../tenant-quotas.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

const CANCELLABLE_STATUSES = JSON.stringify(
  statusesAllowing('cancel').filter((s) => s !== 'cancelling'),
);

/**
 * Inserts the run, or returns the one created before with the same idempotency key; refuses it over
 * the tenant's queue cap.
 */
export function* createRun(tx: Tx, newRun: NewRun): Procedure<CreateRunResult> {
  if (newRun.idempotencyKey !== null) {
    // Serialise creations under one key (across processes where several share the store); the
    // unique index is the backstop.
    yield* one('lock-key', { key: `${newRun.tenantId}:${newRun.idempotencyKey}` });
    const existing = yield* one('find-run-by-idempotency-key', {
      tenant_id: newRun.tenantId,
      idempotency_key: newRun.idempotencyKey,
    });
    if (existing !== undefined) {
      if (existing.request_hash !== newRun.requestHash) {
        throw new KeelError(
          'idempotency_conflict',
          `idempotency key ${JSON.stringify(newRun.idempotencyKey)} was used with a different request`,
          {
            details: { runId: existing.id as string },
          },
        );
      }
      return { run: toRun(existing), created: false };
    }
  }
  if (newRun.onParentEnd !== undefined && newRun.parentRunId !== null)
    yield* requireLiveParent(newRun.parentRunId);
  yield* admit(tx, newRun.tenantId);
  return { run: yield* insertRun(tx, newRun), created: true };
}

/** Refusals createRun makes before it writes anything: a batch may go on past them. */
const ITEM_REFUSALS: ReadonlySet<string> = new Set(['idempotency_conflict', 'tenant_queue_full']);

/**
 * Creates many runs in one transaction, in order: each as createRun would, an item refused
 * (idempotency_conflict, tenant_queue_full: raised before that item wrote anything) answered as its
 * error while the others go on. Any other error fails the whole transaction.
 */
export function* createRuns(
  tx: Tx,
  newRuns: readonly NewRun[],
): Procedure<Array<CreateRunResult | KeelError>> {
  const results: Array<CreateRunResult | KeelError> = [];
  for (const newRun of newRuns) {
    try {
      results.push(yield* createRun(tx, newRun));
    } catch (error) {
      if (!(error instanceof KeelError) || !ITEM_REFUSALS.has(error.code)) throw error;
      results.push(error);
    }
  }
  return results;
}

/**
 * A delegated child is created only while its parent is live, under the parent's row lock: the
 * parent's end commit (which updates that row) then either comes first, and the child is refused,
 * or after, and finds the child to cancel. Without it a child created between the token's check and
 * the parent's end would be an orphan.
 */
function* requireLiveParent(parentRunId: string): Procedure<void> {
  const parent = yield* one('lock-run', { id: parentRunId });
  const status = parent === undefined ? undefined : toRun(parent).status;
  if (status === undefined || isTerminal(status) || status === 'cancelling')
    throw new KeelError(
      'delegated_token_revoked',
      `run ${parentRunId} has ended: its delegated tokens are refused`,
    );
}

/**
 * Refuses a run over the tenant's max queued runs. Creations for a capped tenant are serialised by
 * a lock on the tenant's admission key (not on the tenant row, which claims and quota updates also
 * write), so the count and the insert act as one.
 */
function* admit(_tx: Tx, tenantId: string): Procedure<void> {
  const tenant = yield* one('get-tenant', { id: tenantId });
  const maxQueued = tenant === undefined ? null : toTenant(tenant).maxQueuedRuns;
  if (maxQueued === null) return;
  yield* one('lock-key', { key: `keel-admission:${tenantId}` });
  const queued = yield* one('count-queued-runs', { tenant_id: tenantId, limit: maxQueued });
  admitQueuedRun(tenantId, maxQueued, Number(queued!.queued));
}

/**
 * Inserts a queued run and its `run.created` event (a created run, a child run, a schedule's fire).
 */
export function* insertRun(tx: Tx, newRun: NewRun): Procedure<RunRecord> {
  const deadlineAt =
    newRun.budget.deadlineMs === undefined ? null : tx.now + newRun.budget.deadlineMs;
  const row = yield* one('insert-run', {
    id: newRun.id,
    tenant_id: newRun.tenantId,
    agent: newRun.agent,
    agent_version: newRun.agentVersion,
    agent_key: `${newRun.agent}@${newRun.agentVersion}`,
    input: JSON.stringify(newRun.input),
    priority: newRun.priority,
    priority_rank: priorityRank(newRun.priority),
    budget: JSON.stringify(newRun.budget),
    metadata: jsonText(newRun.metadata),
    egress_allow: jsonText(newRun.egressAllow ?? null),
    deadline_at: deadlineAt,
    due_at: runDueAt({ admittedAt: tx.now, deadlineAt }),
    expected_finish_at: newRun.expectedFinishAt ?? null,
    parent_run_id: newRun.parentRunId,
    on_parent_end: newRun.onParentEnd ?? null,
    idempotency_key: newRun.idempotencyKey,
    request_hash: newRun.requestHash,
    now: tx.now,
  });
  yield* insertEvents(tx, newRun.id, 1, [
    {
      type: 'run.created',
      data: { agent: newRun.agent, version: newRun.agentVersion, parentRunId: newRun.parentRunId },
    },
  ]);
  const park = newRun.parkOnBudget;
  if (park !== undefined) {
    const parked = yield* one('park-admitted-run', {
      id: newRun.id,
      wake_at: park.until,
      now: tx.now,
    });
    yield* insertEvents(tx, newRun.id, 2, [
      waitingEvent('tenant_budget_exhausted', tx.now, park.detail, { admission: true }),
    ]);
    return toRun(parked!);
  }
  tx.touch(newRun.id, 'runnable');
  return toRun(row!);
}

/**
 * The API's cancel: `run_terminal` for an ended run; a run already cancelling is left as it is
 * (its grace too). `graceMs`: the requester's grace for tool calls in flight (null: the default).
 */
export function* requestCancel(
  tx: Tx,
  runId: string,
  graceMs: number | null = null,
): Procedure<RunRecord> {
  const current = yield* lockRun(runId);
  if (isTerminal(current.status))
    throw new KeelError('run_terminal', `run ${runId} has already ${current.status}`);
  yield* cancelRun(tx, current, 'api', graceMs);
  return yield* requireRun(runId);
}

/**
 * Requests cancellation of a run that is not terminal; a missing, terminal or cancelling run is
 * left alone.
 */
export function* cancelRunById(tx: Tx, runId: string, by: string, lock: boolean): Procedure<void> {
  const row = yield* one(lock ? 'lock-run' : 'get-run', { id: runId });
  if (row !== undefined) yield* cancelRun(tx, toRun(row), by);
}

/**
 * Part of a run's end (the commit that makes it terminal): cancels its live children that its
 * journal does not name, those started with its delegated token and `onParentEnd: 'cancel'`. Each
 * is locked before it is read (see cancelRunById); one already cancelling or ended is left alone.
 */
export function* cancelDelegatedChildren(tx: Tx, parentRunId: string): Procedure<void> {
  const rows = yield* all('list-children-ending-with-run', {
    parent_run_id: parentRunId,
    statuses: CANCELLABLE_STATUSES,
  });
  for (const row of rows) yield* cancelRunById(tx, row.id as string, `parent ${parentRunId}`, true);
}

function* cancelRun(
  tx: Tx,
  target: RunRecord,
  by: string,
  graceMs: number | null = null,
): Procedure<void> {
  if (target.status === 'cancelling' || isTerminal(target.status)) return;
  yield* one('request-cancel', {
    id: target.id,
    now: tx.now,
    from_statuses: CANCELLABLE_STATUSES,
    grace_ms: graceMs,
  });
  yield* appendEvents(tx, target.id, [
    {
      type: 'run.cancelling',
      data: { from: target.status, by, ...(graceMs === null ? {} : { graceMs }) },
    },
  ]);
  tx.touch(target.id, target.leaseOwner === null ? 'runnable' : 'cancel');
}

/** Stores an input (once per key) and queues the run if it is waiting for that key. */
export function* provideInput(
  tx: Tx,
  runId: string,
  key: string,
  value: Json,
): Procedure<RunRecord> {
  const current = yield* lockRun(runId);
  if (isTerminal(current.status))
    throw new KeelError('run_terminal', `run ${runId} has already ${current.status}`);
  const inserted = yield* one('insert-input', {
    run_id: runId,
    key,
    value: JSON.stringify(value),
    now: tx.now,
  });
  if (inserted === undefined)
    throw new KeelError(
      'input_already_provided',
      `input ${JSON.stringify(key)} of run ${runId} was provided already`,
    );
  const events: EventWrite[] = [{ type: 'input.received', data: { key } }];
  if ((yield* one('wake-on-input', { id: runId, key, now: tx.now })) !== undefined) {
    events.push({ type: 'run.queued', data: { reason: 'input', key } });
    tx.touch(runId, 'runnable');
  }
  yield* appendEvents(tx, runId, events);
  return yield* requireRun(runId);
}

/**
 * Records an operator's verdict on an `unknown` execution (audited) and queues the run if it was
 * parked on it.
 */
export function* resolveExecution(
  tx: Tx,
  runId: string,
  executionId: string,
  resolution: ExecutionResolution,
): Procedure<RunRecord> {
  const current = yield* lockRun(runId);
  if (isTerminal(current.status))
    throw new KeelError('run_terminal', `run ${runId} has already ${current.status}`);
  const row = yield* one('find-execution', { run_id: runId, execution_id: executionId });
  if (row === undefined)
    throw new KeelError('execution_not_found', `run ${runId} has no execution ${executionId}`);
  const entry = toJournalEntry(row);
  const changed = yield* one('resolve-execution', {
    run_id: runId,
    seq: entry.seq,
    status: resolution.action === 'retry' ? 'pending' : resolution.action,
    now: tx.now,
    result: resolution.action === 'succeeded' ? jsonText(resolution.result) : null,
    error: resolution.action === 'failed' ? jsonText(resolution.error) : null,
  });
  if (changed === undefined) {
    throw new KeelError(
      'execution_not_unknown',
      `execution ${executionId} is ${entry.status}; only unknown executions can be resolved`,
      { details: { status: entry.status } },
    );
  }
  yield run('insert-audit', {
    run_id: runId,
    at: tx.now,
    kind: 'execution_resolved',
    data: JSON.stringify({ executionId, seq: entry.seq, resolution }),
  });
  const events: EventWrite[] = [
    { type: 'effect.resolved', data: { seq: entry.seq, executionId, action: resolution.action } },
  ];
  if ((yield* one('wake-run', { id: runId, now: tx.now })) !== undefined) {
    events.push({ type: 'run.queued', data: { reason: 'resolved', executionId } });
    tx.touch(runId, 'runnable');
  }
  yield* appendEvents(tx, runId, events);
  return yield* requireRun(runId);
}

/** Queues a quarantined run (failed with `poison_run`) again with its journal; audited. */
export function* readmitRun(tx: Tx, runId: string): Procedure<RunRecord> {
  const current = yield* lockRun(runId);
  if ((yield* one('readmit-run', { id: runId, now: tx.now })) === undefined)
    throw notQuarantined(current);
  yield run('insert-audit', {
    run_id: runId,
    at: tx.now,
    kind: 'run_readmitted',
    data: JSON.stringify({ leaseLosses: current.leaseLosses, error: current.error }),
  });
  yield* appendEvents(tx, runId, [
    { type: 'run.readmitted', data: { after: current.error as unknown as Json } },
  ]);
  tx.touch(runId, 'runnable');
  return yield* requireRun(runId);
}

/** Gives leases up without progress (shutdown): the runs become claimable at once. */
export function* releaseLeases(tx: Tx, owner: string, runIds: readonly string[]): Procedure<void> {
  yield run('release-leases', { owner, ids: JSON.stringify(runIds), now: tx.now });
  // Their attempts end as released (see attempts.ts).
  yield run('release-attempts', { owner, ids: JSON.stringify(runIds), now: tx.now });
  for (const id of runIds) tx.touch(id, 'runnable');
}

/** Appends events at the run's next sequence numbers (allocated in the same transaction). */
export function* appendEvents(
  tx: Tx,
  runId: string,
  events: readonly EventWrite[],
): Procedure<void> {
  if (events.length === 0) return;
  const row = yield* one('allocate-event-seqs', { id: runId, count: events.length });
  yield* insertEvents(tx, runId, Number(row!.first_seq), events);
}

/** Inserts events at consecutive sequence numbers from `firstSeq` (already allocated). */
export function* insertEvents(
  tx: Tx,
  runId: string,
  firstSeq: number,
  events: readonly EventWrite[],
): Procedure<void> {
  if (events.length === 0) return;
  if (tx.dialect.bulkStatements) {
    yield run('insert-events', {
      run_id: runId,
      first_seq: firstSeq,
      at: tx.now,
      events: JSON.stringify(events.map((e) => ({ type: e.type, data: JSON.stringify(e.data) }))),
    });
  } else {
    for (let i = 0; i < events.length; i++) {
      yield run('insert-event', {
        run_id: runId,
        seq: firstSeq + i,
        type: events[i]!.type,
        at: tx.now,
        data: JSON.stringify(events[i]!.data),
      });
    }
  }
  tx.touch(runId, 'events');
}

export function* requireRun(runId: string): Procedure<RunRecord> {
  const row = yield* one('get-run', { id: runId });
  if (row === undefined) throw new KeelError('run_not_found', `run ${runId} not found`);
  return toRun(row);
}

/**
 * Reads the run under a row lock (dialects with concurrent writers), so checks and writes on it see
 * no concurrent change.
 */
export function* lockRun(runId: string): Procedure<RunRecord> {
  const row = yield* one('lock-run', { id: runId });
  if (row === undefined) throw new KeelError('run_not_found', `run ${runId} not found`);
  return toRun(row);
}
