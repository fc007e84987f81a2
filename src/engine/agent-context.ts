// The engine's implementation of ctx: each method takes the next journal position, returns the
// journaled result on replay, and otherwise dispatches the effect and commits its result. Budgets
// are checked before each dispatch. Agent code reaches the engine only through this object — or,
// when agent code runs in an isolate (a worker thread), through the isolate's ctx, whose calls
// arrive here with their position already taken: the `effects` below are the part both share
// (everything after the position).
import {
  KeelError,
  deserializeError,
  serializeError,
  type SerializedError,
} from '../domain/keel-error.ts';
import type { ModelGateway } from '../models/gateway.ts';
import type { PoolRegistry } from '../scheduling/pool-registry.ts';
import type { BudgetVerdict } from '../models/tenant-policy.ts';
import type { TieringDecision } from '../models/tiering.ts';
import type {
  AgentContext,
  AgentDefinition,
  Json,
  ModelRequest,
  ParentEndPolicy,
  ModelResponse,
  SendOptions,
  ToolDefinition,
  ToolNode,
} from '../sdk/types.ts';
import type { EffectKind, JournalEntry } from '../domain/records.ts';
import { runOrderOf } from '../domain/run-order.ts';
import type { AgentRegistry } from './registry.ts';
import { isTerminal } from '../domain/run-status.ts';
import { checkSpendBudget, checkStepBudget, remainingSpend } from './budget-checks.ts';
import { toJson } from './journal-cursor.ts';
import type { Position, RunPort } from './run-port.ts';
import { crashPoint } from '../domain/crash-points.ts';
import {
  backoff,
  decideRetry,
  resolveRetryPolicy,
  type ResolvedRetryPolicy,
} from './retry-policy.ts';
import { runTool } from './tool-runner.ts';
import type { McpToolResolver } from './mcp-port.ts';
import { parseMcpToolName } from '../sdk/mcp-tool.ts';
import { journaledRequest } from './model-journal.ts';
import { rememberPrompt } from '../telemetry/model-prompts.ts';
import { telemetry } from '../telemetry/telemetry.ts';
import {
  checkSleep,
  checkWaitForInput,
  parentEndPolicy,
  parseToolArgs,
  resolveChild,
} from './ctx-checks.ts';
import { poolWaitReporter } from './pool-waits.ts';
import { parseAgentInput } from './agent-contract.ts';
import { internalError, internalErrorCause } from '../domain/internal-error.ts';
import { resumedEvent, waitingEvent } from '../domain/waiting-reasons.ts';
import {
  BranchPositions,
  checkFanIn,
  settleFanIn,
  tagEffects,
  type Decision,
  type FanInMode,
} from './fan-in.ts';
import { commitDecision } from './decision-commit.ts';
import { sendMessage } from './message-send.ts';
import {
  ChannelCursors,
  checkChannel,
  checkReceiveTimeout,
  checkSend,
  receiveNext,
} from './messaging.ts';
import { isMessageKey } from '../domain/messages.ts';
import { sharedEffect } from './shared-space.ts';
import { sharedCallName, sharedSpace } from './shared-space-ctx.ts';
import { checkProgress } from './stall-watch.ts';
import type { DelegationIssuer } from '../domain/delegation.ts';
import { CHECKPOINT_NAME } from '../domain/run-snapshot.ts';
import { checkCheckpointState, checkpoint } from './checkpoint.ts';

export interface ContextDeps {
  gateway: ModelGateway;
  registry: AgentRegistry;
  /** Slots of the inline tool pool. */
  pools: PoolRegistry;
  newRunId(): string;
  /** What tools receive from the node (data directory, sandbox manager). */
  toolNode: ToolNode;
  /** Resolves `mcp.<server>.<tool>` calls; absent: such calls fail with mcp_server_not_found. */
  mcp?: McpToolResolver | undefined;
  /** The timeout of a tool call whose tool declares none, in ms (KEEL_TOOL_TIMEOUT_MS). */
  toolTimeoutMs?: number | undefined;
  /** Mints tools' delegated tokens (ctx.delegation); absent: tools get none. */
  delegation?: DelegationIssuer | undefined;
}

export function createAgentContext(x: RunPort, deps: ContextDeps): AgentContext {
  // Which position each ctx call's promise stands for: a fan-in cancels its losing branches by it.
  const branches = new BranchPositions();
  /** The receives taken on each channel (the n-th takes the channel's n-th message). */
  const channels = new ChannelCursors();
  const take = (kind: EffectKind, name: string): Position => {
    const at = x.position(kind, name);
    branches.taken(at.seq);
    return at;
  };
  const fanIn = (
    mode: FanInMode,
    list: ReadonlyArray<Promise<unknown>>,
    verify?: (value: never) => boolean,
  ): Promise<Json> => {
    try {
      checkFanIn(mode, list, verify);
    } catch (error) {
      return Promise.reject(error);
    }
    const at = x.position('decision', mode);
    return settleFanIn(mode, list, verify, {
      journaled: at.entry,
      positionOf: (branch) => branches.positionOf(branch),
      commit: (decision) => commitDecision(x, at, decision),
    });
  };
  const ctx: AgentContext = {
    runId: x.runId,
    tenantId: x.run.tenantId,
    // Each method is async, so a check that fails rejects its promise (as an effect's failure
    // does), never throws.
    step: async (name, fn, options) =>
      step(
        x,
        take('step', name),
        name,
        fn,
        resolveRetryPolicy(options?.retry, options?.maxAttempts),
      ) as never,
    model: async (request) => {
      deps.gateway.resolve(request.model); // unknown models fail before taking a position, the same way on every replay
      return model(x, deps, take('model', request.model), request);
    },
    tool: async (tool, args) => {
      const parsed = parseToolArgs(tool as ToolDefinition<unknown, Json>, args);
      deps.registry.registerTool(tool as ToolDefinition<unknown, Json>);
      return callTool(
        x,
        deps,
        take('tool', tool.name),
        tool as ToolDefinition<unknown, Json>,
        parsed,
      ) as never;
    },
    waitForInput: async (key, options) => {
      checkWaitForInput(key, options?.timeoutMs);
      return waitForInput(x, take('input', key), key, options?.timeoutMs) as never;
    },
    sleep: async (ms) => {
      checkSleep(ms);
      return sleep(x, take('sleep', 'sleep'), ms);
    },
    child: async (ref, input, options) => {
      const agent = resolveChild(deps.registry, ref);
      parseAgentInput(agent, input); // agent_input_invalid before a position is taken
      const onParentEnd = parentEndPolicy(options);
      return child(x, deps, take('child', agent.name), agent, input, onParentEnd) as never;
    },
    now: () => now(x, x.position('now', 'now'), x.clock.now()),
    random: () => {
      x.assertLive();
      return x.random.next();
    },
    uuid: () => {
      x.assertLive();
      return x.random.uuid();
    },
    progress: (state) => {
      x.assertLive();
      const checked = checkProgress(state);
      if (!x.replaying) x.progress(checked); // a replayed report was written when it was made
    },
    send: async (runId, channel, payload, options) => {
      checkSend(runId, channel, options);
      return sendMessage(
        x,
        x.position('message', channel),
        runId,
        channel,
        toJson(payload),
        options,
      ) as never;
    },
    receive: async (channel, options) => {
      checkChannel('receive', channel);
      checkReceiveTimeout(options?.timeoutMs);
      return receiveNext(
        channel,
        options?.timeoutMs,
        channels,
        (key, timeoutMs) => waitForInput(x, x.position('input', key), key, timeoutMs),
        () => ctx.now(),
      ) as never;
    },
    all: (list) => fanIn('all', list) as never,
    any: (list, options) => fanIn('any', list, options?.verify as never) as never,
    race: (list) => fanIn('race', list) as never,
    shared: sharedSpace((call) => sharedEffect(x, take('shared', sharedCallName(call)), call)),
    checkpoint: async (state, options) => {
      const checked = checkCheckpointState(state);
      const held = x.nextJournaledKind();
      if (options?.optional === true && held !== undefined && held !== 'checkpoint') return; // added to code in flight
      return checkpoint(x, x.position('checkpoint', CHECKPOINT_NAME), checked, {
        random: x.random.state(),
        channels: channels.counts(),
      });
    },
    resumedFrom:
      x.resumedFrom === undefined
        ? undefined
        : { position: x.resumedFrom.seq, state: structuredClone(x.resumedFrom.state) }, // the agent may mutate it
  };
  if (x.resumedFrom !== undefined) channels.restore(x.resumedFrom.replay.channels);
  return tagEffects(ctx, branches);
}

/**
 * What runs after a position is taken, for the in-thread ctx above and for calls arriving from an
 * isolate.
 */
export const effects = {
  step: (x: RunPort, at: Position, name: string, fn: () => unknown, policy: ResolvedRetryPolicy) =>
    step(x, at, name, fn, policy),
  model: (x: RunPort, deps: ContextDeps, at: Position, request: ModelRequest) =>
    model(x, deps, at, request),
  tool: (
    x: RunPort,
    deps: ContextDeps,
    at: Position,
    tool: ToolDefinition<unknown, Json>,
    args: Json,
  ) => callTool(x, deps, at, tool, args),
  waitForInput: (x: RunPort, at: Position, key: string, timeoutMs: number | undefined) =>
    waitForInput(x, at, key, timeoutMs),
  sleep: (x: RunPort, at: Position, ms: number) => sleep(x, at, ms),
  child: (
    x: RunPort,
    deps: ContextDeps,
    at: Position,
    agent: AgentDefinition,
    input: Json,
    onParentEnd: ParentEndPolicy,
  ) => child(x, deps, at, agent, input, onParentEnd),
  now: (x: RunPort, at: Position, value: number) => now(x, at, value),
  decision: (x: RunPort, at: Position, decision: Decision) => commitDecision(x, at, decision),
  send: (
    x: RunPort,
    at: Position,
    to: string,
    channel: string,
    payload: Json,
    options: SendOptions | undefined,
  ) => sendMessage(x, at, to, channel, payload, options),
  shared: sharedEffect,
  checkpoint,
};

/** The journaled outcome of a settled entry: its result, or its error thrown again. */
function settled(entry: JournalEntry): Json {
  if (entry.status === 'failed')
    throw deserializeError(
      entry.error ?? { code: 'internal', message: 'failed effect without error' },
    );
  return entry.result;
}

function completedEvent(
  x: RunPort,
  seq: number,
  kind: string,
  name: string,
  status: string,
  startedAt: number,
  extra: Record<string, Json> = {},
) {
  return {
    type: 'effect.completed',
    data: { seq, kind, name, status, durationMs: x.clock.now() - startedAt, ...extra },
  };
}

async function step(
  x: RunPort,
  { seq, entry }: Position,
  name: string,
  fn: () => unknown,
  policy: ResolvedRetryPolicy,
): Promise<Json> {
  if (entry !== undefined && (entry.status === 'succeeded' || entry.status === 'failed'))
    return settled(entry);
  checkStepBudget(x);
  x.inflightSteps++;
  return x.track('step', async () => {
    const startedAt = x.clock.now();
    let attempts = 0;
    let outcome: { ok: true; value: Json } | { ok: false; error: SerializedError };
    crashPoint('dispatch.before-execute');
    for (;;) {
      attempts++;
      try {
        outcome = { ok: true, value: toJson(await fn()) };
        break;
      } catch (error) {
        if (x.stopped !== undefined) throw error;
        const decision = decideRetry(policy, attempts, error, x.retryBudget);
        if (!decision.retry) {
          outcome = { ok: false, error: serializeError(decision.error, 'step_failed') };
          break;
        }
        x.emit({
          type: 'effect.retrying',
          data: {
            seq,
            kind: 'step',
            name,
            attempt: attempts,
            delayMs: decision.delayMs,
            error: serializeError(error, 'step_failed') as unknown as Json,
          },
        });
        await backoff(decision.delayMs, x.stopping.signal, x.clock);
      }
    }
    crashPoint('execute.before-commit');
    try {
      await x.commit({
        journal: [
          {
            seq,
            kind: 'step',
            name,
            status: outcome.ok ? 'succeeded' : 'failed',
            attempts,
            queuedAt: startedAt,
            startedAt,
            endedAt: x.clock.now(),
            ...(outcome.ok ? { result: outcome.value } : { error: outcome.error }),
          },
        ],
        run: { counters: { steps: 1 } },
        events: [
          completedEvent(x, seq, 'step', name, outcome.ok ? 'succeeded' : 'failed', startedAt),
        ],
      });
    } finally {
      x.inflightSteps--;
    }
    if (!outcome.ok) throw deserializeError(outcome.error);
    return outcome.value;
  });
}

/**
 * Pins the model version a call answered with: later calls of the run (and its replays) ask for the
 * same one.
 */
function pin(x: RunPort, requested: string, answered: unknown): void {
  if (typeof answered !== 'string' || !answered.startsWith(`${requested}@`)) return; // a fallback answered: no pin
  if (!x.effects.modelPins.has(requested))
    x.effects.modelPins.set(requested, answered.slice(requested.length + 1));
}

async function model(
  x: RunPort,
  deps: ContextDeps,
  { seq, entry }: Position,
  request: ModelRequest,
): Promise<ModelResponse> {
  if (entry !== undefined && (entry.status === 'succeeded' || entry.status === 'failed')) {
    if (entry.status === 'succeeded')
      pin(x, request.model, (entry.result as { model?: unknown } | null)?.model);
    return settled(entry) as unknown as ModelResponse;
  }
  checkStepBudget(x);
  checkSpendBudget(x);
  // A tiering decision journaled before a crash: the call goes to the model it chose, whatever the
  // budget or backlog says now. It was on its way out then, so it does not park on a budget now.
  const decided = journaledTiering(entry);
  // The platform's and the tenant's daily budgets: once spent, the run parks until midnight UTC (or
  // a raise) instead of calling.
  if (decided === undefined) {
    const release = x.hold(); // in flight while the budget is read: the run must not park under it
    const spent = await deps.gateway.tenantBudget(x.run.tenantId).finally(release);
    if (spent !== null) return budgetWait(x, seq, request.model, spent);
  }
  rememberPrompt(x.runId, seq, request.messages); // telemetry: the prompt for the model span, if content is on
  x.inflightSteps++;
  return x.track('model', async () => {
    const queuedAt = x.clock.now();
    let waitedFor: string | undefined;
    let waitedSince = 0;
    /**
     * Clears the run's waiting reason with this effect's commit, once no other model call of the
     * run is waiting.
     */
    const clearWait = (): { waitingReason?: null } => {
      if (waitedFor === undefined) return {};
      const left = --x.effects.modelWaits;
      if (left === 0) x.emit(resumedEvent(waitedFor, waitedSince, x.clock.now(), { seq }));
      return left === 0 ? { waitingReason: null } : {};
    };
    try {
      let call: Awaited<ReturnType<ModelGateway['call']>>;
      /** The tiering decision that changed the model, kept on a failed call's entry too. */
      let tiered: TieringDecision | undefined = decided;
      try {
        const pinned = x.effects.modelPins.get(request.model);
        call = await deps.gateway.call(request, {
          signal: x.stopping.signal,
          tenantId: x.run.tenantId,
          priority: x.run.priority,
          runOrder: runOrderOf(x.run),
          runId: x.runId,
          seq,
          remaining: remainingSpend(x),
          ...(pinned === undefined ? {} : { pinnedVersion: pinned }),
          ...(decided === undefined ? {} : { decided }),
          onTiered: (decision) => {
            tiered = decision;
            return journalTiering(x, seq, request, decision, queuedAt);
          },
          onPoolWait: poolWaitReporter(x, seq),
          onWait: (reason, detail) => {
            if (waitedFor !== undefined) return;
            waitedFor = reason;
            waitedSince = x.clock.now();
            x.effects.modelWaits++;
            // The run stays claimed (it waits in memory, in the model plane) but says why it is not
            // progressing.
            void x
              .commit({
                run: { waitingReason: reason },
                events: [
                  { type: 'model.waiting', data: { seq, reason, detail } },
                  waitingEvent(reason, waitedSince, detail, { seq }),
                ],
              })
              .catch(() => {});
          },
        });
      } catch (error) {
        if (x.stopped !== undefined) throw error;
        // The gateway refused before dispatch because the call cannot fit the run's token or cost
        // budget.
        if (error instanceof KeelError && error.code === 'budget_exceeded') {
          x.stop({ kind: 'fail', error });
          throw error;
        }
        // The provider's answers arrive typed (provider-errors.ts); anything else was raised by
        // Keel's own code, and is reported as such (with a correlation id in the log), not as an outage.
        const classified = internalError(error, `model call ${request.model}`);
        logInternal(x, classified, seq);
        const serialized = serializeError(classified, 'internal_error');
        await x.commit({
          journal: [
            {
              seq,
              kind: 'model',
              name: request.model,
              status: 'failed',
              error: serialized,
              args: {
                request: journaledRequest(request),
                ...(tiered === undefined ? {} : { tiering: toJson(tiered) }),
              },
              queuedAt,
              endedAt: x.clock.now(),
            },
          ],
          run: { counters: { steps: 1 }, ...clearWait() },
          events: [
            completedEvent(x, seq, 'model', request.model, 'failed', queuedAt, {
              code: serialized.code,
            }),
          ],
        });
        throw deserializeError(serialized);
      }
      const { usage } = call.response;
      const result = toJson(call.response);
      const attributes = toJson(call.attributes);
      await x.commit({
        journal: [
          {
            seq,
            kind: 'model',
            name: request.model,
            status: 'succeeded',
            result,
            args: { attributes, request: journaledRequest(request) },
            attempts: call.attempts,
            queuedAt,
            startedAt: call.startedAt,
            endedAt: x.clock.now(),
          },
        ],
        run: {
          counters: {
            steps: 1,
            inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens,
            costUsd: usage.costUsd,
          },
          ...clearWait(),
        },
        events: [
          completedEvent(x, seq, 'model', request.model, 'succeeded', queuedAt, {
            model: call.response.model,
            inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens,
            cachedInputTokens: usage.cachedInputTokens ?? 0,
            costUsd: usage.costUsd,
            attempts: call.attempts,
            attributes,
          }),
        ],
      });
      pin(x, request.model, call.response.model);
      checkSpendBudget(x);
      return result as unknown as ModelResponse;
    } finally {
      x.inflightSteps--;
    }
  });
}
/**
 * Journals a tiering decision that changed the call's model before the call goes out (`running`,
 * the decision in `args.tiering`), with a `model.tiered` event saying why: a resume after a crash
 * reads it back (journaledTiering) instead of deciding again under changed conditions.
 */
async function journalTiering(
  x: RunPort,
  seq: number,
  request: ModelRequest,
  decision: TieringDecision,
  queuedAt: number,
): Promise<void> {
  const tiering = toJson(decision);
  await x.commit({
    journal: [
      {
        seq,
        kind: 'model',
        name: request.model,
        status: 'running',
        args: { tiering, request: journaledRequest(request) },
        queuedAt,
        startedAt: x.clock.now(),
      },
    ],
    events: [{ type: 'model.tiered', data: { seq, ...(tiering as Record<string, Json>) } }],
  });
}

/** The tiering decision a model entry journaled before its call went out, if any. */
function journaledTiering(entry: JournalEntry | undefined): TieringDecision | undefined {
  if (entry?.status !== 'running') return undefined;
  const tiering = (entry.args as { tiering?: TieringDecision } | null)?.tiering;
  return tiering ?? undefined;
}

/**
 * Parks the run on a spent daily budget (the platform's cap, or the tenant's own): the model call is
 * journaled `waiting` and retried on wake.
 */
function budgetWait(x: RunPort, seq: number, model: string, spent: BudgetVerdict): Promise<never> {
  const reason = spent.budget.startsWith('platform')
    ? 'platform_cap_reached'
    : 'tenant_budget_exhausted';
  const args = {
    waitingReason: reason,
    budget: spent.budget,
    used: spent.used,
    limit: spent.limit,
  };
  return x.addWait({
    seq,
    kind: 'model',
    name: model,
    deadlineAt: spent.until,
    args,
    reason,
    detail: spent.detail,
  });
}

async function callTool(
  x: RunPort,
  deps: ContextDeps,
  { seq, entry }: Position,
  tool: ToolDefinition<unknown, Json>,
  args: Json,
): Promise<Json> {
  if (entry !== undefined && (entry.status === 'succeeded' || entry.status === 'failed'))
    return settled(entry);
  const mcp = parseMcpToolName(tool.name);
  if (mcp !== undefined)
    tool = await resolveMcpTool(x, deps, mcp.server, mcp.tool, tool.name, entry?.effectClass);
  return runTool(x, tool, args, seq, entry, {
    pools: deps.pools,
    checkBudget: () => checkStepBudget(x),
    node: deps.toolNode,
    defaultTimeoutMs: deps.toolTimeoutMs,
    delegation: deps.delegation,
    gate: { agentPolicy: deps.registry.get(x.run.agent, x.run.agentVersion)?.policy },
    live: deps.gateway.live,
  });
}

/**
 * The pinned MCP tool behind `mcp.<server>.<tool>`. A failure to resolve it (server not configured
 * or unreachable when the pin is taken, tool not pinned, tools changed) becomes the call's journaled
 * failure, through a stand-in tool that throws it: a replay then sees the same error, rather than a
 * different answer once the server is back. A side effect already journaled `running` keeps its
 * class, so the stand-in goes through the unknown-outcome path instead of failing a call that may
 * have happened.
 */
async function resolveMcpTool(
  x: RunPort,
  deps: ContextDeps,
  server: string,
  name: string,
  keelName: string,
  journaledClass: string | null | undefined,
): Promise<ToolDefinition<unknown, Json>> {
  try {
    if (deps.mcp === undefined)
      throw new KeelError('mcp_server_not_found', `no MCP servers are configured in this process`, {
        details: { server },
      });
    return await deps.mcp.resolve(
      x.run,
      deps.registry.get(x.run.agent, x.run.agentVersion),
      server,
      name,
    );
  } catch (error) {
    return {
      kind: 'keel.tool',
      name: keelName,
      description: `MCP tool ${server}/${name} (unresolved)`,
      input: undefined as never,
      effect: journaledClass === 'side-effect' ? 'side-effect' : 'read',
      run: () => {
        throw error;
      },
    };
  }
}

async function waitForInput(
  x: RunPort,
  { seq, entry }: Position,
  key: string,
  timeoutMs: number | undefined,
): Promise<Json> {
  if (entry !== undefined && (entry.status === 'succeeded' || entry.status === 'failed'))
    return settled(entry);
  const deadlineAt =
    entry?.deadlineAt ?? (timeoutMs === undefined ? null : x.clock.now() + timeoutMs);
  const queuedAt = entry?.queuedAt ?? x.clock.now();
  const value = await x.track('input', async () => {
    const input = await x.store.getInput(x.runId, key);
    if (input !== null) {
      await x.commit({
        journal: [
          {
            seq,
            kind: 'input',
            name: key,
            status: 'succeeded',
            result: input.value,
            queuedAt,
            startedAt: queuedAt,
            endedAt: x.clock.now(),
            deadlineAt,
          },
        ],
        consumeInputs: [key],
        events: [
          completedEvent(x, seq, 'input', key, 'succeeded', queuedAt),
          ...receivedEvent(seq, key, input.value),
        ],
      });
      return input;
    }
    if (deadlineAt !== null && x.clock.now() >= deadlineAt) {
      const error = new KeelError(
        'input_timeout',
        `no input ${JSON.stringify(key)} arrived within its timeout`,
        { details: { key } },
      );
      await x.commit({
        journal: [
          {
            seq,
            kind: 'input',
            name: key,
            status: 'failed',
            error: error.toJSON(),
            queuedAt,
            endedAt: x.clock.now(),
            deadlineAt,
          },
        ],
        events: [
          completedEvent(x, seq, 'input', key, 'failed', queuedAt, { code: 'input_timeout' }),
        ],
      });
      throw error;
    }
    return null;
  });
  if (value !== null) return value.value;
  return x.addWait({ seq, kind: 'input', name: key, deadlineAt, args: null, reason: 'input' });
}

async function sleep(x: RunPort, { seq, entry }: Position, ms: number): Promise<void> {
  if (entry !== undefined && (entry.status === 'succeeded' || entry.status === 'failed')) return;
  const deadlineAt = entry?.deadlineAt ?? x.clock.now() + ms;
  if (x.clock.now() >= deadlineAt) {
    const queuedAt = entry?.queuedAt ?? x.clock.now();
    await x.track('sleep', () =>
      x.commit({
        journal: [
          {
            seq,
            kind: 'sleep',
            name: 'sleep',
            status: 'succeeded',
            args: { ms },
            queuedAt,
            endedAt: x.clock.now(),
            deadlineAt,
          },
        ],
        events: [completedEvent(x, seq, 'sleep', 'sleep', 'succeeded', queuedAt)],
      }),
    );
    return;
  }
  return x.addWait({
    seq,
    kind: 'sleep',
    name: 'sleep',
    deadlineAt,
    args: { ms },
    reason: 'timer',
  });
}

/** `message.received` when the input a wait took is a message (domain/messages.ts). */
function receivedEvent(seq: number, key: string, value: Json): Array<{ type: string; data: Json }> {
  if (!isMessageKey(key)) return [];
  const m = value as { id?: Json; channel?: Json; index?: Json; from?: Json } | null;
  return [
    {
      type: 'message.received',
      data: {
        seq,
        id: m?.id ?? null,
        channel: m?.channel ?? null,
        index: m?.index ?? null,
        from: m?.from ?? null,
      },
    },
  ];
}

/** A child effect's journal args: its run id, and its policy when it is not the default. */
function childArgs(childRunId: string, onParentEnd: ParentEndPolicy): Json {
  return onParentEnd === 'cancel' ? { childRunId } : { childRunId, onParentEnd };
}

async function child(
  x: RunPort,
  deps: ContextDeps,
  { seq, entry }: Position,
  agent: AgentDefinition,
  input: Json,
  onParentEnd: ParentEndPolicy,
): Promise<Json> {
  if (entry !== undefined && (entry.status === 'succeeded' || entry.status === 'failed'))
    return settled(entry);
  const queuedAt = entry?.queuedAt ?? x.clock.now();
  // Not spawned yet (no entry, or a wait for room in the tenant's queue): spawn it, or wait while
  // the queue is full.
  const spawned = (entry?.args as { childRunId?: string } | null | undefined)?.childRunId;
  if (spawned === undefined) {
    // In flight from here to the spawn's commit: a parent returning without awaiting the child
    // must not end between the room check and the commit (the child would outlive it).
    const release = x.hold();
    try {
      const room = await x.track('child', () => x.store.queuedRoom(x.run.tenantId));
      // Children this run is spawning at the same time (Promise.all) take room too: a fan-out cannot
      // overshoot alone.
      if (room !== null && room - x.effects.spawnsInFlight <= 0)
        return queueFullWait(x, seq, agent.name);
      x.effects.spawnsInFlight++;
      const childRunId = deps.newRunId();
      await x.track('child', () =>
        x
          .commit({
            journal: [
              {
                seq,
                kind: 'child',
                name: agent.name,
                status: 'waiting',
                args: childArgs(childRunId, onParentEnd),
                queuedAt,
              },
            ],
            createRuns: [
              {
                id: childRunId,
                tenantId: x.run.tenantId,
                agent: agent.name,
                agentVersion: agent.version,
                input: toJson(input),
                priority: x.run.priority,
                budget: {},
                metadata: null,
                // A child reaches no further than its parent: the parent's egress list narrows it too.
                egressAllow: x.run.egressAllow,
                parentRunId: x.runId,
                idempotencyKey: null,
                requestHash: null,
              },
            ],
            events: [
              {
                type: 'effect.started',
                data: { seq, kind: 'child', name: agent.name, childRunId },
              },
            ],
          })
          .finally(() => x.effects.spawnsInFlight--),
      );
      return x.addWait({
        seq,
        kind: 'child',
        name: agent.name,
        deadlineAt: null,
        args: childArgs(childRunId, onParentEnd),
        reason: 'child',
      });
    } finally {
      release();
    }
  }
  const childRunId = spawned;
  const result = await x.track('child', async () => {
    const run = await x.store.getRun(childRunId);
    if (run === null || !isTerminal(run.status)) return undefined;
    const ok = run.status === 'succeeded';
    const error: SerializedError = {
      code: 'child_failed',
      message: `child run ${childRunId} ended ${run.status}`,
      details: { childRunId, status: run.status, error: run.error as unknown as Json },
    };
    await x.commit({
      journal: [
        {
          seq,
          kind: 'child',
          name: agent.name,
          status: ok ? 'succeeded' : 'failed',
          args: childArgs(childRunId, onParentEnd),
          queuedAt,
          endedAt: x.clock.now(),
          ...(ok ? { result: run.result } : { error }),
        },
      ],
      events: [
        completedEvent(x, seq, 'child', agent.name, ok ? 'succeeded' : 'failed', queuedAt, {
          childRunId,
        }),
      ],
    });
    if (!ok) throw deserializeError(error);
    return { value: run.result };
  });
  if (result !== undefined) return result.value;
  return x.addWait({
    seq,
    kind: 'child',
    name: agent.name,
    deadlineAt: null,
    args: childArgs(childRunId, onParentEnd),
    reason: 'child',
  });
}

/**
 * How long a run whose child cannot be queued (the tenant's queue is full) waits before it tries
 * again, in ms.
 */
export const CHILD_QUEUE_FULL_RETRY_MS = 5_000; // the Retry-After of a 429 tenant_queue_full

/**
 * The tenant's queue is at maxQueuedRuns: the parent parks (`tenant_queue_full`) and spawns the
 * child when it wakes, as a client told 429 would retry; the child is never queued over the limit
 * and the parent does not fail.
 */
function queueFullWait(x: RunPort, seq: number, name: string): Promise<never> {
  telemetry.runAdmissionRejected(x.run.tenantId, 'child', 'tenant_queue_full');
  return x.addWait({
    seq,
    kind: 'child',
    name,
    deadlineAt: x.clock.now() + CHILD_QUEUE_FULL_RETRY_MS,
    args: { waitingReason: 'tenant_queue_full' },
    reason: 'tenant_queue_full',
    detail: `the tenant's queue is at its maxQueuedRuns: the child run ${name} is spawned when there is room (checked every ${CHILD_QUEUE_FULL_RETRY_MS} ms)`,
  });
}

function now(x: RunPort, { seq, entry }: Position, value: number): number {
  if (entry !== undefined) return entry.result as number;
  x.piggyback({
    seq,
    kind: 'now',
    name: 'now',
    status: 'succeeded',
    result: value,
    endedAt: value,
  });
  return value;
}

/** Logs an internal_error with its correlation id and stack: what an operator searches for. */
function logInternal(x: RunPort, error: KeelError, seq: number): void {
  const internal = internalErrorCause(error);
  if (internal === undefined) return;
  x.log('error', 'internal error during an effect', {
    correlationId: internal.correlationId,
    seq,
    err: internal.cause,
  });
}
