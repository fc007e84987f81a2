// The approver webhook's procedures both stores share: the tenant's webhook (set, read, removed)
// and its outbox. A notification is filed by the same transaction that files, decides or expires
// the approval request (so a committed request is never left without its notification, and a
// rolled-back one never has one), at most once per request and kind; deliverers claim due ones
// with a lease and a fencing token and record each attempt under it.
import {
  approvalNotificationId,
  approvalNotificationPayload,
  type ApprovalNotificationFilter,
  type ApprovalNotificationRecord,
  type ApprovalNotificationStatus,
  type ApprovalWebhook,
  type ApprovalWebhookEvent,
  type DeliveryOutcome,
} from '../../domain/approval-webhooks.ts';
import type { ApprovalRecord } from '../../domain/approvals.ts';
import type { Json } from '../../domain/json.ts';
import { KeelError } from '../../domain/keel-error.ts';
import { all, one, run, type Procedure, type Row } from './transaction.ts';

const num = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

function toWebhook(row: Row): ApprovalWebhook {
  const events: ApprovalWebhookEvent[] = ['requested'];
  if (Number(row.notify_decided) === 1) events.push('decided');
  if (Number(row.notify_expired) === 1) events.push('expired');
  return {
    tenantId: row.tenant_id as string,
    url: row.url as string,
    secretRef: row.secret_ref as string,
    events,
    updatedAt: Number(row.updated_at),
  };
}

export function toApprovalNotification(row: Row): ApprovalNotificationRecord {
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    runId: row.run_id as string,
    executionId: row.execution_id as string,
    kind: row.kind as ApprovalWebhookEvent,
    url: row.url as string,
    payload: JSON.parse(row.payload as string) as Json,
    status: row.status as ApprovalNotificationStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    lastError: (row.last_error ?? null) as string | null,
    deliveredAt: num(row.delivered_at),
    createdAt: Number(row.created_at),
    claimToken: Number(row.claim_token),
  };
}

export function* putApprovalWebhook(
  webhook: Omit<ApprovalWebhook, 'updatedAt'>,
  now: number,
): Procedure<ApprovalWebhook> {
  if ((yield* one('get-tenant', { id: webhook.tenantId })) === undefined)
    throw new KeelError('tenant_not_found', `no tenant ${webhook.tenantId}`);
  const row = yield* one('put-approval-webhook', {
    tenant_id: webhook.tenantId,
    url: webhook.url,
    secret_ref: webhook.secretRef,
    notify_decided: webhook.events.includes('decided') ? 1 : 0,
    notify_expired: webhook.events.includes('expired') ? 1 : 0,
    now,
  });
  return toWebhook(row!);
}

export function* getApprovalWebhook(tenantId: string): Procedure<ApprovalWebhook | null> {
  const row = yield* one('get-approval-webhook', { tenant_id: tenantId });
  return row === undefined ? null : toWebhook(row);
}

export function* deleteApprovalWebhook(tenantId: string): Procedure<boolean> {
  return (yield* one('delete-approval-webhook', { tenant_id: tenantId })) !== undefined;
}

/** Files the `kind` notification of `approval` if the tenant's webhook wants it (else nothing). */
export function* queueApprovalNotification(
  kind: ApprovalWebhookEvent,
  approval: ApprovalRecord,
  now: number,
): Procedure<void> {
  yield run('insert-approval-notification', {
    id: approvalNotificationId(approval.executionId, kind),
    tenant_id: approval.tenantId,
    run_id: approval.runId,
    execution_id: approval.executionId,
    kind,
    payload: JSON.stringify(approvalNotificationPayload(kind, approval)),
    now,
  });
}

export function* claimApprovalNotifications(
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
): Procedure<ApprovalNotificationRecord[]> {
  return (yield* all('claim-approval-notifications', {
    owner,
    now,
    lease_expires_at: now + leaseMs,
    limit,
  })).map(toApprovalNotification);
}

/** Records one attempt under the claim's token; false when the claim was lost meanwhile. */
export function* finishApprovalNotification(
  id: string,
  token: number,
  outcome: DeliveryOutcome,
  now: number,
): Procedure<boolean> {
  const row = yield* one('finish-approval-notification', {
    id,
    token,
    status: outcome.delivered ? 'delivered' : outcome.retryAt === null ? 'failed' : 'pending',
    next_attempt_at: outcome.delivered || outcome.retryAt === null ? now : outcome.retryAt,
    last_error: outcome.delivered ? null : outcome.error,
    delivered_at: outcome.delivered ? now : null,
  });
  return row !== undefined;
}

export function* listApprovalNotifications(
  tenantId: string,
  filter: ApprovalNotificationFilter,
): Procedure<ApprovalNotificationRecord[]> {
  return (yield* all('list-approval-notifications', {
    tenant_id: tenantId,
    run_id: filter.runId ?? null,
    before_at: filter.before?.createdAt ?? null,
    before_id: filter.before?.id ?? null,
    limit: filter.limit,
  })).map(toApprovalNotification);
}

export function* releaseApprovalNotificationClaims(owner: string): Procedure<number> {
  return (yield* all('release-approval-notification-claims', { owner })).length;
}
