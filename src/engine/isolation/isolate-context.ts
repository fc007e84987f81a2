// ctx inside an agent isolate: counts journal positions the way the main thread's ctx does (the
// same checks before each, from ctx-checks), answers replayed positions from the journal it was
// started with, and sends every other call to the main thread, which runs the effect and replies. A
// step's function stays here: the main thread asks for each attempt. ctx.now() and ctx.random()
// stay synchronous.
import { KeelError, deserializeError, isKeelError } from '../../domain/keel-error.ts';
import { toModelToolSpec } from '../../models/tool-spec.ts';
import type {
  AgentContext,
  ChildOptions,
  Json,
  ModelRequest,
  ReceiveOptions,
  ResumedFrom,
  SendOptions,
  StepOptions,
  ToolDefinition,
} from '../../sdk/types.ts';
import type { EffectKind } from '../../domain/records.ts';
import {
  checkSleep,
  checkWaitForInput,
  parentEndPolicy,
  parseToolArgs,
  resolveChild,
} from '../ctx-checks.ts';
import { parseAgentInput } from '../agent-contract.ts';
import { SeededRandom } from '../deterministic.ts';
import type { AgentRegistry } from '../registry.ts';
import { divergence, toJson } from '../journal-cursor.ts';
import { CHECKPOINT_NAME, type ReplayState } from '../../domain/run-snapshot.ts';
import { checkCheckpointState } from '../checkpoint.ts';
import type { Call, FromIsolate, Outcome, ReplayEntry, ThrownError } from './protocol.ts';
import { checkProgress } from '../stall-watch.ts';
import { BranchPositions, checkFanIn, settleFanIn, tagEffects, type FanInMode } from '../fan-in.ts';
import {
  ChannelCursors,
  checkChannel,
  checkReceiveTimeout,
  checkSend,
  receiveNext,
} from '../messaging.ts';
import { sharedCallName, sharedSpace } from '../shared-space-ctx.ts';

/** One run hosted by this isolate. */
export class IsolatedRun {
  readonly handle: number;
  readonly runId: string;
  readonly tenantId: string;
  readonly random: SeededRandom;
  readonly #journal: Map<number, ReplayEntry>;
  readonly #post: (message: FromIsolate) => void;
  readonly #pending = new Map<
    number,
    { resolve(value: Json): void; reject(error: unknown): void }
  >();
  /** Step functions by position, kept for the attempts the main thread asks for. */
  readonly #steps = new Map<number, () => unknown>();
  readonly #stepWaiters = new Map<number, Array<(fn: () => unknown) => void>>();
  #nextSeq = 1;
  /** The last position of the journal the isolate started with: below it, the code replays. */
  readonly #replayedUpTo: number;
  #nextCall = 1;
  /** Which position each ctx call's promise stands for (a fan-in cancels losing branches by it). */
  readonly #branches = new BranchPositions();
  /** The receives taken on each channel (the n-th takes the channel's n-th message). */
  readonly #channels = new ChannelCursors();
  dropped = false;

  constructor(
    start: {
      run: number;
      runId: string;
      seed: string;
      tenantId: string;
      journal: ReplayEntry[];
      replayUpTo: number;
      resumedFrom?: { seq: number; state: Json; replay: ReplayState };
      unsettled?: Array<{ seq: number; kind: EffectKind }>;
    },
    post: (message: FromIsolate) => void,
  ) {
    this.handle = start.run;
    this.runId = start.runId;
    this.tenantId = start.tenantId;
    this.random = new SeededRandom(start.seed);
    this.#journal = new Map(start.journal.map((e) => [e.seq, e]));
    this.#replayedUpTo = start.replayUpTo;
    this.#post = post;
    this.#unsettled = new Map((start.unsettled ?? []).map((e) => [e.seq, e.kind]));
    if (start.resumedFrom !== undefined) {
      // Re-entered from a checkpoint: the code goes on after it, with the replay state it kept.
      const from = start.resumedFrom;
      this.#nextSeq = from.seq + 1;
      this.random.restore(from.replay.random);
      this.#channels.restore(from.replay.channels);
      this.#resumedFrom = { position: from.seq, state: from.state };
    }
  }

  readonly #resumedFrom: ResumedFrom | undefined;
  /** Journaled positions not settled yet, by kind: an optional checkpoint does not take them. */
  readonly #unsettled: Map<number, EffectKind>;

  context(registry: AgentRegistry, models: ReadonlySet<string>): AgentContext {
    // As in the main thread's ctx: each method is async, so a failed check rejects (positions are
    // still taken at once).
    const ctx: AgentContext = {
      runId: this.runId,
      tenantId: this.tenantId,
      step: (async (name: string, fn: () => unknown, options?: StepOptions) => {
        const seq = this.#position('step', name);
        const entry = this.#journal.get(seq);
        if (entry !== undefined) return settled(entry);
        this.#steps.set(seq, fn);
        for (const wake of this.#stepWaiters.get(seq)?.splice(0) ?? []) wake(fn);
        return this.#call(seq, {
          op: 'step',
          name,
          ...(options?.retry === undefined ? {} : { retry: options.retry }),
          ...(options?.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
        });
      }) as AgentContext['step'],
      model: (async (request: ModelRequest) => {
        if (!models.has(request.model))
          throw new KeelError(
            'model_not_found',
            `Model ${JSON.stringify(request.model)} is not configured`,
            { details: { model: request.model } },
          );
        const seq = this.#position('model', request.model);
        const entry = this.#journal.get(seq);
        if (entry !== undefined) return settled(entry);
        const wire = {
          ...request,
          ...(request.tools === undefined ? {} : { tools: request.tools.map(toModelToolSpec) }),
        };
        return this.#call(seq, {
          op: 'model',
          name: request.model,
          request: toJson(wire) as unknown as ModelRequest,
        });
      }) as AgentContext['model'],
      tool: (async (tool: ToolDefinition<unknown, Json>, args: unknown) => {
        const parsed = parseToolArgs(tool, args);
        const seq = this.#position('tool', tool.name);
        const entry = this.#journal.get(seq);
        if (entry !== undefined) return settled(entry);
        return this.#call(seq, { op: 'tool', name: tool.name, args: parsed });
      }) as AgentContext['tool'],
      waitForInput: (async (key: string, options?: { timeoutMs?: number }) => {
        checkWaitForInput(key, options?.timeoutMs);
        return this.#input(key, options?.timeoutMs);
      }) as AgentContext['waitForInput'],
      send: (async (runId: string, channel: string, payload: Json, options?: SendOptions) => {
        checkSend(runId, channel, options);
        const seq = this.#position('message', channel);
        const entry = this.#journal.get(seq);
        if (entry !== undefined) return settled(entry);
        return this.#call(seq, {
          op: 'message',
          name: channel,
          to: runId,
          payload: toJson(payload),
          ...(options === undefined ? {} : { options: toJson(options) as SendOptions }),
        });
      }) as AgentContext['send'],
      receive: (async (channel: string, options?: ReceiveOptions) => {
        checkChannel('receive', channel);
        checkReceiveTimeout(options?.timeoutMs);
        return receiveNext(
          channel,
          options?.timeoutMs,
          this.#channels,
          (key, timeoutMs) => this.#input(key, timeoutMs),
          () => ctx.now(),
        );
      }) as AgentContext['receive'],
      sleep: async (ms: number) => {
        checkSleep(ms);
        const seq = this.#position('sleep', 'sleep');
        if (this.#journal.has(seq)) return;
        await this.#call(seq, { op: 'sleep', name: 'sleep', ms });
      },
      child: (async (
        ref: Parameters<AgentContext['child']>[0],
        input: Json,
        options?: ChildOptions,
      ) => {
        const agent = resolveChild(registry, ref);
        parseAgentInput(agent, input); // a bad child input takes no position, as in the main thread
        const onParentEnd = parentEndPolicy(options);
        const seq = this.#position('child', agent.name);
        const entry = this.#journal.get(seq);
        if (entry !== undefined) return settled(entry);
        return this.#call(seq, {
          op: 'child',
          name: agent.name,
          agent: `${agent.name}@${agent.version}`,
          input: toJson(input),
          onParentEnd,
        });
      }) as AgentContext['child'],
      now: () => {
        const seq = this.#position('now', 'now');
        const entry = this.#journal.get(seq);
        if (entry !== undefined) return entry.result as number;
        const value = Date.now(); // the isolate thread's own time: the engine's injected clock cannot cross threads
        this.#journal.set(seq, {
          seq,
          kind: 'now',
          name: 'now',
          status: 'succeeded',
          result: value,
          error: null,
        });
        this.#post({ t: 'now', run: this.handle, seq, value });
        return value;
      },
      random: () => {
        this.#assertLive();
        return this.random.next();
      },
      uuid: () => {
        this.#assertLive();
        return this.random.uuid();
      },
      progress: (state) => {
        this.#assertLive();
        const checked = checkProgress(state);
        // A replayed report was written when it was made: only a live one crosses to the main thread.
        if (this.#nextSeq > this.#replayedUpTo)
          this.#post({ t: 'progress', run: this.handle, state: checked });
      },
      all: (list) => this.#fanIn('all', list) as never,
      any: (list, options) => this.#fanIn('any', list, options?.verify as never) as never,
      race: (list) => this.#fanIn('race', list) as never,
      shared: sharedSpace((call) => {
        const name = sharedCallName(call);
        const seq = this.#position('shared', name);
        const entry = this.#journal.get(seq);
        if (entry !== undefined) return settled(entry);
        return this.#call(seq, { op: 'shared', name, call });
      }),
      checkpoint: async (state, options) => {
        const checked = checkCheckpointState(state);
        const held = this.#journal.get(this.#nextSeq)?.kind ?? this.#unsettled.get(this.#nextSeq);
        if (options?.optional === true && held !== undefined && held !== 'checkpoint') return; // added to code in flight
        const seq = this.#position('checkpoint', CHECKPOINT_NAME);
        if (this.#journal.has(seq)) return;
        await this.#call(seq, {
          op: 'checkpoint',
          name: CHECKPOINT_NAME,
          state: checked.json,
          bytes: checked.bytes,
          random: this.random.state(),
          channels: this.#channels.counts(),
        });
      },
      resumedFrom: this.#resumedFrom,
    };
    return tagEffects(ctx, this.#branches);
  }

  /** A durable input wait at the next position (ctx.waitForInput, and ctx.receive's message keys). */
  #input(key: string, timeoutMs: number | undefined): Promise<Json> {
    const seq = this.#position('input', key);
    const entry = this.#journal.get(seq);
    if (entry !== undefined) return settled(entry);
    return this.#call(seq, {
      op: 'input',
      name: key,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  }

  /** A fan-in: decided here (fan-in.ts), journaled by the main thread. */
  #fanIn(
    mode: FanInMode,
    list: ReadonlyArray<Promise<unknown>>,
    verify?: (value: never) => boolean,
  ): Promise<Json> {
    try {
      checkFanIn(mode, list, verify);
    } catch (error) {
      return Promise.reject(error);
    }
    const seq = this.#position('decision', mode);
    const entry = this.#journal.get(seq);
    return settleFanIn(mode, list, verify, {
      journaled: entry,
      positionOf: (branch) => this.#branches.positionOf(branch),
      commit: async (decision) => {
        if (entry !== undefined) return;
        await this.#call(seq, { op: 'decision', name: mode, decision: toJson(decision) as never });
      },
    });
  }

  /** The main thread answered call `call`. */
  settle(call: number, outcome: Outcome): void {
    const pending = this.#pending.get(call);
    if (pending === undefined) return;
    this.#pending.delete(call);
    if (outcome.ok) pending.resolve(outcome.value);
    else pending.reject(revive(outcome.error));
  }

  /**
   * The step function at `seq`, once replay has reached it (an attempt may be asked for before,
   * after a restart).
   */
  stepAt(seq: number): Promise<() => unknown> {
    const fn = this.#steps.get(seq);
    if (fn !== undefined) return Promise.resolve(fn);
    return new Promise((resolve) => {
      const waiters = this.#stepWaiters.get(seq) ?? [];
      waiters.push(resolve);
      this.#stepWaiters.set(seq, waiters);
    });
  }

  /**
   * Settled entries are answered here; only positions the journal has settled are kept (see
   * `start`).
   */
  #position(kind: EffectKind, name: string): number {
    this.#assertLive();
    const seq = this.#nextSeq++;
    this.#branches.taken(seq);
    const error = divergence(seq, this.#journal.get(seq), kind, name, this.runId);
    if (error !== undefined) {
      this.#post({ t: 'fatal', run: this.handle, error: error.toJSON() });
      this.dropped = true;
      throw error;
    }
    return seq;
  }

  #call(seq: number, body: Call): Promise<never> {
    const call = this.#nextCall++;
    return new Promise<never>((resolve, reject) => {
      this.#pending.set(call, { resolve: resolve as unknown as (value: Json) => void, reject });
      this.#post({ t: 'call', run: this.handle, call, seq, body });
    });
  }

  #assertLive(): void {
    if (this.dropped) throw new KeelError('cancelled', `run ${this.runId} is stopping`);
  }
}

function settled(entry: ReplayEntry): Promise<never> {
  if (entry.status === 'failed')
    return Promise.reject(
      deserializeError(entry.error ?? { code: 'internal', message: 'failed effect without error' }),
    );
  return Promise.resolve(entry.result as never);
}

/**
 * An error as it crosses threads: KeelErrors keep code and details; others their name and `code`
 * property.
 */
export function thrown(error: unknown, fallback: string): ThrownError {
  if (isKeelError(error)) return { keel: true, name: 'KeelError', ...error.toJSON() };
  const e = error as { name?: unknown; message?: unknown; code?: unknown } | null;
  return {
    keel: false,
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    code: typeof e?.code === 'string' ? e.code : fallback,
  };
}

/** The error again on this side: a KeelError, or an Error with the original name and code. */
export function revive(error: ThrownError): Error {
  if (error.keel) return deserializeError(error);
  return Object.assign(new Error(error.message), { name: error.name, code: error.code });
}
