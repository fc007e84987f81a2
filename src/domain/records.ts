// Plain records the store reads and writes: runs, journal entries, events, tenants.
// Shared by both store implementations and by the engine; no behaviour lives here.
import type { SerializedError } from './keel-error.ts';
import type { EffectStatus } from './effect-status.ts';
import type { RunStatus } from './run-status.ts';
import type { Json } from './json.ts';
import { EMPTY_REDACTION_POLICY, type RedactionPolicy } from './redaction-policy.ts';
import type { RecoveredLease } from './attempts.ts';
import type { EgressDestination } from './egress-scope.ts';
import type { DelegatedChildPolicy } from './delegation.ts';

export type Priority = 'interactive' | 'batch';

export interface Budget {
  maxSteps?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  deadlineMs?: number;
  /**
   * Retries of failed tool calls and steps this run may spend in all (default 100): retries cannot
   * multiply load.
   */
  maxRetries?: number;
}

export interface RunCounters {
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/**
 * What a failed or cancelled run undid: completed executions compensated, and those that could not
 * be.
 */
export interface CompensationReport {
  compensated: Array<{ executionId: string; tool: string }>;
  /**
   * The compensation itself failed (after its retries), or the tool is not known to the worker that
   * ended the run.
   */
  failed: Array<{ executionId: string; tool: string; error: SerializedError }>;
  /** The execution's outcome is unknown, so there is nothing Keel can safely undo. */
  unknown: Array<{ executionId: string; tool: string }>;
}

/** How a cancelled run ended, as far as side effects go. */
export type CancelOutcome = 'no_side_effects' | 'after_partial_work' | 'outcome_unknown';

export interface RunRecord {
  id: string;
  tenantId: string;
  agent: string;
  agentVersion: string;
  input: Json;
  status: RunStatus;
  stateVersion: number;
  priority: Priority;
  budget: Budget;
  metadata: Record<string, Json> | null;
  /** The run's egress list (given at creation): narrows its sandboxes' network; null: none. */
  egressAllow: EgressDestination[] | null;
  counters: RunCounters;
  result: Json | null;
  error: SerializedError | null;
  outcome: CancelOutcome | null;
  /**
   * The grace (ms) its cancel's requester gave tool calls in flight before they are aborted; null:
   * none given (the agent's or the node's applies).
   */
  cancelGraceMs: number | null;
  /** Set when a failed or cancelled run had completed executions with a compensation hook. */
  compensation: CompensationReport | null;
  waitingReason: string | null;
  waitingSince: number | null;
  /** The agent's last `ctx.progress(state)`, with when it was reported (ms since the epoch). */
  progress: RunProgress | null;
  /** Set while a running run has not moved past its agent's `stallAfterMs` (stall-watch.ts). */
  stalled: RunStall | null;
  wakeAt: number | null;
  deadlineAt: number | null;
  /**
   * When deadline-aware admission expected the run to finish (src/domain/admission.ts), or null
   * (no deadline, or nothing measured yet).
   */
  expectedFinishAt: number | null;
  parentRunId: string | null;
  idempotencyKey: string | null;
  leaseOwner: string | null;
  leaseToken: number;
  leaseExpiresAt: number | null;
  /** Leases lost (expired, never released) since the run's last commit: the poison counter. */
  leaseLosses: number;
  /** The workers that lost them, oldest first. */
  leaseLossOwners: string[];
  /**
   * Times the run was preempted (a batch run sent back to the queue at an effect boundary for
   * interactive work).
   */
  preemptions: number;
  /** When it was last preempted. */
  preemptedAt: number | null;
  /**
   * The lease its last preemption ended (@internal: the claim after it, this + 1, measures the
   * requeue delay).
   */
  preemptedLeaseToken: number | null;
  /** Attempts so far: claims that took the run's lease (the number of the latest). */
  attempts: number;
  /**
   * Every lease of the run that expired unreleased (its worker died or stalled), never reset: unlike
   * `leaseLosses`, the poison counter, which each commit resets.
   */
  leaseExpiries: number;
  /**
   * On a claim's result only (@internal): the claim took over an expired lease, so the attempt it
   * starts recovers the run.
   */
  recovered?: RecoveredLease;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
  /**
   * Set by the API's archive reads (@internal) when retention archived the run: `complete` false
   * while a chunk of its archive is missing.
   */
  archive?: { complete: boolean } | undefined;
  /** The run this one reruns (a new run of the same agent and input, nothing copied). */
  rerunOf: string | null;
  /** The run whose journal prefix, through `position`, this one copied and went on from. */
  resetFrom: RunResetSource | null;
  /**
   * What seeds ctx.random()/ctx.uuid() (@internal: null means the run id): a reset run keeps its
   * source's seed, so its copied prefix sees the same values.
   */
  randomSeed: string | null;
}

/** Where a reset (or a fork from a position) started: the source run and its last copied position. */
export interface RunResetSource {
  runId: string;
  position: number;
}

export type EffectKind =
  | 'step'
  | 'model'
  | 'tool'
  | 'input'
  | 'sleep'
  | 'child'
  | 'now'
  | 'compensation'
  /** The journaled outcome of a fan-in (ctx.all / ctx.any / ctx.race): which branch decided it. */
  | 'decision'
  /** A message sent with ctx.send (a receive is an `input` wait on the message's key). */
  | 'message'
  /** A read, write or list of the run tree's shared space (ctx.shared). */
  | 'shared'
  /**
   * A snapshot of the run's replay state (ctx.checkpoint): a resume re-enters the agent from the
   * latest one and never replays the positions before it (run-snapshot.ts).
   */
  | 'checkpoint';

export interface JournalEntry {
  runId: string;
  seq: number;
  kind: EffectKind;
  name: string;
  status: EffectStatus;
  /** Tool arguments, wait key, child run id: what identifies the effect beyond its name. */
  args: Json | null;
  result: Json | null;
  error: SerializedError | null;
  executionId: string | null;
  /** Tool effect class, for side-effect bookkeeping after a crash. */
  effectClass: string | null;
  attempts: number;
  /** Fencing token of the lease under which this state was written. */
  leaseToken: number;
  /**
   * The worker (lease owner) that wrote this state; null for states written by the API (a
   * resolution).
   */
  worker: string | null;
  queuedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  /** For waits: when a timer fires or an input wait times out. */
  deadlineAt: number | null;
}

export interface RunEventRecord {
  runId: string;
  seq: number;
  type: string;
  at: number;
  data: Json;
}

/** A tenant's share and limits. A null limit is unlimited. */
export interface TenantQuotas {
  /**
   * Share of claims while backlogged, relative to other tenants' weights (1 to TENANT_WEIGHT_MAX).
   */
  weight: number;
  /**
   * Runs a worker may hold for the tenant at once; its other runs wait (`tenant_concurrency_cap`).
   */
  maxConcurrentRuns: number | null;
  /** Queued runs beyond which `POST /v1/runs` answers 429 `tenant_queue_full`. */
  maxQueuedRuns: number | null;
  /**
   * Model requests per minute for the tenant (null: the models file's `tenantLimits`, else none).
   */
  rpm: number | null;
  /** Model tokens per minute for the tenant (null: the models file's `tenantLimits`, else none). */
  tpm: number | null;
  /**
   * Model tokens (input + output) per UTC day; once spent, model calls wait
   * (`tenant_budget_exhausted`).
   */
  dailyTokenBudget: number | null;
  /** Model spend in USD per UTC day; once spent, model calls wait (`tenant_budget_exhausted`). */
  dailyCostBudgetUsd: number | null;
  /**
   * Pool name → max concurrent effects of the tenant in that pool (enforced by the pool scheduler).
   */
  poolCaps: Record<string, number>;
  /**
   * Values the API and CLI show as "[redacted]" in the tenant's runs and steps (the journal keeps
   * them: replay needs them).
   */
  redact: RedactionPolicy;
  /**
   * Destinations the tenant's sandboxes may reach, narrowing every profile's `network.allow` (a
   * connection must match both); null: no narrowing, `[]`: no network at all.
   */
  egressAllow: EgressDestination[] | null;
}

export const DEFAULT_TENANT_QUOTAS: TenantQuotas = {
  weight: 1,
  maxConcurrentRuns: null,
  maxQueuedRuns: null,
  rpm: null,
  tpm: null,
  dailyTokenBudget: null,
  dailyCostBudgetUsd: null,
  poolCaps: {},
  redact: EMPTY_REDACTION_POLICY,
  egressAllow: null,
};

export interface TenantRecord extends TenantQuotas {
  id: string;
  name: string;
  createdAt: number;
}

export interface NewRun {
  id: string;
  tenantId: string;
  agent: string;
  agentVersion: string;
  input: Json;
  priority: Priority;
  budget: Budget;
  metadata: Record<string, Json> | null;
  /**
   * Destinations the run's sandboxes may reach, narrowing the profile's and the tenant's lists;
   * absent or null: no narrowing.
   */
  egressAllow?: EgressDestination[] | null;
  parentRunId: string | null;
  /**
   * A child started through the API with its parent's delegated token: whether the parent's end
   * cancels it ('cancel', as a ctx.child child by default) or not ('detach'). Absent: a top-level
   * run, or a ctx.child child (its parent's journal holds its policy).
   */
  onParentEnd?: DelegatedChildPolicy;
  idempotencyKey: string | null;
  /**
   * Hash of the creating request, to tell an idempotent replay from a conflicting reuse of the key.
   */
  requestHash: string | null;
  /** Deadline-aware admission's estimate (src/domain/admission.ts); absent: none. */
  expectedFinishAt?: number | null;
  /**
   * Spend admission (src/api/spend-admission.ts): the run's estimated model spend exceeds what its
   * tenant has left today, so it is created `waiting` (`tenant_budget_exhausted`) until `until` (the
   * budget renews) or a budget patch; absent: created queued.
   */
  parkOnBudget?: { until: number; detail: string };
}

/** What `ctx.progress(state)` last reported: the state and when (ms since the epoch). */
export interface RunProgress {
  state: Json;
  at: number;
}

/**
 * A running run that has not moved (no progress report, no effect started or ended) for its agent's
 * `stallAfterMs`: since when it has not moved, the effect in flight then (null when agent code
 * itself sits still), and the policy that was applied.
 */
export interface RunStall {
  since: number;
  effect: { seq: number; kind: string; name: string; attempt: number } | null;
  policy: StallPolicy;
}

/**
 * What the engine does to a stalled run (an agent's `onStall`): `alert` only marks it; `retry-effect`
 * also aborts the tool call in flight and retries it under the tool's retry rules; `fail` fails
 * the run with `run_stalled`.
 */
export const STALL_POLICIES = ['alert', 'retry-effect', 'fail'] as const;
export type StallPolicy = (typeof STALL_POLICIES)[number];
