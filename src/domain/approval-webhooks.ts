// The approver webhook: a tenant's configuration (where to POST, which `secret:NAME` signs, which
// events besides a new request), the outbox record of one notification (one per request and event
// kind, ever), the body sent, and the HMAC signature a receiver checks. Vocabulary and pure
// functions only: the store files notifications with the approval, the notifier delivers them.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ApprovalRecord } from './approvals.ts';
import type { Json } from './json.ts';

/** What an approver can be told: a new request always; its decision and its expiry on request. */
export const APPROVAL_WEBHOOK_EVENTS = ['requested', 'decided', 'expired'] as const;
export type ApprovalWebhookEvent = (typeof APPROVAL_WEBHOOK_EVENTS)[number];

/** The request header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'keel-signature';
/** How far a receiver should accept a signature's timestamp from its own clock, in seconds. */
export const WEBHOOK_SIGNATURE_TOLERANCE_S = 300;

export interface ApprovalWebhook {
  tenantId: string;
  url: string;
  /** `secret:NAME`: the tenant secret whose current value signs every delivery. */
  secretRef: string;
  /** Always includes `requested`. */
  events: ApprovalWebhookEvent[];
  updatedAt: number;
}

export type ApprovalNotificationStatus = 'pending' | 'delivered' | 'failed';

/** One notification in the outbox, with its delivery state. */
export interface ApprovalNotificationRecord {
  /** `apn_<executionId>.<kind>`: the same on every attempt (sent as Idempotency-Key). */
  id: string;
  tenantId: string;
  runId: string;
  executionId: string;
  kind: ApprovalWebhookEvent;
  url: string;
  payload: Json;
  status: ApprovalNotificationStatus;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  deliveredAt: number | null;
  createdAt: number;
  /** The claim's fencing token: an attempt is recorded only under the claim it was made with. */
  claimToken: number;
}

/** What one delivery attempt came to: delivered, or an error and when to try again (null: never). */
export type DeliveryOutcome =
  | { delivered: true }
  | { delivered: false; error: string; retryAt: number | null };

export interface ApprovalNotificationFilter {
  runId?: string;
  /** Notifications filed before this cursor (createdAt, id) of the previous page's last. */
  before?: { createdAt: number; id: string };
  limit: number;
}

export function approvalNotificationId(executionId: string, kind: ApprovalWebhookEvent): string {
  return `apn_${executionId}.${kind}`;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * The body of a notification, built once when it is filed so every attempt sends the same bytes.
 * It carries the call to decide on (tool, arguments and their hash) and where to decide it.
 */
export function approvalNotificationPayload(
  kind: ApprovalWebhookEvent,
  approval: ApprovalRecord,
): Json {
  return {
    type: `approval.${kind}`,
    notificationId: approvalNotificationId(approval.executionId, kind),
    tenantId: approval.tenantId,
    run: { id: approval.runId, agent: approval.agent },
    executionId: approval.executionId,
    seq: approval.seq,
    tool: approval.tool,
    args: approval.args,
    argsHash: approval.argsHash,
    risk: approval.risk,
    rule: approval.rule,
    reason: approval.reason,
    status: approval.status,
    requestedAt: iso(approval.requestedAt),
    expiresAt: iso(approval.expiresAt),
    decidedBy: approval.decidedBy,
    decidedAt: iso(approval.decidedAt),
    note: approval.note,
    decide: {
      method: 'POST',
      path: `/v1/runs/${approval.runId}/approvals/${approval.executionId}`,
    },
  };
}

function mac(secret: string, timestampS: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex');
}

/**
 * The signature header value for `body` sent at `timestampS`.
 * @example
 * signWebhookBody('s3cret', 1767225600, '{"type":"approval.requested"}'); // 't=1767225600,v1=…'
 */
export function signWebhookBody(secret: string, timestampS: number, body: string): string {
  return `t=${timestampS},v1=${mac(secret, timestampS, body)}`;
}

/**
 * Whether `header` signs `body` with `secret` at a time within the tolerance of `nowS`: what a
 * receiver checks (compared in constant time).
 */
export function verifyWebhookSignature(
  secret: string,
  header: string,
  body: string,
  nowS: number,
  toleranceS: number = WEBHOOK_SIGNATURE_TOLERANCE_S,
): boolean {
  const parts = new Map(
    header.split(',').map((p) => {
      const at = p.indexOf('=');
      return [p.slice(0, at).trim(), p.slice(at + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isSafeInteger(t) || Math.abs(nowS - t) > toleranceS) return false;
  const expected = mac(secret, t, body);
  return (
    given.length === expected.length &&
    timingSafeEqual(Buffer.from(given, 'utf8'), Buffer.from(expected, 'utf8'))
  );
}
