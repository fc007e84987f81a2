// The operations an application performs on runs, as one interface with two transports: HTTP to a
// Keel server (http-runs.ts) and the runtime embedded in the caller's process (keel/embedded,
// src/embedded/embedded-runs.ts). Everything transport-specific (URLs, SSE, reconnection) stays behind it; the shared
// test suite (test/support/keel-runs-suite.ts) runs against any implementation.
import type {
  Attempt,
  BatchRunResult,
  TenantEvent,
  RunTree,
  CreateRunRequest,
  ForkRequest,
  ListRunsFilter,
  ModelDelta,
  RerunRequest,
  ResetRequest,
  Resolution,
  Run,
  RunEvent,
  RunOutcome,
  RunPage,
  Step,
  ToolOutput,
} from './types.ts';

export interface CallOptions {
  signal?: AbortSignal;
}

export interface CancelOptions extends CallOptions {
  /**
   * How long (ms, 0 to 3,600,000) tool calls in flight get after the graceful signal before they
   * are aborted, instead of the agent's `cancelGraceMs` or the server's KEEL_CANCEL_GRACE_MS.
   */
  graceMs?: number;
}

export interface CreateOptions extends CallOptions {
  /**
   * For short agents: wait up to this many ms for the run to end before answering; the outcome
   * says whether it did. Without it the run is answered as soon as it is stored.
   */
  waitMs?: number;
}

export interface ResultOptions extends CallOptions {
  /** Wait up to this many ms for the run to end (bounded by the server; 0: answer at once). */
  waitMs?: number;
}

export interface WaitOptions extends CallOptions {
  /** Give up (KeelWaitTimeoutError) after this many ms; default: wait as long as the run takes. */
  timeoutMs?: number;
}

export interface EventsOptions extends CallOptions {
  /** Start after this event sequence number (0, the default: from the first event). */
  after?: number;
  /** Called with each model token delta (ephemeral; never yielded, never moves the cursor). */
  onModelDelta?: (delta: ModelDelta) => void;
  /** Called with each piece of a running tool's output (ephemeral, like model deltas). */
  onToolOutput?: (output: ToolOutput) => void;
  /** Called before each reconnection after a dropped connection. */
  onReconnect?: (info: ReconnectInfo) => void;
  /** Called each time a connection is open (the first, and each after a reconnection). */
  onConnect?: () => void;
  /** Consecutive failed connections tolerated before KeelStreamError (default 8; Infinity: never give up). */
  maxReconnects?: number;
}

export interface ReconnectInfo {
  /** 1-based count of consecutive failed connections. */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  /** The stream resumes after this event. */
  lastSeq: number;
  /** Why the previous connection ended (undefined: it ended cleanly before the run did). */
  error: unknown;
}

export interface ListEventsOptions extends CallOptions {
  after?: number;
  limit?: number;
}

/**
 * Runs: create, read, follow, answer, cancel, resolve and copy them. Every failure is a typed error
 * (KeelApiError with the API's `code`, and the other errors of ./errors.ts).
 *
 * @example
 * const run = await keel.runs.create({ agent: 'support', input, idempotencyKey: ticket.id });
 * for await (const event of keel.runs.events(run.id)) console.log(event.seq, event.type);
 * const done = await keel.runs.wait(run.id);
 */
export interface KeelRuns {
  /** Creates a run (201), or returns the run created earlier with the same idempotency key. */
  create(request: CreateRunRequest, options?: CallOptions): Promise<Run>;
  /** Creates a run and waits up to `waitMs` for it to end: `done` says whether it did. */
  createAndWait(request: CreateRunRequest, options: CreateOptions): Promise<RunOutcome>;
  get(id: string, options?: CallOptions): Promise<Run>;
  /** One page of the tenant's runs, newest first. */
  list(filter?: ListRunsFilter, options?: CallOptions): Promise<RunPage>;
  /** Every run matching the filter, page after page. */
  listAll(filter?: Omit<ListRunsFilter, 'cursor'>, options?: CallOptions): AsyncIterable<Run>;
  /** The run, waiting up to `waitMs` for it to end (one long-poll): `done` says whether it did. */
  result(id: string, options?: ResultOptions): Promise<RunOutcome>;
  /** Waits until the run ends (long-polls as often as needed) and returns it. */
  wait(id: string, options?: WaitOptions): Promise<Run>;
  /**
   * The run's events from `after` on, ending after its terminal event. A dropped connection is
   * resumed from the last event delivered: no event is lost or repeated.
   */
  events(id: string, options?: EventsOptions): AsyncIterable<RunEvent>;
  /** The events stored so far, at once (no waiting). */
  listEvents(id: string, options?: ListEventsOptions): Promise<RunEvent[]>;
  /** Answers the run's `ctx.waitForInput(key)`. */
  sendInput(id: string, key: string, value: unknown, options?: CallOptions): Promise<Run>;
  /**
   * Requests the run's cancellation: tool calls in flight get the graceful signal, then are
   * aborted after the grace (`graceMs`, else the agent's or the server's).
   */
  cancel(id: string, options?: CancelOptions): Promise<Run>;
  /** Re-admits a run quarantined as poison_run. */
  retry(id: string, options?: CallOptions): Promise<Run>;
  /** Decides a tool execution whose outcome is unknown. */
  resolve(
    id: string,
    executionId: string,
    resolution: Resolution,
    options?: CallOptions,
  ): Promise<Run>;
  rerun(id: string, request?: RerunRequest, options?: CallOptions): Promise<Run>;
  reset(id: string, request: ResetRequest, options?: CallOptions): Promise<Run>;
  fork(id: string, request: ForkRequest, options?: CallOptions): Promise<Run>;
  /** The journal as a timeline; `io: false` leaves inputs and outputs out. */
  steps(id: string, options?: CallOptions & { io?: boolean }): Promise<Step[]>;
  /** One step with its whole input and output. */
  step(id: string, seq: number, options?: CallOptions): Promise<Step>;
  attempts(id: string, options?: CallOptions): Promise<Attempt[]>;
  /** The run and its descendants, breadth first (at most `limit`, 200 by default). */
  tree(id: string, options?: CallOptions & { limit?: number }): Promise<RunTree>;
  /**
   * Creates many runs at once (POST /v1/runs:batch, at most the server's KEEL_BATCH_RUNS_MAX):
   * one result per request, in order; a bad request is its own result's error, never the others'.
   */
  createMany(
    requests: readonly CreateRunRequest[],
    options?: CallOptions,
  ): Promise<BatchRunResult[]>;
  /**
   * The events of up to 100 runs on one stream (GET /v1/events), from their first, until every one
   * has ended; resumed across dropped connections with nothing lost or repeated.
   */
  follow(runIds: readonly string[], options?: CallOptions): AsyncIterable<TenantEvent>;
  /**
   * Waits until every run has ended and returns them in the order given: the runs are followed on
   * one stream at a time (100 per stream), not one connection per run.
   */
  waitMany(runIds: readonly string[], options?: WaitOptions): Promise<Run[]>;
}
