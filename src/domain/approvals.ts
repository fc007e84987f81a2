// Human approval of a tool call: the record the store keeps for one request, its statuses as a
// transition table, and the hash that binds a decision to the exact call (its execution id and its
// canonical arguments). Vocabulary only: the engine files requests, the API decides them.
import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { Json } from './json.ts';
import type { RiskLevel } from './tool-policy.ts';

export const APPROVAL_STATUS = {
  pending: 'pending',
  approved: 'approved',
  denied: 'denied',
  expired: 'expired',
} as const;
export type ApprovalStatus = keyof typeof APPROVAL_STATUS;

export type ApprovalEvent = 'approve' | 'deny' | 'expire';

/** Only a pending request moves, once: a decision or an expiry is final. */
export const APPROVAL_TRANSITIONS: Readonly<
  Record<ApprovalStatus, Partial<Record<ApprovalEvent, ApprovalStatus>>>
> = {
  pending: { approve: 'approved', deny: 'denied', expire: 'expired' },
  approved: {},
  denied: {},
  expired: {},
};

/** The status after `event`, or undefined when the request cannot take it. */
export function approvalTransition(
  from: ApprovalStatus,
  event: ApprovalEvent,
): ApprovalStatus | undefined {
  return APPROVAL_TRANSITIONS[from][event];
}

/** Longest note a human may attach to a decision, in characters. */
export const APPROVAL_NOTE_MAX_CHARS = 2_000;

/** One request for a human decision on one proposed tool call. */
export interface ApprovalRecord {
  runId: string;
  /** The call's stable execution id (`<runId>.<seq>`). */
  executionId: string;
  tenantId: string;
  agent: string;
  seq: number;
  tool: string;
  args: Json;
  /** sha256 of the canonical arguments: a decision applies only to a call with the same hash. */
  argsHash: string;
  risk: RiskLevel;
  /** The policy rule that asked for approval (e.g. `approval.tools:send_email`) and why. */
  rule: string;
  reason: string;
  status: ApprovalStatus;
  requestedAt: number;
  expiresAt: number;
  /** Who decided (the key's id, or `platform-admin`), when, and their note; null while pending. */
  decidedBy: string | null;
  decidedAt: number | null;
  note: string | null;
}

export type NewApproval = Omit<ApprovalRecord, 'status' | 'decidedBy' | 'decidedAt' | 'note'>;

export interface ApprovalDecision {
  decision: 'approve' | 'deny';
  /** Who decides: a key id, or `platform-admin`. */
  decidedBy: string;
  note: string | null;
}

export interface ApprovalFilter {
  status?: ApprovalStatus;
  runId?: string;
  /** Requests filed before this cursor (requestedAt, executionId) of the previous page's last. */
  before?: { requestedAt: number; executionId: string };
  limit: number;
}

/** The hash of a call's arguments in canonical form (keys sorted), hex sha256. */
export function argumentsHash(args: Json): string {
  return createHash('sha256')
    .update(stringify(args) ?? 'null')
    .digest('hex');
}
