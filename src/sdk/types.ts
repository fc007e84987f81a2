// Public types of the agent SDK: what agent and tool authors write against. This module is imported
// by replayed agent code, so it must never import Node server modules or engine internals.
import type { z } from 'zod';
import type { Json } from '../domain/json.ts';
import type { MessageEnvelope } from '../domain/messages.ts';
import type { StallPolicy } from '../domain/records.ts';
import type { RiskLevel, ToolPolicy } from '../domain/tool-policy.ts';
import type { DelegatedScope, ToolDelegation } from '../domain/delegation.ts';
// Type only: the SDK names the sandbox manager tools receive, and loads no sandbox code.
import type { SandboxManager } from '../sandbox/sandbox-manager.ts';
// Type only, likewise: the browser pool tools receive.
import type { BrowserPool } from '../browser/browser-pool.ts';
import type { Priority } from '../domain/records.ts';
import type { RemoteSandboxes } from '../sandbox/remote-sandboxes.ts';

/** JSON-serializable value: everything a journal entry can hold. */
export type { Json };

export type ToolEffect = 'read' | 'idempotent' | 'side-effect';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Tool calls the assistant asked for (role 'assistant'). */
  toolCalls?: ToolCall[];
  /** The call this message answers (role 'tool'). */
  toolCallId?: string;
  name?: string;
}

export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ModelUsage {
  /** Input tokens, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /**
   * Input tokens the provider served from its prompt cache (priced at `price.cachedInputPerMTok`).
   */
  cachedInputTokens?: number;
  costUsd: number;
}

export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool's arguments. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  /** A model name known to the gateway (`mock`, or one declared with `defineModel`). */
  model: string;
  messages: ChatMessage[];
  /** Tools the model may call: tool definitions or plain specs. */
  tools?: Array<ToolDefinition<any, any> | ModelToolSpec>;
  maxOutputTokens?: number;
  temperature?: number;
  /**
   * What the call is, for the models file's tiering rules: a `risky` or `complex` call is escalated
   * by a rule `{ when: { hint }, escalate: { to } }` and never downgraded for budget or backlog.
   * @example
   * await ctx.model({ model: 'small', messages, hint: 'risky' }); // may go to 'large'
   */
  hint?: 'risky' | 'complex';
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: ModelUsage;
  /** The resolved model (name and version) that answered. */
  model: string;
}

export interface ToolContext {
  /** Stable across retries and recoveries: pass it downstream as the idempotency key. */
  executionId: string;
  runId: string;
  /** The tenant the run belongs to. */
  tenantId: string;
  attempt: number;
  /**
   * Aborted when the tool must give up now: the run's cancel grace ran out, the worker lost its
   * lease, the call timed out.
   */
  signal: AbortSignal;
  /**
   * Aborted first when the run is being cancelled (and whenever `signal` is): wrap up — save what
   * is worth saving, stop children — before `signal` follows once the grace period
   * (`cancelGraceMs`) is over. The built-in `exec` sends its program SIGTERM here. A result
   * returned after it is still recorded. Absent where nothing can cancel (a context built by hand).
   */
  stopping?: AbortSignal;
  /** What the Keel node running the tool lends it: its data directory and its sandbox manager. */
  node: ToolNode;
  /**
   * Hands a piece of the tool's output to whoever follows the run live: an ephemeral `tool.output`
   * event on the run's event stream (SSE), never stored or replayed — the tool's result is what
   * the journal keeps. The built-in `exec` streams its program's stdout and stderr through it.
   * Absent where nothing can follow (a context built by hand).
   */
  output?: (stream: 'stdout' | 'stderr', text: string) => void;
  /**
   * A short-lived token to call Keel back on this run's behalf (start a child run, read the run and
   * its shared space), for a tool that declares `delegate`: never a tenant key. It stops working at
   * `expiresAt` or as soon as the run ends. Absent when the tool declares no `delegate` or the
   * runtime has no delegation (an engine embedded without one).
   * @example
   * await fetch(`${ctx.delegation.apiUrl}/v1/runs`, { method: 'POST',
   *   headers: { authorization: `Bearer ${ctx.delegation.token}`, 'content-type': 'application/json' },
   *   body: JSON.stringify({ agent: 'summarize', input }) });
   */
  delegation?: ToolDelegation;
  /**
   * The run's priority class, for a tool that queues in a pool of its own making (the built-in
   * browser tools queue for a session slot with it). Absent in a context built by hand.
   */
  priority?: Priority;
}

/**
 * The node a tool runs on, as the runtime attached it at start. Tools reach node-wide services only
 * through here, never through a process global, so an agents module loaded twice (or by another
 * copy of the package) still finds the node's own.
 */
export interface ToolNode {
  /**
   * The node's data directory (`--data`, KEEL_DATA_DIR), absolute; undefined for an engine embedded
   * without one.
   */
  readonly dataDir: string | undefined;
  /** The node's sandbox manager (opened on first use); undefined when the runtime attached none. */
  sandboxManager(): SandboxManager | undefined;
  /**
   * The node's browser pool (headless Chromium sessions, src/browser); absent or undefined when the
   * runtime attached none.
   */
  browserPool?(): BrowserPool | undefined;
  /**
   * The cluster's sandbox nodes, when this process places sandboxed calls on them
   * (KEEL_SANDBOX_PLACEMENT=nodes); undefined: calls run in this process's sandboxes.
   */
  sandboxNodes?(): RemoteSandboxes | undefined;
}

/** A tool of any input and output type, where a list of tools is taken (a parameter type is contravariant). */
export type AnyToolDefinition = ToolDefinition<any, any>;

export interface ToolDefinition<I = unknown, O extends Json | void = Json> {
  readonly kind: 'keel.tool';
  name: string;
  description: string;
  input: z.ZodType<I>;
  effect: ToolEffect;
  /**
   * The effect class of one call, from its (validated) arguments, when it differs from `effect`:
   * the built-in `exec` lets the caller declare a command `read` or `idempotent`. It governs crash
   * recovery of that call only, and must be a pure function of the arguments (they are journaled,
   * so a recovery decides the same way).
   */
  effectOf?(args: I): ToolEffect;
  /**
   * Largest size of one call's arguments, in bytes of their JSON: a larger call is refused with
   * `tool_arguments_too_large` before anything is journaled. Default: the engine's
   * TOOL_ARGUMENTS_MAX_BYTES_DEFAULT (8 MiB).
   */
  maxArgumentBytes?: number;
  run(args: I, ctx: ToolContext): Promise<O> | O;
  /**
   * Asks the downstream system whether an execution whose outcome is unknown happened.
   * Return `{ found: true, result }` if it did, `{ found: false }` if it did not (safe to retry).
   */
  query?(executionId: string): Promise<{ found: true; result: NoInfer<O> } | { found: false }>;
  /**
   * Undoes a completed execution when the run later fails or is cancelled (a saga step). Called at
   * least once per completed execution, in reverse order of completion, with the execution's id and
   * result: it must be idempotent (use the execution id as the downstream idempotency key).
   */
  compensate?(
    executionId: string,
    result: NoInfer<O>,
    ctx: { runId: string; signal: AbortSignal },
  ): Promise<void> | void;
  /** Retries of failures thrown by `run` (not crashes). Default: one attempt. */
  retry?: RetryPolicy;
  /** Attempts for failures thrown by `run`; shorthand for `retry: { maxAttempts }`. */
  maxAttempts?: number;
  /** Per-attempt time limit in milliseconds. */
  timeoutMs?: number;
  /**
   * The scopes of the delegated token this tool's calls receive in `ctx.delegation`
   * (`runs:read-self`, `runs:child`, `artifacts`); absent or empty: no token (least privilege).
   */
  delegate?: readonly DelegatedScope[];
  /**
   * The pool whose slots this tool's executions take (e.g. `browser`): its own limit, queue and
   * per-tenant caps (pools file), so a busy pool never holds up another's work. Default: `inline`.
   * The built-in sandbox tools use `sandbox:<profile>`.
   */
  pool?: string;
  /**
   * How dangerous a call of this tool is, for the tool policy (`maxRisk`, `approval.risk`). Default
   * `low`.
   */
  risk?: RiskLevel;
  /**
   * What one call costs in US dollars, for the tool policy (`maxCost`, `approval.costAbove`): a
   * number, or a pure function of the (validated) arguments. Default 0.
   */
  cost?: number | ((args: I) => number);
}

/**
 * How a failed attempt is retried: exponential backoff with full jitter (a random delay in [0,
 * min(maxDelayMs, initialDelayMs × multiplier^(attempt−1))]). Every retry also spends one unit of
 * the run's retry budget (`budget.maxRetries`), so retries cannot multiply load without bound.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included; default 1 (no retry). */
  maxAttempts?: number;
  /** Default 100 ms. */
  initialDelayMs?: number;
  /** Default 10 s. */
  maxDelayMs?: number;
  /** Default 2. */
  multiplier?: number;
  /** Error codes (KeelError `code`) or error names (`TypeError`) that are never retried. */
  nonRetryable?: string[];
}

export interface WaitForInputOptions {
  /** Give up after this long; the wait then throws a `KeelError` with code `input_timeout`. */
  timeoutMs?: number;
}

export interface SendOptions {
  /**
   * The message id (the receiver's dedupe key); default `<runId>.<position>`, the same on every
   * replay, so a replayed send delivers nothing twice.
   */
  id?: string;
  correlationId?: string;
  /** The message expires if no receive has taken it within this many ms. */
  ttlMs?: number;
}

export interface SendResult {
  id: string;
  /** Its place on the receiver's channel. */
  index: number;
  /** The id had been delivered before: nothing was delivered this time. */
  duplicate: boolean;
}

export interface ReceiveOptions {
  /**
   * Give up after this long (counted from each wait: an expired message skipped starts a new
   * one); the receive then throws a `KeelError` with code `message_timeout`.
   */
  timeoutMs?: number;
}

/** A message as ctx.receive returns it: its envelope and payload. */
export type ReceivedMessage<T extends Json = Json> = MessageEnvelope<T>;

export interface StepOptions {
  /**
   * Attempts when `fn` throws; default 1 (a thrown error is journaled and rethrown). Shorthand for
   * `retry.maxAttempts`.
   */
  maxAttempts?: number;
  /** Backoff and non-retryable errors for those attempts. */
  retry?: RetryPolicy;
}

/**
 * What agent code may touch. Every method is an effect with a position in the run's journal:
 * on replay, completed effects return their journaled result without running again.
 */
/** What happens to a child run still running when its parent ends. */
export type ParentEndPolicy = 'cancel' | 'detach' | 'wait';

export interface ChildOptions {
  /**
   * `cancel` (the default): the child is cancelled, with the parent's end, in the same commit (no
   * orphan survives a crash); `detach`: it runs on by itself; `wait`: the parent's end waits (it
   * parks, `waitingReason: 'children'`) until the child has ended, then it ends with its own result.
   */
  onParentEnd?: ParentEndPolicy;
}

/**
 * A branch of a fan-in: the promise a ctx call returned (`ctx.child(...)`, `ctx.step(...)`,
 * `ctx.sleep(...)`, ...). Such a branch can be cancelled when it loses; any other promise may be
 * a branch too, but a losing one is only ignored.
 */
export type FanInBranch<T> = Promise<T>;

export interface AnyOptions<T> {
  /**
   * Checks a branch's value: the first branch to succeed *and* pass decides the fan-in; a value it
   * refuses (false, or a throw) counts as that branch's failure. Called with JSON values, and again
   * on replay until the decision is journaled: it must be a synchronous, pure function of the value
   * (no ctx calls; verify with an effect inside the branch instead).
   */
  verify?: (value: T) => boolean;
}

export interface AgentContext {
  readonly runId: string;
  readonly tenantId: string;
  /** Journaled arbitrary code: `fn` runs until its result is committed, then never again. */
  step<T extends Json | void>(
    name: string,
    fn: () => Promise<T> | T,
    options?: StepOptions,
  ): Promise<T>;
  model(request: ModelRequest): Promise<ModelResponse>;
  tool<I, O extends Json | void>(tool: ToolDefinition<I, O>, args: I): Promise<O>;
  waitForInput<T extends Json = Json>(key: string, options?: WaitForInputOptions): Promise<T>;
  /** Durable timer: the run releases its worker and resumes after `ms`. */
  sleep(ms: number): Promise<void>;
  /**
   * Starts a child run and waits for its result. A child the run did not wait for is cancelled
   * when the run ends, however it ends, unless it was started with `onParentEnd: 'detach'` (it runs
   * on) or `'wait'` (the run's end waits for it).
   */
  child<T extends Json = Json>(
    agent: string | AgentDefinition<any, any>,
    input: Json,
    options?: ChildOptions,
  ): Promise<T>;
  /**
   * Every branch's value, in order. It fails with the first branch failure the run sees, and then
   * cancels the branches still running (see `any`). Journaled like a decision when it fails.
   */
  all<const B extends ReadonlyArray<FanInBranch<unknown>>>(
    branches: B,
  ): Promise<{ -readonly [K in keyof B]: Awaited<B[K]> }>;
  /**
   * The value of the first branch to succeed and pass `options.verify`; settles once: the decision
   * (which branch, its value) is journaled in one commit with the cancellation of the losing
   * children, and a replay returns it without waiting for anything. Losing waits (children, sleeps,
   * inputs) are abandoned; losing steps, model and tool calls already in flight run to their end
   * (their results are journaled and ignored). Fails with `fan_in_exhausted` when every branch
   * failed or was refused.
   */
  any<const B extends ReadonlyArray<FanInBranch<unknown>>>(
    branches: B,
    options?: AnyOptions<Awaited<B[number]>>,
  ): Promise<Awaited<B[number]>>;
  /** Settles like the first branch to settle (value or error), journaled and cancelling as `any`. */
  race<const B extends ReadonlyArray<FanInBranch<unknown>>>(
    branches: B,
  ): Promise<Awaited<B[number]>>;
  /**
   * Sends a message to another run of the tenant (its `ctx.receive(channel)`): journaled, and
   * deduplicated by id at the receiver, so it is delivered once however often the run replays.
   * Fails with `run_not_found`, or `run_terminal` once the receiver has ended.
   */
  send(runId: string, channel: string, payload: Json, options?: SendOptions): Promise<SendResult>;
  /**
   * The next message on `channel`, in delivery order, as a durable wait: the run releases its worker
   * until one arrives (like ctx.waitForInput). Expired messages are skipped.
   */
  receive<T extends Json = Json>(
    channel: string,
    options?: ReceiveOptions,
  ): Promise<ReceivedMessage<T>>;
  /** Deterministic time (milliseconds since epoch), journaled on first use. */
  now(): number;
  /** Deterministic random number in [0, 1). */
  random(): number;
  /** Deterministic UUID (v4 format). */
  uuid(): string;
  /**
   * The run tree's shared space: versioned text files shared by the root run and all its
   * descendants. Every call is journaled (a replay answers from the journal, a write is applied once).
   */
  readonly shared: SharedSpace;
  /**
   * Reports where the run is (any JSON, at most 16 KiB): durable and cheap (a small commit of its
   * own, the latest state winning; not a journal position, so a replay repeats nothing). Shown as
   * `progress` in the run's view, `keel runs get` and the dashboard; it also counts as the run
   * moving for the agent's `stallAfterMs`.
   */
  progress(state: Json): void;
  /**
   * Bounds the run's replay (continue-as-new, without a new run): journals a snapshot of `state`
   * at the next position. When the run resumes later (after a crash, a park, on another worker),
   * its `run(ctx, input)` is entered again with `ctx.resumedFrom` = `{ position, state }` of the
   * latest checkpoint, and only the journal after it is loaded and replayed: the positions before
   * it never run or replay again. So the code after a checkpoint must go on from `state` alone.
   * Call it when nothing else is pending (every earlier ctx call awaited), else it fails with
   * `checkpoint_unsettled`; on replay, a checkpoint taken where the journal holds another effect
   * fails the run with `non_determinism`. ctx.random, ctx.uuid and receives continue where they
   * were. `state` is JSON (at most 4 MiB); it is loaded on every resume.
   * @example
   * let state = (ctx.resumedFrom?.state as { done: number } | undefined) ?? { done: 0 };
   * while (state.done < 10_000) {
   *   await ctx.step(`item-${state.done}`, () => work(state.done));
   *   state = { done: state.done + 1 };
   *   if (state.done % 100 === 0) await ctx.checkpoint(state);
   * }
   */
  checkpoint(state: Json, options?: CheckpointOptions): Promise<void>;
  /**
   * The checkpoint this execution re-entered the agent from (its position and the state given to
   * ctx.checkpoint), or undefined when the run replays from its start.
   */
  readonly resumedFrom: ResumedFrom | undefined;
}

export interface CheckpointOptions {
  /**
   * On replay, skip this checkpoint (taking no position) when the journal holds another effect
   * where it would go: for checkpoints added to code whose runs are already in flight, which
   * would otherwise fail them with `non_determinism`. A live checkpoint is taken as usual.
   */
  optional?: boolean;
}

/** Where a run re-entered its agent: its latest checkpoint (ctx.checkpoint). */
export type ResumedFrom = { position: number; state: Json };

/** The shared space of a run tree (docs/guides/multi-agent.md, "Shared space"). */
export interface SharedSpace {
  /** The file's latest version, or null when there is none. */
  read(path: string): Promise<SharedFileRead | null>;
  /**
   * Writes the file's next version if its latest is `expectedVersion` (null or 0: it must not
   * exist); otherwise fails `conflict` with `details.currentVersion` (read again, then retry).
   */
  write(path: string, content: string, options: SharedWriteOptions): Promise<SharedWriteResult>;
  /** Each file's latest version (without content) whose path starts with `prefix`, by path. */
  list(prefix?: string): Promise<SharedFileEntry[]>;
}

export interface SharedWriteOptions {
  expectedVersion: number | null;
}

export interface SharedWriteResult {
  version: number;
}

export interface SharedFileRead {
  content: string;
  version: number;
  writtenByRun: string;
  writtenAt: number;
}

export interface SharedFileEntry {
  path: string;
  version: number;
  size: number;
  writtenByRun: string;
  writtenAt: number;
}

export interface AgentDefinition<I = any, O extends Json | void = any> {
  readonly kind: 'keel.agent';
  name: string;
  version: string;
  run(ctx: AgentContext, input: I): Promise<O>;
  /**
   * The input's contract: a run whose input does not parse is refused when it is submitted (400
   * `agent_input_invalid`, from the API, a schedule's fire or `ctx.child`), and `run` receives the
   * parsed value.
   */
  readonly input?: z.ZodType<I>;
  /**
   * The result's contract: a run whose result does not parse fails with `agent_output_invalid`.
   */
  readonly output?: z.ZodType<O>;
  /**
   * How long one turn of this agent's code (from being resumed to its next await of ctx) may hold
   * its isolate's thread before the watchdog aborts the run with `agent_blocked`; default
   * KEEL_AGENT_BLOCKED_MS (2 s).
   */
  readonly blockedAfterMs?: number;
  /**
   * A running run that has not moved for this long (no ctx.progress, no effect started or ended)
   * is marked stalled (`run.stalled`, the run's `stalled` field) and `onStall` applies; default:
   * never watched.
   */
  readonly stallAfterMs?: number;
  /**
   * On a cancel, how long tool calls in flight have after the graceful signal (`stopping`; SIGTERM
   * to a sandboxed program) before they are aborted and their sandboxes killed; 0: at once.
   * Default: KEEL_CANCEL_GRACE_MS (5 s).
   */
  readonly cancelGraceMs?: number;
  /**
   * What a stall does: `alert` (default) only marks it; `retry-effect` also aborts the tool call in
   * flight (its signal) and retries it under the tool's retry rules (a side effect is reconciled,
   * never run twice blindly); `fail` fails the run with `run_stalled`.
   */
  readonly onStall?: StallPolicy;
  /**
   * Tools the agent calls, for the effect plane to find them by name (a loop agent lists its own).
   */
  readonly tools?: ReadonlyArray<ToolDefinition<any, any>>;
  /**
   * The agent's tool policy: checked with the tenant's before every tool call, the stricter
   * applying (src/domain/tool-policy.ts).
   */
  readonly policy?: ToolPolicy;
  /**
   * MCP servers this agent calls (`ctx.tool(mcpTool(server, tool), args)`); a name here takes
   * precedence over a tenant's server of the same name. See docs/guides/mcp.md.
   */
  readonly mcpServers?: ReadonlyArray<McpServerSpec>;
  /**
   * What one run is expected to spend on models, checked when a run is submitted against what its
   * tenant has left of its daily budgets (docs/guides/models.md, "Tiering and cost caps").
   */
  readonly estimate?: RunSpendEstimate;
  /**
   * A submitted run whose estimate (declared, or without one the average spend of the agent's
   * latest successful runs — setting this alone turns that on) exceeds what its tenant has left
   * today: `park` (default) creates
   * it waiting (`tenant_budget_exhausted`) until the budget renews or is raised; `refuse` answers
   * 429 `budget_insufficient` and creates nothing.
   */
  readonly whenOverBudget?: 'park' | 'refuse';
}

/**
 * An agent's expected model spend per run, priced with the model's `price`.
 * @example
 * defineAgent({ …, estimate: { model: 'large', modelCalls: 4, inputTokensPerCall: 2_000, outputTokensPerCall: 500 } });
 */
export interface RunSpendEstimate {
  model: string;
  modelCalls: number;
  inputTokensPerCall: number;
  outputTokensPerCall: number;
}

/**
 * An MCP server: a stdio program Keel starts in a namespace sandbox, or a streamable-HTTP URL.
 * Validated by defineAgent (and the admin API) against one schema; see docs/guides/mcp.md.
 */
export interface McpServerSpec {
  name: string;
  transport:
    | {
        type: 'stdio';
        /** Absolute path of the program. */
        command: string;
        args?: string[];
        env?: Record<string, string>;
        /** Host paths bound read-only inside the sandbox (the server's package files). */
        readOnlyPaths?: string[];
        /** Host directory bound writable at /workspace; default a private temporary one. */
        workspace?: string;
      }
    | {
        type: 'http';
        url: string;
        /** Header name → name of the environment variable holding its value. */
        headersFromEnv?: Record<string, string>;
      };
  /** Effect class per tool name, overriding the tool's annotations. */
  effects?: Record<string, ToolEffect>;
  /** Per-call time limit in ms; default 60 000. */
  callTimeoutMs?: number;
}

export interface ModelPrice {
  /** US dollars per million input tokens. */
  inputPerMTok: number;
  /** US dollars per million output tokens. */
  outputPerMTok: number;
  /**
   * US dollars per million input tokens served from the provider's prompt cache; default
   * `inputPerMTok`.
   */
  cachedInputPerMTok?: number;
}

export interface MockModelOptions {
  /** Simulated latency per call in milliseconds. */
  latencyMs?: number;
  /** Probability in [0, 1] that an attempt fails with a retryable provider error. */
  failureRate?: number;
  /**
   * Simulation: latency drawn per attempt from a distribution (instead of `latencyMs`), seeded by
   * `seed` so a given seed repeats the same draws in the same order.
   */
  latency?:
    | { kind: 'fixed'; ms: number }
    | { kind: 'uniform'; minMs: number; maxMs: number }
    | { kind: 'lognormal'; p50Ms: number; p99Ms: number };
  /** Seed of the latency and failure draws (default: unseeded, `Math.random`). */
  seed?: number;
  /** Simulation: the instant (epoch ms) fault windows and the latency ramp count from; default the provider's start. */
  startAtMs?: number;
  /** Simulation: latency scaled linearly between two instants (e.g. 9 s → 12 s is toScale 4/3). */
  latencyRamp?: { fromSeconds: number; toSeconds: number; fromScale?: number; toScale: number };
  /**
   * Simulation: windows of rate limiting (429 with retry-after) and outages, in seconds after
   * `startAtMs`; `share` of the window's attempts fail (default all).
   */
  faults?: Array<
    | {
        kind: 'rate-limit';
        fromSeconds: number;
        toSeconds: number;
        retryAfterMs?: number;
        share?: number;
      }
    | { kind: 'outage'; fromSeconds: number; toSeconds: number; share?: number }
  >;
  /**
   * Scripted replies, indexed by the number of assistant messages already in the conversation.
   * Past the end of the script, the mock echoes the last user message.
   */
  script?: Array<{
    text?: string;
    toolCalls?: Array<{ name: string; args: Record<string, unknown> }>;
  }>;
}

/** Requests, tokens and concurrent calls allowed per minute; every field optional (unlimited). */
export interface ModelRateLimits {
  rpm?: number;
  tpm?: number;
  maxConcurrency?: number;
}

/** One endpoint serving a model (a replica); routing picks among them. */
export interface ModelReplica {
  name: string;
  baseUrl: string;
  /**
   * Name of the environment variable holding this replica's API key; default the model's
   * `apiKeyEnv`.
   */
  apiKeyEnv?: string;
  /** Concurrent calls this process sends to the replica; default the model's `maxConcurrency`. */
  maxConcurrency?: number;
  /** Starting estimates, replaced by measurements as calls complete. */
  estimates?: { networkMs?: number; prefillMsPerKTok?: number; cachedPrefillMsPerKTok?: number };
}

export interface ModelDefinition {
  readonly kind: 'keel.model';
  name: string;
  /**
   * `mock` (deterministic, no network), `openai` (any OpenAI-compatible Chat Completions endpoint)
   * or `anthropic`.
   */
  provider: 'mock' | 'openai' | 'anthropic';
  /** The model id sent to the provider (e.g. `gpt-4o-mini`); default `name`. */
  providerModel?: string;
  /** Pinned on runs that use the model; default `'1'`. */
  version?: string;
  /** Endpoint of a single-replica model (use `replicas` for several). */
  baseUrl?: string;
  /** Name of the environment variable that holds the API key. Keys are never stored or logged. */
  apiKeyEnv?: string;
  replicas?: ModelReplica[];
  /**
   * Models tried in order when this one's endpoints are all unavailable (breakers open or attempts
   * exhausted).
   */
  fallbacks?: string[];
  options?: MockModelOptions;
  price?: ModelPrice;
  /** Concurrent calls this model accepts from this process (per replica). */
  maxConcurrency?: number;
  /** Attempts per call for retryable provider errors. */
  maxAttempts?: number;
  /** Limits of this model (all replicas together). */
  limits?: ModelRateLimits;
  /**
   * The provider account (API key / organisation) this model bills to: models naming the same
   * account share that account's limits (gateway option / models file `accounts`) and one retry
   * budget.
   */
  account?: string;
  timeouts?: { attemptMs?: number; callMs?: number };
  /** Output tokens reserved when a request does not say `maxOutputTokens`. */
  maxOutputTokens?: number;
  /** Stream tokens (as `model.delta` run events); default true for real providers. */
  stream?: boolean;
}
