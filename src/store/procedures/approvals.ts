// The tool-policy and approval procedures both stores share: a tenant's tool policy (read, replace),
// approval requests (filed once per call, read, listed by tenant) and their decisions (a human's,
// which wakes the parked run, or the engine's expiry). A request changes once: only a pending row
// is decided, by a guarded write.
import type {
  ApprovalDecision,
  ApprovalFilter,
  ApprovalRecord,
  ApprovalStatus,
  NewApproval,
} from '../../domain/approvals.ts';
import { approvalTransition } from '../../domain/approvals.ts';
import type { Json } from '../../domain/json.ts';
import { KeelError } from '../../domain/keel-error.ts';
import { isTerminal } from '../../domain/run-status.ts';
import type { RiskLevel, ToolPolicy } from '../../domain/tool-policy.ts';
import type { EventWrite } from '../store.ts';
import { queueApprovalNotification } from './approval-notifications.ts';
import { appendEvents, lockRun } from './runs.ts';
import { all, one, type Procedure, type Row, type Tx } from './transaction.ts';

const num = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

export function toApproval(row: Row): ApprovalRecord {
  return {
    runId: row.run_id as string,
    executionId: row.execution_id as string,
    tenantId: row.tenant_id as string,
    agent: row.agent as string,
    seq: Number(row.seq),
    tool: row.tool as string,
    args: JSON.parse(row.args as string) as Json,
    argsHash: row.args_hash as string,
    risk: row.risk as RiskLevel,
    rule: row.rule as string,
    reason: row.reason as string,
    status: row.status as ApprovalStatus,
    requestedAt: Number(row.requested_at),
    expiresAt: Number(row.expires_at),
    decidedBy: (row.decided_by ?? null) as string | null,
    decidedAt: num(row.decided_at),
    note: (row.note ?? null) as string | null,
  };
}

export function* getToolPolicy(tenantId: string): Procedure<ToolPolicy | null> {
  const row = yield* one('get-tool-policy', { tenant_id: tenantId });
  return row === undefined ? null : (JSON.parse(row.policy as string) as ToolPolicy);
}

export function* putToolPolicy(
  tx: Tx,
  tenantId: string,
  policy: ToolPolicy,
): Procedure<ToolPolicy> {
  if ((yield* one('get-tenant', { id: tenantId })) === undefined)
    throw new KeelError('tenant_not_found', `no tenant ${tenantId}`);
  yield* one('put-tool-policy', {
    tenant_id: tenantId,
    policy: JSON.stringify(policy),
    now: tx.now,
  });
  return policy;
}

/**
 * Files the request (once: a replay finds the first one) and, with it, the approver webhook's
 * `requested` notification; returns the request as stored.
 */
export function* requestApproval(request: NewApproval): Procedure<ApprovalRecord> {
  const filed = yield* one('insert-approval', {
    run_id: request.runId,
    execution_id: request.executionId,
    tenant_id: request.tenantId,
    agent: request.agent,
    seq: request.seq,
    tool: request.tool,
    args: JSON.stringify(request.args),
    args_hash: request.argsHash,
    risk: request.risk,
    rule: request.rule,
    reason: request.reason,
    requested_at: request.requestedAt,
    expires_at: request.expiresAt,
  });
  const stored = toApproval(
    (yield* one('get-approval', { run_id: request.runId, execution_id: request.executionId }))!,
  );
  if (filed !== undefined)
    yield* queueApprovalNotification('requested', stored, request.requestedAt);
  return stored;
}

export function* getApproval(runId: string, executionId: string): Procedure<ApprovalRecord | null> {
  const row = yield* one('get-approval', { run_id: runId, execution_id: executionId });
  return row === undefined ? null : toApproval(row);
}

export function* listApprovals(
  tenantId: string,
  filter: ApprovalFilter,
): Procedure<ApprovalRecord[]> {
  const rows = yield* all('list-approvals', {
    tenant_id: tenantId,
    status: filter.status ?? null,
    run_id: filter.runId ?? null,
    before_at: filter.before?.requestedAt ?? null,
    before_id: filter.before?.executionId ?? null,
    limit: filter.limit,
  });
  return rows.map(toApproval);
}

/**
 * A human's decision on a pending request: recorded (with who and their note), the run queued if it
 * was parked, an `approval.decided` event. Refuses a request that is decided already
 * (`approval_already_decided`) or past its expiry (`approval_expired`).
 */
export function* decideApproval(
  tx: Tx,
  runId: string,
  executionId: string,
  decision: ApprovalDecision,
): Procedure<ApprovalRecord> {
  const current = yield* lockRun(runId);
  if (isTerminal(current.status))
    throw new KeelError('run_terminal', `run ${runId} has already ${current.status}`);
  const found = yield* getApproval(runId, executionId);
  if (found === null)
    throw new KeelError(
      'approval_not_found',
      `run ${runId} has no approval request ${executionId}`,
    );
  const to = approvalTransition(found.status, decision.decision);
  if (to === undefined)
    throw new KeelError('approval_already_decided', `the request was ${found.status} already`, {
      details: { status: found.status },
    });
  if (tx.now >= found.expiresAt)
    throw new KeelError(
      'approval_expired',
      `the request expired at ${new Date(found.expiresAt).toISOString()}`,
    );
  yield* one('decide-approval', {
    run_id: runId,
    execution_id: executionId,
    status: to,
    decided_by: decision.decidedBy,
    note: decision.note,
    now: tx.now,
  });
  const events: EventWrite[] = [
    {
      type: 'approval.decided',
      data: {
        executionId,
        seq: found.seq,
        tool: found.tool,
        decision: to,
        decidedBy: decision.decidedBy,
      },
    },
  ];
  if ((yield* one('wake-run', { id: runId, now: tx.now })) !== undefined) {
    events.push({ type: 'run.queued', data: { reason: 'approval', executionId } });
    tx.touch(runId, 'runnable');
  }
  yield* appendEvents(tx, runId, events);
  const decided = (yield* getApproval(runId, executionId))!;
  yield* queueApprovalNotification('decided', decided, tx.now);
  return decided;
}

/**
 * The engine's expiry of a pending request whose time passed; returns the request as it stands (a
 * human's decision that came first wins).
 */
export function* expireApproval(
  tx: Tx,
  runId: string,
  executionId: string,
): Procedure<ApprovalRecord | null> {
  const expired = yield* one('decide-approval', {
    run_id: runId,
    execution_id: executionId,
    status: 'expired',
    decided_by: null,
    note: null,
    now: tx.now,
  });
  const current = yield* getApproval(runId, executionId);
  if (expired !== undefined && current !== null)
    yield* queueApprovalNotification('expired', current, tx.now);
  return current;
}
