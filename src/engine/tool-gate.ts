// The policy gate every tool call passes before dispatch (tool-runner.ts calls it for ctx.tool,
// loop agents' model-proposed calls, sandbox tools and any tool routed through runTool): asks the
// tenant's and the agent's tool policies, and either lets the call through, journals a denial (a
// replay then answers the same, from the journal), or parks the run on a human approval bound to
// the call's execution id and argument hash. Every answer but a plain allow is counted and audited.
// It never dispatches a tool itself.
import assert from 'node:assert/strict';
import { argumentsHash, type ApprovalRecord, type NewApproval } from '../domain/approvals.ts';
import type { JournalEntry } from '../domain/records.ts';
import type { Json } from '../domain/json.ts';
import { KeelError } from '../domain/keel-error.ts';
import { evaluatePolicy, type PolicyDecision, type ToolPolicy } from '../domain/tool-policy.ts';
import type { ToolDefinition } from '../sdk/types.ts';
import type { JournalWrite } from '../store/store.ts';
import { telemetry } from '../telemetry/telemetry.ts';
import type { RunPort } from './run-port.ts';

export interface GateDeps {
  /** The policy of the agent the run is pinned to (defineAgent's `policy`). */
  agentPolicy: ToolPolicy | undefined;
}

/** The cost a tool declares for this call, in US dollars (0 when it declares none). */
export function callCost(tool: ToolDefinition<unknown, Json>, args: Json): number {
  const declared = typeof tool.cost === 'function' ? tool.cost(args) : tool.cost;
  return typeof declared === 'number' && Number.isFinite(declared) && declared > 0 ? declared : 0;
}

/**
 * Resolves when the call may be dispatched; rejects with the call's denial (journaled), or never
 * settles in this execution (the run parks on an approval).
 */
export async function gateToolCall(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  args: Json,
  base: Omit<JournalWrite, 'status'>,
  entry: JournalEntry | undefined,
  deps: GateDeps,
): Promise<void> {
  const verdict = await x.track('tool', async () => {
    const tenantPolicy = (await x.store.getToolPolicy(x.run.tenantId)) ?? undefined;
    const decision = evaluatePolicy([tenantPolicy, deps.agentPolicy], {
      tool: tool.name,
      args,
      risk: tool.risk ?? 'low',
      cost: callCost(tool, args),
    });
    // A call parked for approval keeps waiting for its decision even if the policy has relaxed
    // since: the request stands until decided or expired.
    const parked = parkedForApproval(entry);
    if (decision.kind === 'allow' && !parked) return 'dispatch' as const;
    if (decision.kind === 'deny') {
      // A request the policy now forbids is closed (as expired): nobody may approve it any more.
      if (parked) await x.store.expireApproval(x.runId, base.executionId!);
      const error = new KeelError('tool_denied_by_policy', decision.message, {
        details: { tool: tool.name, rule: decision.rule, executionId: base.executionId },
      });
      return deny(x, base, entry, error, { rule: decision.rule });
    }
    return approval(
      x,
      tool,
      args,
      base,
      entry,
      decision.kind === 'approval' ? decision : undefined,
    );
  });
  if (verdict === 'dispatch') return;
  if (verdict instanceof KeelError) throw verdict;
  await x.addWait(verdict);
}

type Verdict = 'dispatch' | KeelError | Parameters<RunPort['addWait']>[0];

/** Whether the journal holds this call parked on an approval request (filed before the park). */
function parkedForApproval(entry: JournalEntry | undefined): boolean {
  if (entry?.status !== 'waiting') return false;
  return (entry.args as { waitingReason?: unknown } | null)?.waitingReason === 'approval';
}

async function approval(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  args: Json,
  base: Omit<JournalWrite, 'status'>,
  entry: JournalEntry | undefined,
  /** The policy's request for approval; undefined when the call was parked on one already. */
  decision: Extract<PolicyDecision, { kind: 'approval' }> | undefined,
): Promise<Verdict> {
  const executionId = base.executionId!;
  const argsHash = argumentsHash(args);
  let request = await x.store.getApproval(x.runId, executionId);
  if (request === null) {
    // The park is committed after the request is filed, so a parked call always has one.
    assert(decision !== undefined, `call ${executionId} parked without an approval request`);
    const now = x.clock.now();
    const filed: NewApproval = {
      runId: x.runId,
      executionId,
      tenantId: x.run.tenantId,
      agent: x.run.agent,
      seq: base.seq,
      tool: tool.name,
      args,
      argsHash,
      risk: tool.risk ?? 'low',
      rule: decision.rule,
      reason: decision.message,
      requestedAt: now,
      expiresAt: now + decision.expiresAfterMs,
    };
    request = await x.store.requestApproval(filed);
    telemetry.toolPolicyDecision(x.run.tenantId, tool.name, 'approval_requested');
    await audit(x, 'approval.requested', 'ok', request, { rule: decision.rule });
  }
  if (request.status === 'pending' && x.clock.now() >= request.expiresAt)
    request = (await x.store.expireApproval(x.runId, executionId)) ?? request;
  const details = { tool: tool.name, executionId, rule: request.rule };
  if (request.status === 'approved' && request.argsHash === argsHash) {
    if (entry?.status === 'waiting') {
      telemetry.toolPolicyDecision(x.run.tenantId, tool.name, 'approved');
      x.emit({ type: 'approval.applied', data: { seq: base.seq, executionId, tool: tool.name } });
    }
    return 'dispatch';
  }
  if (request.status === 'approved' || request.status === 'denied') {
    const error =
      request.status === 'denied'
        ? new KeelError(
            'tool_denied_by_approver',
            `a human denied the call of ${tool.name}${request.note ? `: ${request.note}` : ''}`,
            { details: { ...details, decidedBy: request.decidedBy, note: request.note } },
          )
        : new KeelError(
            'tool_denied_by_policy',
            `the approval of ${tool.name} was given for other arguments`,
            { details: { ...details, rule: 'approval.arguments' } },
          );
    return deny(x, base, entry, error, { decidedBy: request.decidedBy });
  }
  if (request.status === 'expired') {
    const error = new KeelError(
      'approval_expired',
      `no one decided on the call of ${tool.name} before ${new Date(request.expiresAt).toISOString()}`,
      { details },
    );
    await audit(x, 'approval.expired', 'approval_expired', request, {});
    return deny(x, base, entry, error, {});
  }
  return {
    seq: base.seq,
    kind: 'tool',
    name: tool.name,
    deadlineAt: request.expiresAt,
    args: { waitingReason: 'approval', executionId, argsHash, rule: request.rule },
    reason: 'approval',
    detail: `the call of ${tool.name} (${executionId}) waits for a human decision: ${request.reason}`,
  };
}

/** The metric's outcome label of each denial code. */
const DENIAL_OUTCOMES: Readonly<Record<string, string>> = {
  tool_denied_by_policy: 'denied_by_policy',
  tool_denied_by_approver: 'denied_by_approver',
  approval_expired: 'approval_expired',
};

/**
 * Audits a policy denial, then journals the call as failed with `error` (so a replay returns the
 * same failure without asking again) and counts it; the agent receives the error as the tool's.
 */
async function deny(
  x: RunPort,
  base: Omit<JournalWrite, 'status'>,
  entry: JournalEntry | undefined,
  error: KeelError,
  data: Record<string, unknown>,
): Promise<KeelError> {
  // The audit entry goes first: a crash between it and the commit makes the replay decide (and
  // audit) again, so a denial is audited at least once, never lost.
  if (error.code === 'tool_denied_by_policy')
    await x.store.appendAudit({
      tenantId: x.run.tenantId,
      runId: x.runId,
      actor: { type: 'system', id: null, name: null },
      action: 'tool.denied_by_policy',
      resource: `run:${x.runId}`,
      outcome: error.code,
      data: { tool: base.name, executionId: base.executionId ?? null, ...data },
    });
  const now = x.clock.now();
  await x.commit({
    journal: [
      {
        ...base,
        status: 'failed',
        error: error.toJSON(),
        attempts: 0,
        queuedAt: entry?.queuedAt ?? now,
        endedAt: now,
      },
    ],
    events: [
      {
        type: 'effect.completed',
        data: {
          seq: base.seq,
          kind: 'tool',
          name: base.name,
          status: 'failed',
          executionId: base.executionId ?? null,
          attempts: 0,
          durationMs: 0,
          code: error.code,
        },
      },
    ],
  });
  telemetry.toolPolicyDecision(
    x.run.tenantId,
    base.name,
    DENIAL_OUTCOMES[error.code] ?? error.code,
  );
  return error;
}

async function audit(
  x: RunPort,
  action: string,
  outcome: string,
  request: ApprovalRecord,
  data: Record<string, unknown>,
): Promise<void> {
  await x.store.appendAudit({
    tenantId: x.run.tenantId,
    runId: x.runId,
    actor: { type: 'system', id: null, name: null },
    action,
    resource: `run:${x.runId}`,
    outcome,
    data: {
      tool: request.tool,
      executionId: request.executionId,
      argsHash: request.argsHash,
      expiresAt: request.expiresAt,
      ...data,
    },
  });
}
