// Runs one tool execution under its effect class. `read` and `idempotent` tools are journaled once,
// when they end, and simply run again after a crash (an idempotent one with the same executionId).
// A `side-effect` tool journals `running` before it starts; finding that state after a crash means
// the outcome is unknown: Keel asks the tool's query hook, or parks the run for an operator. It
// never re-runs a side effect blindly.
import {
  KeelError,
  isKeelError,
  deserializeError,
  serializeError,
  type SerializedError,
} from '../domain/keel-error.ts';
import type { PoolRegistry } from '../scheduling/pool-registry.ts';
import type { LiveDeltas } from '../models/live-deltas.ts';
import type { Json, ToolContext, ToolDefinition, ToolEffect, ToolNode } from '../sdk/types.ts';
import type { JournalEntry } from '../domain/records.ts';
import type { DelegationIssuer, ToolDelegation } from '../domain/delegation.ts';
import { runOrderOf } from '../domain/run-order.ts';
import type { JournalWrite } from '../store/store.ts';
import { crashPoint } from '../domain/crash-points.ts';
import { backoff, decideRetry, resolveRetryPolicy } from './retry-policy.ts';
import { poolWaitReporter } from './pool-waits.ts';
import { toJson } from './journal-cursor.ts';
import type { RunPort } from './run-port.ts';
import { gateToolCall, type GateDeps } from './tool-gate.ts';

export interface ToolRunDeps {
  /**
   * Each tool runs under a slot of its pool: its declared one (sandbox tools: `sandbox:<profile>`),
   * else `inline`.
   */
  pools: PoolRegistry;
  checkBudget(): void;
  /** Handed to every tool in its context (data directory, sandbox manager). */
  node: ToolNode;
  /** The tool policy gate (tool-gate.ts): the agent's policy, the approval notifier. */
  gate: GateDeps;
  /** Live followers of runs in this process: a tool's ctx.output reaches them as `tool.output`. */
  live?: LiveDeltas | undefined;
  /** The timeout of a tool that declares none (KEEL_TOOL_TIMEOUT_MS), in ms; absent: none. */
  defaultTimeoutMs?: number | undefined;
  /** Mints the delegated token of a tool that declares `delegate`; absent: such tools get none. */
  delegation?: DelegationIssuer | undefined;
}

/** The node of an engine embedded without a runtime: no data directory, no sandbox manager. */
export const DETACHED_TOOL_NODE: ToolNode = Object.freeze({
  dataDir: undefined,
  sandboxManager: () => undefined,
});

/** The stable id of the execution at a journal position: the same on every retry and recovery. */
export const executionIdOf = (runId: string, seq: number): string => `${runId}.${seq}`;

/**
 * The effect class of this call: the tool's `effectOf(args)` when it has one (the built-in `exec`
 * takes it from its arguments or its profile), else its declared `effect`.
 */
export function effectClassOf(tool: ToolDefinition<unknown, Json>, args: Json): ToolEffect {
  const declared = tool.effectOf?.(args);
  return declared === undefined ? tool.effect : declared;
}

export async function runTool(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  args: Json,
  seq: number,
  entry: JournalEntry | undefined,
  deps: ToolRunDeps,
): Promise<Json> {
  const executionId = executionIdOf(x.runId, seq);
  const base = {
    seq,
    kind: 'tool' as const,
    name: tool.name,
    args,
    executionId,
    effectClass: effectClassOf(tool, args),
  };
  if (entry?.status === 'unknown') return parkUnknown(x, tool, seq);
  if (entry?.status === 'running' && base.effectClass === 'side-effect') {
    const verdict = await reconcile(x, tool, executionId);
    if (verdict.kind === 'found') {
      await x.track('tool', () =>
        x.commit({
          journal: [
            {
              ...base,
              status: 'succeeded',
              result: verdict.result,
              attempts: entry.attempts,
              startedAt: entry.startedAt,
              endedAt: x.clock.now(),
            },
          ],
          run: { counters: { steps: 1 } },
          events: [
            {
              type: 'effect.reconciled',
              data: { seq, executionId, tool: tool.name, verdict: 'found' },
            },
          ],
        }),
      );
      return verdict.result;
    }
    if (verdict.kind === 'unknown') {
      await x.track('tool', () =>
        x.commit({
          journal: [
            {
              ...base,
              status: 'unknown',
              attempts: entry.attempts,
              startedAt: entry.startedAt,
              error: verdict.error,
            },
          ],
          events: [
            {
              type: 'effect.unknown',
              data: { seq, executionId, tool: tool.name, reason: verdict.error.message },
            },
          ],
        }),
      );
      return parkUnknown(x, tool, seq);
    }
    // Not found: it never happened, so it is safe to run; the verdict rides with the new intent's
    // commit.
    x.emit({
      type: 'effect.reconciled',
      data: { seq, executionId, tool: tool.name, verdict: 'not_found' },
    });
  }
  // A call not started yet (or parked before dispatch) asks the policy first; one journaled running
  // passed it already.
  if (entry === undefined || entry.status === 'waiting' || entry.status === 'pending')
    await gateToolCall(x, tool, args, base, entry, deps.gate);
  return dispatch(x, tool, args, base, (entry?.attempts ?? 0) + 1, deps);
}

type Verdict =
  | { kind: 'found'; result: Json }
  | { kind: 'not_found' }
  | { kind: 'unknown'; error: SerializedError };

async function reconcile(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  executionId: string,
): Promise<Verdict> {
  const hook = tool.query;
  if (hook === undefined) {
    return {
      kind: 'unknown',
      error: {
        code: 'unknown_side_effect',
        message: `tool ${tool.name} may have run (execution ${executionId}) and has no query hook`,
      },
    };
  }
  try {
    const answer = await x.track('tool', () => Promise.resolve(hook.call(tool, executionId)));
    return answer.found ? { kind: 'found', result: toJson(answer.result) } : { kind: 'not_found' };
  } catch (error) {
    return { kind: 'unknown', error: serializeError(error, 'unknown_side_effect') };
  }
}

function parkUnknown(x: RunPort, tool: ToolDefinition<unknown, Json>, seq: number): Promise<never> {
  return x.addWait({
    seq,
    kind: 'unknown',
    name: tool.name,
    deadlineAt: null,
    args: null,
    reason: 'unknown_side_effect',
  });
}

/**
 * How long a run whose tool call found its pool's queue full stays parked before it tries the call
 * again, in ms.
 */
export const POOL_FULL_RETRY_MS = 5_000;
const POOL_FULL = Symbol('pool queue full');
const UNKNOWN = Symbol('side effect outcome unknown');

async function dispatch(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  args: Json,
  base: Omit<JournalWrite, 'status'>,
  firstAttempt: number,
  deps: ToolRunDeps,
): Promise<Json> {
  deps.checkBudget();
  const pool = tool.pool ?? 'inline';
  x.inflightSteps++;
  const value = await x.track(
    'tool',
    async (): Promise<Json | typeof POOL_FULL | typeof UNKNOWN> => {
      const queuedAt = x.clock.now();
      let release: (() => void) | undefined;
      try {
        let left: (() => void) | undefined;
        try {
          release = await deps.pools.acquire(pool, {
            tenantId: x.run.tenantId,
            priority: x.run.priority,
            run: runOrderOf(x.run),
            signal: x.stopping.signal,
            onQueued: () => (left = poolWaitReporter(x, base.seq)(pool)),
          });
        } catch (error) {
          if (error instanceof KeelError && error.code === 'pool_queue_full') return POOL_FULL;
          throw error;
        } finally {
          left?.();
        }
        const startedAt = x.clock.now();
        const { outcome, attempts, unknown } = await attemptTool(
          x,
          tool,
          args,
          base,
          firstAttempt,
          { queuedAt, startedAt },
          deps,
        );
        if (unknown !== undefined) {
          await x.commit({
            journal: [
              { ...base, status: 'unknown', attempts, queuedAt, startedAt, error: unknown },
            ],
            events: [
              {
                type: 'effect.unknown',
                data: {
                  seq: base.seq,
                  executionId: base.executionId ?? null,
                  tool: tool.name,
                  reason: unknown.message,
                },
              },
            ],
          });
          return UNKNOWN;
        }
        crashPoint('execute.before-commit');
        await x.commit({
          journal: [
            {
              ...base,
              status: outcome.ok ? 'succeeded' : 'failed',
              attempts,
              queuedAt,
              startedAt,
              endedAt: x.clock.now(),
              ...(outcome.ok ? { result: outcome.value } : { error: outcome.error }),
            },
          ],
          run: { counters: { steps: 1 } },
          events: [
            {
              type: 'effect.completed',
              data: {
                seq: base.seq,
                kind: 'tool',
                name: tool.name,
                status: outcome.ok ? 'succeeded' : 'failed',
                executionId: base.executionId ?? null,
                attempts,
                durationMs: x.clock.now() - queuedAt,
                ...(outcome.ok ? {} : { code: outcome.error.code }),
              },
            },
          ],
        });
        if (!outcome.ok) throw deserializeError(outcome.error);
        return outcome.value;
      } finally {
        release?.();
        x.inflightSteps--;
      }
    },
  );
  if (value === UNKNOWN) return parkUnknown(x, tool, base.seq);
  return value === POOL_FULL ? parkOnFullPool(x, tool, base.seq, pool) : value;
}

/**
 * Backpressure from a full pool queue: the run parks (the call not made, nothing else of it lost)
 * and tries again after POOL_FULL_RETRY_MS, rather than the agent seeing an error a replay would
 * not see.
 */
function parkOnFullPool(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  seq: number,
  pool: string,
): Promise<never> {
  return x.addWait({
    seq,
    kind: 'tool',
    name: tool.name,
    deadlineAt: x.clock.now() + POOL_FULL_RETRY_MS,
    args: { waitingReason: 'pool_saturated', pool },
    reason: 'pool_saturated',
    detail: `the queue of pool ${pool} is full: the call of ${tool.name} is tried again in ${POOL_FULL_RETRY_MS} ms`,
  });
}

type Outcome = { ok: true; value: Json } | { ok: false; error: SerializedError };

/**
 * Attempts the tool under its retry policy. A side-effect tool journals `running` (with the attempt
 * number) before every attempt, so a crash at any point leaves a row that says "this attempt may
 * have happened".
 */
async function attemptTool(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  args: Json,
  base: Omit<JournalWrite, 'status'>,
  firstAttempt: number,
  { queuedAt, startedAt }: { queuedAt: number; startedAt: number },
  deps: ToolRunDeps,
): Promise<{ outcome: Outcome; attempts: number; unknown?: SerializedError }> {
  const sideEffect = base.effectClass === 'side-effect';
  const policy = resolveRetryPolicy(tool.retry, tool.maxAttempts);
  const lastAttempt = firstAttempt - 1 + policy.maxAttempts;
  for (let attempt = firstAttempt; ; attempt++) {
    if (sideEffect) {
      await x.commit({
        journal: [{ ...base, status: 'running', attempts: attempt, queuedAt, startedAt }],
        events: [
          {
            type: 'effect.started',
            data: {
              seq: base.seq,
              kind: 'tool',
              name: tool.name,
              executionId: base.executionId ?? null,
              attempt,
            },
          },
        ],
      });
    }
    crashPoint('dispatch.before-execute');
    try {
      return {
        outcome: {
          ok: true,
          value: toJson(await invoke(x, tool, args, base, attempt, deps)),
        },
        attempts: attempt,
      };
    } catch (error) {
      if (x.stopped !== undefined) {
        if (sideEffect) x.sideEffectInterrupted = true;
        throw error;
      }
      const decision = decideRetry(
        { ...policy, maxAttempts: lastAttempt },
        attempt,
        error,
        x.retryBudget,
      );
      // A side effect cut off mid-call — aborted by a stall, its sandbox node lost, or past its
      // timeout with another attempt to come — may have happened: reconcile as after a crash,
      // never run it again blindly.
      const cut = interruptionOf(error);
      if (
        sideEffect &&
        (cut === 'stall' || cut === 'node_lost' || (cut === 'timeout' && decision.retry))
      ) {
        const verdict = await reconcile(x, tool, base.executionId!);
        x.emit({
          type: 'effect.reconciled',
          data: {
            seq: base.seq,
            executionId: base.executionId ?? null,
            tool: tool.name,
            verdict: verdict.kind,
            cause: cut,
          },
        });
        if (verdict.kind === 'found')
          return { outcome: { ok: true, value: verdict.result }, attempts: attempt };
        if (verdict.kind === 'unknown')
          return {
            outcome: { ok: false, error: verdict.error },
            attempts: attempt,
            unknown: verdict.error,
          };
      }
      if (!decision.retry)
        return {
          outcome: { ok: false, error: serializeError(decision.error, 'tool_failed') },
          attempts: attempt,
        };
      x.emit({
        type: 'effect.retrying',
        data: {
          seq: base.seq,
          kind: 'tool',
          name: tool.name,
          executionId: base.executionId ?? null,
          attempt,
          delayMs: decision.delayMs,
          error: serializeError(error, 'tool_failed') as unknown as Json,
        },
      });
      await backoff(decision.delayMs, x.stopping.signal, x.clock);
    }
  }
}

/**
 * Whether an attempt's error cut the call off mid-way: a stall's abort, the loss of the sandbox
 * node running it (src/nodes/sandbox-placer.ts) or the tool's timeout.
 */
function interruptionOf(error: unknown): 'stall' | 'node_lost' | 'timeout' | undefined {
  if (!isKeelError(error)) return undefined;
  if (error.code === 'effect_stalled') return 'stall';
  if (error.code === 'node_lost') return 'node_lost';
  if (error.code === 'tool_timeout') return 'timeout';
  return undefined;
}

/**
 * A tool's ctx.output: each piece goes to the run's live followers in this process as an ephemeral
 * `tool.output` event (never stored); nothing is built while nobody follows the run.
 */
function liveOutput(
  runId: string,
  seq: number,
  executionId: string,
  tool: string,
  attempt: number,
  live: LiveDeltas | undefined,
): ToolContext['output'] {
  return (stream, text) => {
    if (live === undefined || !live.has(runId) || text === '') return;
    live.publish(runId, {
      type: 'tool.output',
      data: { seq, executionId, tool, attempt, stream, text },
    });
  };
}

/**
 * The tool's `ctx.delegation`, minted for this attempt (a retry gets a fresh one): only for a tool
 * that declares `delegate`, and never journaled (the context is not).
 */
function delegationFor(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  executionId: string,
  issuer: DelegationIssuer | undefined,
): { delegation?: ToolDelegation } {
  if (issuer === undefined || tool.delegate === undefined || tool.delegate.length === 0) return {};
  const scopes = [...new Set(tool.delegate)];
  return {
    delegation: issuer.issue({ tenantId: x.run.tenantId, runId: x.runId, executionId, scopes }),
  };
}

/**
 * One attempt, bounded by the tool's timeout and the run's abort signal (a tool that ignores its
 * signal is raced).
 */
async function invoke(
  x: RunPort,
  tool: ToolDefinition<unknown, Json>,
  args: Json,
  base: Omit<JournalWrite, 'status'>,
  attempt: number,
  deps: ToolRunDeps,
): Promise<unknown> {
  const executionId = base.executionId!;
  const timeoutMs = tool.timeoutMs ?? deps.defaultTimeoutMs;
  // A stalled run's `retry-effect` policy aborts this attempt through its controller (stall-watch.ts).
  const stall = new AbortController();
  const signals = [x.abort.signal, stall.signal];
  if (timeoutMs !== undefined) signals.push(AbortSignal.timeout(timeoutMs));
  const signal = AbortSignal.any(signals);
  signal.throwIfAborted();
  // A lost fan-in asks this attempt alone to wrap up (RunExecution.abandon).
  const lost = new AbortController();
  x.effects.toolAttempts.set(base.seq, {
    seq: base.seq,
    name: tool.name,
    attempt,
    abort: stall,
    stopping: lost,
  });
  // A fan-in decided before this attempt started: it starts already asked to wrap up.
  const loss = x.fanInLoss(base.seq);
  if (loss !== undefined) lost.abort(loss);
  x.moved();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      const reason: unknown = signal.reason;
      reject(
        reason instanceof DOMException && reason.name === 'TimeoutError'
          ? new KeelError('tool_timeout', `tool ${tool.name} exceeded ${timeoutMs} ms`, {
              details: { executionId },
            })
          : reason,
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      Promise.resolve().then(() =>
        tool.run(args, {
          executionId,
          runId: x.runId,
          tenantId: x.run.tenantId,
          attempt,
          signal,
          stopping: AbortSignal.any([x.stopping.signal, lost.signal, signal]),
          node: deps.node,
          priority: x.run.priority,
          output: liveOutput(x.runId, base.seq, executionId, tool.name, attempt, deps.live),
          ...delegationFor(x, tool, executionId, deps.delegation),
        }),
      ),
      aborted,
    ]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
    x.effects.toolAttempts.delete(base.seq);
    // The attempt's live output reaches followers on other processes before its result commits.
    await deps.live?.settled(x.runId);
  }
}
