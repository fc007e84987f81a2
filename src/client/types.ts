// The shapes keel/client sends and receives: Keel's `/v1` wire types as plain TypeScript, shared by
// every transport of the KeelRuns interface (HTTP, and keel/embedded in process). Types only:
// nothing here runs, so the client stays free of the server's modules and of Node.

export const RUN_STATUSES = [
  'queued',
  'running',
  'waiting',
  'cancelling',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses a run never leaves. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set([
  'succeeded',
  'failed',
  'cancelled',
]);
/** The event types that close a run's event stream. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  'run.succeeded',
  'run.failed',
  'run.cancelled',
]);

/** Whether a run status is final (succeeded, failed or cancelled). */
export function isTerminalStatus(status: string): boolean {
  return TERMINAL_RUN_STATUSES.has(status as RunStatus);
}

export type Priority = 'interactive' | 'batch';

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface RunError {
  code: string;
  message: string;
  details?: unknown;
}

export interface Budget {
  maxSteps?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  deadlineMs?: number;
  maxRetries?: number;
}

/** A run as the API shows it (GET /v1/runs/:id). */
export interface Run {
  id: string;
  tenantId: string;
  agent: string;
  agentVersion: string;
  status: RunStatus;
  stateVersion: number;
  priority: Priority;
  input: unknown;
  /** The agent's return value, once the run succeeded. */
  result?: unknown;
  error: RunError | null;
  outcome: 'no_side_effects' | 'after_partial_work' | 'outcome_unknown' | null;
  waitingReason: string | null;
  waitingSince: string | null;
  wakeAt: string | null;
  /** The agent's last ctx.progress(state); null when it never reported one. */
  progress: { state: unknown; at: string } | null;
  /** Set while the running run has not moved for its agent's stallAfterMs. */
  stalled: {
    since: string;
    effect: { seq: number; kind: string; name: string; attempt: number } | null;
    policy: 'alert' | 'retry-effect' | 'fail';
  } | null;
  budget: Budget;
  counters: { steps: number; inputTokens: number; outputTokens: number; costUsd: number };
  metadata: Record<string, unknown> | null;
  parentRunId: string | null;
  idempotencyKey: string | null;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
  deadlineAt: string | null;
  expectedFinishAt: string | null;
  rerunOf: string | null;
  resetFrom: { runId: string; position: number } | null;
  /** Present when retention archived the run: its journal and events are read from the archive. */
  archived?: true;
  /** With `archived`: false while a chunk of its archive is missing. */
  archiveComplete?: boolean;
}

export interface CreateRunRequest {
  /** Agent name, or name@version to pin a version. */
  agent: string;
  input?: unknown;
  /**
   * Creating again with the same key returns the first run (a retry after a lost answer is safe);
   * the same key with a different request is refused with `idempotency_conflict`.
   */
  idempotencyKey?: string;
  priority?: Priority;
  budget?: Budget;
  metadata?: Record<string, unknown>;
  /** With budget.deadlineMs: what to do when the run is expected to finish late. */
  whenLate?: 'accept' | 'refuse' | 'batch';
  /**
   * Only with a delegated token (the run is a child of the token's run): `cancel` (default) ends it
   * with its parent, `detach` lets it run on.
   */
  onParentEnd?: 'cancel' | 'detach';
}

export interface ListRunsFilter {
  status?: RunStatus;
  agent?: string;
  /** Only runs whose error has this code (e.g. poison_run). */
  code?: string;
  /** Only the reruns of this run. */
  rerunOf?: string;
  /** Page size, 1–200 (default 50). */
  limit?: number;
  /** The nextCursor of the previous page. */
  cursor?: string;
}

export interface RunPage {
  runs: Run[];
  /** Pass as `cursor` for the next page; null on the last one. */
  nextCursor: string | null;
}

/** One stored run event: `seq` is gapless per run, and what a resumed stream continues after. */
export interface RunEvent {
  seq: number;
  type: string;
  at: string;
  data: unknown;
}

/** A piece of a model answer as it streams: ephemeral, never stored, replaced by its step. */
export interface ModelDelta {
  /** Journal position of the model call (not an event sequence number). */
  seq: number;
  model: string;
  /** The provider attempt: a retried call streams again from its start. */
  attempt: number;
  /** The delta's index within its attempt, from 0. */
  index: number;
  text: string;
}

/**
 * A piece of a tool's output as it runs (the built-in `exec`: its program's stdout and stderr):
 * ephemeral, never stored; the tool's result in its step has the whole output.
 */
export interface ToolOutput {
  /** Journal position of the tool call (not an event sequence number). */
  seq: number;
  executionId: string;
  tool: string;
  attempt: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface Step {
  seq: number;
  kind: string;
  name: string;
  status: string;
  attempts: number;
  executionId: string | null;
  effectClass: string | null;
  fencingToken: number;
  worker: string | null;
  queuedAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  deadlineAt: string | null;
  error?: unknown;
  /** What the step received and returned (previews in a list when the flags say so). */
  input?: Json;
  output?: Json;
  inputTruncated?: boolean;
  outputTruncated?: boolean;
}

/** One claim of a run by a worker (a recovery after a crash is one more). */
export interface Attempt {
  number: number;
  worker: string;
  leaseToken: number;
  startedAt: string;
  endedAt: string | null;
  ending: string;
}

/** A run in a run tree (`runs.tree`): depth 0 is the run asked for, 1 its children, and so on. */
export interface RunTreeNode {
  id: string;
  agent: string;
  agentVersion: string;
  status: RunStatus;
  waitingReason: string | null;
  parentRunId: string | null;
  depth: number;
  /** What the run does when its parent ends (ctx.child's onParentEnd); null without a parent. */
  onParentEnd: 'cancel' | 'detach' | 'wait' | null;
  createdAt: string;
  endedAt: string | null;
}

/** A run and its descendants, breadth first; `truncated`: more exist than the limit let through. */
export interface RunTree {
  rootId: string;
  runs: RunTreeNode[];
  truncated: boolean;
}

/** How an operator decides a tool execution whose outcome is unknown. */
export type Resolution =
  | { action: 'retry' }
  | { action: 'succeeded'; result?: unknown }
  | { action: 'failed'; error?: { message: string } };

export interface RerunRequest {
  idempotencyKey?: string;
}
export interface ResetRequest {
  /** Reuse the source's journal through this position; the current code runs on from there. */
  position: number;
  idempotencyKey?: string;
}
export interface ForkRequest {
  position?: number;
  input?: unknown;
  agentVersion?: string;
  idempotencyKey?: string;
}

/** What a create with a wait or one result request yields: the run, and whether it has ended. */
export interface RunOutcome {
  done: boolean;
  run: Run;
}

export interface RunTemplate {
  agent: string;
  input?: unknown;
  priority?: Priority;
  budget?: Budget;
  metadata?: Record<string, unknown>;
}

export interface CreateScheduleRequest {
  name?: string | null;
  /** Exactly one of cron (5 or 6 fields, read in timeZone) and intervalMs. */
  cron?: string | null;
  intervalMs?: number | null;
  /** IANA time zone name, e.g. Europe/Berlin (required: never the server's zone). */
  timeZone: string;
  /** ISO 8601 instants with an offset. */
  startAt?: string | null;
  endAt?: string | null;
  template: RunTemplate;
  catchupWindowMs?: number;
  /** What a fire does while a previous run is still active (default skip). */
  overlap?: string;
  webhookUrl?: string | null;
}

export type UpdateScheduleRequest = Partial<Omit<CreateScheduleRequest, 'template'>> & {
  template?: RunTemplate;
};

export interface Schedule {
  id: string;
  name: string | null;
  /** Goes up with each edit. */
  version: number;
  cron: string | null;
  intervalMs: number | null;
  timeZone: string;
  startAt: string | null;
  endAt: string | null;
  paused: boolean;
  template: RunTemplate;
  catchupWindowMs: number;
  overlap: string;
  webhookUrl: string | null;
  nextFireAt: string | null;
  lastSuccessAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface SchedulePage {
  schedules: Schedule[];
  nextCursor: string | null;
}

/** One fire of a schedule and what came of it. */
export interface Fire {
  scheduleId: string;
  logicalTime: string;
  kind: 'scheduled' | 'trigger' | 'backfill';
  /** pending, buffered, cancelling_other: waiting; started, cancelled_other: a run was created; skipped, missed: never ran. */
  status: string;
  runId: string | null;
  scheduleVersion: number;
  firedBy: string | null;
  detail: Record<string, unknown> | null;
  recordedAt: string;
  startedAt: string | null;
}

/** What happened to a schedule's fires, in order (fire.requested, fire.<status>, …). */
export interface ScheduleEvent {
  seq: number;
  type: string;
  at: string;
  data: { logicalTime?: string; runId?: string | null; [field: string]: unknown };
}

export interface FirePage {
  fires: Fire[];
  nextCursor: string | null;
}

/** One item's answer of createMany (POST /v1/runs:batch), in the order of the requests. */
export interface BatchRunResult {
  index: number;
  /** created: a new run; existing: the run created earlier under the same idempotency key; error: none. */
  status: 'created' | 'existing' | 'error';
  run?: Run;
  /** With `error`: what POST /v1/runs would have answered for this item alone. */
  error?: RunError;
}

/** A run event on the tenant's stream (GET /v1/events): the run it belongs to and its cursor. */
export interface TenantEvent extends RunEvent {
  /** The event's place in the tenant-wide order: a stream resumed after it repeats nothing. */
  cursor: string;
  runId: string;
  agent: string;
}

/** Which of the tenant's events a stream carries; every field given narrows. */
export interface TenantEventFilter {
  /** At most 100 run ids. */
  runIds?: readonly string[];
  agent?: string;
  /** Event types, e.g. `run.succeeded`. */
  types?: readonly string[];
  /** Only the children of this run. */
  parentRunId?: string;
}
