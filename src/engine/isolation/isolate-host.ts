// Runs agent code in a pool of isolates (worker threads), off the thread that serves HTTP,
// heartbeats leases and commits. The main thread keeps everything durable: each call from an
// isolate arrives with its journal position and is run by the same effect code as the in-thread
// ctx. A watchdog reads each isolate's pulse; an isolate whose event loop stopped turning past the
// limit of the run it last entered is terminated, and so is one over its memory limit. The run to
// blame fails (`agent_blocked`, `agent_oom`, `agent_crashed`); the other runs it hosted lose
// nothing: they are replayed in another isolate from their journal, and effects still in flight for
// them here are attached to, not dispatched again.
import { mcpTool, parseMcpToolName } from '../../sdk/mcp-tool.ts';
import type { ToolDefinition } from '../../sdk/types.ts';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { KeelError, deserializeError, type SerializedError } from '../../domain/keel-error.ts';
import type { ErrorCode } from '../../domain/error-codes.ts';
import type { Json } from '../../domain/json.ts';
import { AGENT_BLOCKED_MS_DEFAULT, ISOLATE_MEMORY_MB_DEFAULT } from '../../config/defaults.ts';
import { telemetry } from '../../telemetry/telemetry.ts';
import { effects, type ContextDeps } from '../agent-context.ts';
import type { AgentHost } from '../agent-host.ts';
import { resolveRetryPolicy } from '../retry-policy.ts';
import { toJson } from '../journal-cursor.ts';
import type { RunExecution } from '../run-execution.ts';
import { revive, thrown } from './isolate-context.ts';
import {
  PULSE_BYTES,
  PULSE_RUN,
  PULSE_TICK,
  type Call,
  type FromIsolate,
  type IsolateData,
  type Outcome,
  type ReplayEntry,
  type ToIsolate,
} from './protocol.ts';

const WATCHDOG_INTERVAL_MS = 100;
/** A watchdog pass this many intervals late means this thread itself was stalled. */
const STALL_FACTOR = 5;
/**
 * Isolate threads run at this nice value (Linux): agent code gets the CPU the control plane leaves.
 */
const ISOLATE_NICE = 10;
/** Wait before replacing an isolate that died before it was ready. */
const RESPAWN_DELAY_MS = 1_000;
const ISOLATE_ENTRY = fileURLToPath(
  new URL(`./isolate-main${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

export interface IsolateHostOptions {
  agentsFile: string;
  /** Model names the gateway serves. */
  models: string[];
  /** Isolates in the pool (default: the CPUs, 1 to 4). */
  isolates?: number;
  /**
   * A turn holding its isolate longer than this is aborted (default 2 s; an agent's
   * `blockedAfterMs` wins).
   */
  blockedAfterMs?: number;
  /** Heap limit of each isolate in MiB (default 512). */
  memoryMb?: number;
  log?: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
}

type Reason = 'blocked' | 'oom' | 'crashed';
const CODE_OF: Record<Reason, ErrorCode> = {
  blocked: 'agent_blocked',
  oom: 'agent_oom',
  crashed: 'agent_crashed',
};

class Isolate {
  readonly worker: Worker;
  readonly tick: Float64Array;
  readonly entered: Int32Array;
  readonly runs = new Set<HostedRun>();
  ready = false;
  readonly loaded: Promise<void>;
  #loaded!: { resolve(): void; reject(error: Error): void };
  /** Why the host ended it (the watchdog), or why it died (an error event). */
  reason: Reason | undefined;
  /**
   * Replaced by isolates of a reloaded agents module: takes no new run, ends once its runs have
   * left, and is not replaced when it ends.
   */
  retired = false;
  /** Messages of this event-loop iteration, not sent yet (see `post`). */
  #outbox: ToIsolate[] = [];

  constructor(data: Omit<IsolateData, 'pulse'>, memoryMb: number) {
    const pulse = new SharedArrayBuffer(PULSE_BYTES);
    this.tick = new Float64Array(pulse);
    this.entered = new Int32Array(pulse);
    this.tick[PULSE_TICK] = Date.now();
    this.worker = new Worker(ISOLATE_ENTRY, {
      workerData: { ...data, pulse } satisfies IsolateData,
      resourceLimits: { maxOldGenerationSizeMb: memoryMb },
    });
    this.worker.unref(); // the process lives for its server and runs, not for its isolates
    this.loaded = new Promise((resolve, reject) => {
      this.#loaded = { resolve, reject };
    });
    this.loaded.catch(() => {}); // a replacement isolate's failure is logged by the host, not awaited
  }

  markReady(): void {
    this.ready = true;
    this.#loaded.resolve();
  }

  /** Ended before it was ready: the agents module did not load in it. */
  markFailed(error: Error): void {
    this.#loaded.reject(error);
  }

  /**
   * Queued and sent with the others of this event-loop iteration in one postMessage (the replies
   * of one group commit to every run hosted here leave together): a message costs both threads a
   * structured clone and a wake-up.
   */
  post(message: ToIsolate): void {
    if (this.#outbox.push(message) === 1) setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    const batch = this.#outbox;
    this.#outbox = [];
    this.worker.postMessage(batch.length === 1 ? batch[0] : batch);
  };
}

class HostedRun {
  readonly handle: number;
  readonly x: RunExecution;
  readonly deps: ContextDeps;
  isolate!: Isolate;
  /** Turns begun (a start, a reply) and not yet idle: the run must not park under them. */
  readonly turns: Array<() => void> = [];
  /** Effects running for this run, by position: a replay in a new isolate attaches to them. */
  readonly inflight = new Map<number, Promise<Outcome>>();
  /** Step attempts asked of the isolate and not answered yet. */
  readonly attempts = new Map<number, { seq: number; settle(outcome: Outcome): void }>();
  settle!: (outcome: Outcome) => void;
  closed = false;

  constructor(handle: number, x: RunExecution, deps: ContextDeps) {
    this.handle = handle;
    this.x = x;
    this.deps = deps;
  }

  releaseTurns(): void {
    for (const release of this.turns.splice(0)) release();
  }
}

export class IsolateHost implements AgentHost {
  readonly #options: IsolateHostOptions;
  readonly #size: number;
  readonly #blockedAfterMs: number;
  readonly #memoryMb: number;
  readonly #log: NonNullable<IsolateHostOptions['log']>;
  readonly #isolates = new Set<Isolate>();
  /** Isolates of an earlier agents module, finishing the runs they hold (see `reload`). */
  readonly #retiring = new Set<Isolate>();
  readonly #runs = new Map<number, HostedRun>();
  readonly #watchdog: NodeJS.Timeout;
  #nextHandle = 1;
  #nextAttempt = 1;
  #closed = false;
  #ready: Promise<void>;
  /**
   * When the watchdog last looked, and when this thread last came back from a stall (a paused or
   * starved process).
   */
  #lastWatch = Date.now();
  #resumedAt = 0;

  constructor(options: IsolateHostOptions) {
    this.#options = options;
    this.#size = Math.max(1, Math.floor(options.isolates ?? Math.min(4, availableParallelism())));
    this.#blockedAfterMs = options.blockedAfterMs ?? AGENT_BLOCKED_MS_DEFAULT;
    this.#memoryMb = options.memoryMb ?? ISOLATE_MEMORY_MB_DEFAULT;
    this.#log = options.log ?? (() => {});
    const first = Array.from({ length: this.#size }, () => this.#spawn());
    this.#ready = Promise.all(first.map((iso) => iso.loaded)).then(() => {});
    this.#watchdog = setInterval(() => this.#watch(), WATCHDOG_INTERVAL_MS);
    this.#watchdog.unref();
  }

  /**
   * Resolves once every isolate has loaded the agents module; rejects with the reason one could
   * not.
   */
  ready(): Promise<void> {
    return this.#ready;
  }

  run(x: RunExecution, deps: ContextDeps): Promise<unknown> {
    const run = new HostedRun(this.#nextHandle++, x, deps);
    this.#runs.set(run.handle, run);
    const result = new Promise<unknown>((resolve, reject) => {
      run.settle = (outcome) =>
        outcome.ok ? resolve(outcome.value) : reject(revive(outcome.error));
    });
    // The execution ends (finished, parked, stopped, lost): its code has nothing left to do here.
    x.abort.signal.addEventListener('abort', () => this.#drop(run), { once: true });
    this.#place(run);
    return result;
  }

  /**
   * Loads the agents module afresh (its file and everything it imports, from disk) in a new set of
   * isolates, and places new runs there. A run hosted now keeps the isolate, and so the code, that
   * started it until it parks or ends (a later replay runs the new code, which fails with
   * `non_determinism` if it no longer matches the journal); an old isolate ends once it hosts
   * nothing. Rejects, keeping the isolates it had, when the module does not load.
   */
  async reload(): Promise<void> {
    const fresh = Array.from({ length: this.#size }, () => this.#spawn(false));
    try {
      await Promise.all(fresh.map((iso) => iso.loaded));
    } catch (error) {
      for (const iso of fresh) {
        iso.retired = true;
        void iso.worker.terminate();
      }
      throw error;
    }
    const old = [...this.#isolates];
    this.#isolates.clear();
    for (const iso of fresh) this.#isolates.add(iso);
    for (const iso of old) {
      iso.retired = true;
      this.#retiring.add(iso);
      this.#endIfRetiredAndIdle(iso);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watchdog);
    await Promise.all([...this.#isolates, ...this.#retiring].map((iso) => iso.worker.terminate()));
    this.#isolates.clear();
    this.#retiring.clear();
  }

  #endIfRetiredAndIdle(isolate: Isolate): void {
    if (isolate.retired && isolate.runs.size === 0) void isolate.worker.terminate();
  }

  /** Starts `run` (again) in the least loaded isolate, from the journal committed so far. */
  #place(run: HostedRun): void {
    if (run.closed || this.#closed) return;
    if (this.#isolates.size === 0) {
      setTimeout(() => this.#place(run), RESPAWN_DELAY_MS).unref(); // every isolate is being replaced
      return;
    }
    const isolate = [...this.#isolates].reduce((a, b) => (b.runs.size < a.runs.size ? b : a));
    run.isolate = isolate;
    isolate.runs.add(run);
    // Re-entered from the latest checkpoint (loaded, or taken by this execution): nothing before it
    // crosses to the isolate.
    const from = run.x.latestCheckpoint();
    const journal: ReplayEntry[] = run.x
      .journalEntries()
      .filter((e) => e.seq >= (from?.seq ?? 1))
      .filter((e) => e.status === 'succeeded' || e.status === 'failed')
      .map((e) => ({
        seq: e.seq,
        kind: e.kind,
        name: e.name,
        status: e.status,
        result: e.result,
        error: e.error,
      }));
    run.turns.push(run.x.hold());
    isolate.post({
      t: 'start',
      run: run.handle,
      runId: run.x.runId,
      seed: run.x.run.randomSeed ?? run.x.runId,
      agent: `${run.x.run.agent}@${run.x.run.agentVersion}`,
      input: run.x.run.input,
      tenantId: run.x.run.tenantId,
      journal,
      replayUpTo: run.x.journalEntries().reduce((max, e) => Math.max(max, e.seq), 0),
      ...(from === undefined
        ? {}
        : { resumedFrom: { seq: from.seq, state: from.state, replay: from.replay } }),
      unsettled: run.x
        .journalEntries()
        .filter(
          (e) => e.seq >= (from?.seq ?? 1) && e.status !== 'succeeded' && e.status !== 'failed',
        )
        .map((e) => ({ seq: e.seq, kind: e.kind })),
    });
    for (const [attempt, { seq }] of run.attempts)
      isolate.post({ t: 'attempt', run: run.handle, attempt, seq });
  }

  #drop(run: HostedRun): void {
    if (run.closed) return;
    run.closed = true;
    run.releaseTurns();
    this.#runs.delete(run.handle);
    run.isolate.runs.delete(run);
    if (!this.#closed) run.isolate.post({ t: 'drop', run: run.handle });
    this.#endIfRetiredAndIdle(run.isolate);
  }

  /** A new isolate; it joins the pool at once unless `join` is false (a reload's, until ready). */
  #spawn(join = true): Isolate {
    const isolate = new Isolate(
      { agentsFile: this.#options.agentsFile, models: this.#options.models, nice: ISOLATE_NICE },
      this.#memoryMb,
    );
    if (join) this.#isolates.add(isolate);
    isolate.worker.on('message', (message: FromIsolate | FromIsolate[]) => {
      if (!Array.isArray(message)) return this.#onMessage(isolate, message);
      // A turn's idle comes after what its calls set off here, as when it was a message of its own:
      // a run must not be seen idle before the effects its turn asked for hold it.
      const idles: FromIsolate[] = [];
      for (const one of message) {
        if (one.t === 'idle') idles.push(one);
        else this.#onMessage(isolate, one);
      }
      if (idles.length > 0)
        setImmediate(() => {
          for (const one of idles) this.#onMessage(isolate, one);
        });
    });
    isolate.worker.on('error', (error: Error & { code?: string }) => {
      if (!isolate.ready) isolate.markFailed(error);
      isolate.reason ??= error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'oom' : 'crashed';
      this.#log('warn', 'agent isolate failed', { reason: isolate.reason, error: String(error) });
    });
    isolate.worker.on('exit', () => this.#onExit(isolate));
    return isolate;
  }

  #onMessage(isolate: Isolate, message: FromIsolate): void {
    if (message.t === 'ready') {
      isolate.markReady();
      return;
    }
    if (message.t === 'load-failed') {
      isolate.markFailed(new Error(message.message));
      this.#log('warn', 'agent isolate could not load the agents module', {
        error: message.message,
      });
      return;
    }
    const run = this.#runs.get(message.run);
    if (run === undefined || run.isolate !== isolate) return; // dropped, or moved to another isolate since
    switch (message.t) {
      case 'call':
        this.#onCall(run, message.call, message.seq, message.body);
        return;
      case 'now':
        try {
          effects.now(run.x, run.x.positionAt(message.seq, 'now', 'now'), message.value);
        } catch {
          // positionAt stopped the run (diverged or stopping)
        }
        return;
      case 'progress':
        if (run.x.stopped === undefined) run.x.progress(message.state);
        return;
      case 'attempted': {
        const attempt = run.attempts.get(message.attempt);
        run.attempts.delete(message.attempt);
        attempt?.settle(message.outcome);
        return;
      }
      case 'idle':
        run.turns.shift()?.();
        return;
      case 'done':
        run.settle(message.outcome);
        return;
      case 'fatal':
        this.#fail(run, deserializeError(message.error), 'crashed');
        return;
    }
  }

  #onCall(run: HostedRun, call: number, seq: number, body: Call): void {
    let outcome = run.inflight.get(seq);
    if (outcome === undefined) {
      outcome = this.#dispatch(run, seq, body);
      run.inflight.set(seq, outcome);
      void outcome.then(() => run.inflight.delete(seq));
    }
    const isolate = run.isolate;
    void outcome.then((settled) => {
      if (run.closed || run.isolate !== isolate) return; // the replay in the new isolate asks again
      run.turns.push(run.x.hold());
      isolate.post({ t: 'reply', run: run.handle, call, outcome: settled });
    });
  }

  /** Runs the effect a call asks for at its position, as the in-thread ctx would. Never rejects. */
  async #dispatch(run: HostedRun, seq: number, body: Call): Promise<Outcome> {
    const { x, deps } = run;
    try {
      const at = x.positionAt(seq, body.op, body.name);
      let value: unknown;
      switch (body.op) {
        case 'step':
          value = await effects.step(
            x,
            at,
            body.name,
            () => this.#attempt(run, seq),
            resolveRetryPolicy(body.retry, body.maxAttempts),
          );
          break;
        case 'model':
          deps.gateway.resolve(body.request.model);
          value = await effects.model(x, deps, at, body.request);
          break;
        case 'tool': {
          // An MCP tool needs no definition here: its name says which server and tool it is.
          const tool =
            deps.registry.tool(body.name) ??
            (parseMcpToolName(body.name) === undefined ? undefined : mcpToolByName(body.name));
          if (tool === undefined) {
            throw new KeelError(
              'tool_unavailable',
              `tool ${body.name} was not defined when the agents module loaded (it is defined inside agent code?), so the main thread cannot run it`,
              { details: { tool: body.name } },
            );
          }
          value = await effects.tool(x, deps, at, tool, body.args);
          break;
        }
        case 'input':
          value = await effects.waitForInput(x, at, body.name, body.timeoutMs);
          break;
        case 'sleep':
          value = await effects.sleep(x, at, body.ms);
          break;
        case 'decision':
          await effects.decision(x, at, body.decision);
          break;
        case 'message':
          value = await effects.send(x, at, body.to, body.name, body.payload, body.options);
          break;
        case 'shared':
          value = await effects.shared(x, at, body.call);
          break;
        case 'checkpoint':
          await effects.checkpoint(
            x,
            at,
            { json: body.state, bytes: body.bytes },
            { random: body.random, channels: body.channels },
          );
          break;
        case 'child':
          value = await effects.child(
            x,
            deps,
            at,
            deps.registry.resolve(body.agent),
            body.input,
            body.onParentEnd,
          );
          break;
      }
      return { ok: true, value: toJson(value) };
    } catch (error) {
      return { ok: false, error: thrown(error, 'agent_error') };
    }
  }

  /** One attempt of the step at `seq`: its function runs in the isolate. */
  #attempt(run: HostedRun, seq: number): Promise<Json> {
    const attempt = this.#nextAttempt++;
    return new Promise<Json>((resolve, reject) => {
      run.attempts.set(attempt, {
        seq,
        settle: (o) => (o.ok ? resolve(o.value) : reject(revive(o.error))),
      });
      run.isolate.post({ t: 'attempt', run: run.handle, attempt, seq });
    });
  }

  #fail(run: HostedRun, error: KeelError | SerializedError, reason: Reason): void {
    const keel = error instanceof KeelError ? error : deserializeError(error);
    telemetry.metrics.watchdogAborts.inc({ agent: run.x.run.agent, code: keel.code });
    this.#log('warn', 'agent code ended its run', {
      runId: run.x.runId,
      reason,
      code: keel.code,
      error: keel.message,
    });
    this.#drop(run);
    run.x.stop({ kind: 'fail', error: keel });
  }

  /**
   * Terminates every ready isolate whose event loop has not turned for longer than its current run
   * allows.
   */
  #watch(): void {
    // Wall-clock time, not the engine's clock: it is compared with the pulse the isolate thread
    // writes (Date.now() there), and it measures real stalls, which a simulated clock must not
    // hide.
    const now = Date.now();
    // This thread did not run for a while either (SIGSTOP, a starved machine): an isolate's silence
    // over that time says nothing about its agent code, so its clock starts again now.
    if (now - this.#lastWatch > WATCHDOG_INTERVAL_MS * STALL_FACTOR) this.#resumedAt = now;
    this.#lastWatch = now;
    for (const isolate of [...this.#isolates, ...this.#retiring]) {
      if (!isolate.ready || isolate.reason !== undefined) continue;
      const run = this.#runs.get(isolate.entered[PULSE_RUN]!);
      const limit = run?.x.agent?.blockedAfterMs ?? this.#blockedAfterMs;
      if (now - Math.max(isolate.tick[PULSE_TICK]!, this.#resumedAt) <= limit) continue;
      isolate.reason = 'blocked';
      void isolate.worker.terminate();
    }
  }

  /**
   * An isolate ended: blame the run it was in, replay the others elsewhere, and keep the pool full.
   */
  #onExit(isolate: Isolate): void {
    this.#isolates.delete(isolate);
    this.#retiring.delete(isolate);
    isolate.markFailed(new Error('the agent isolate exited before it was ready'));
    if (this.#closed) return;
    // A retired isolate ended by the host once idle (or a reload's that did not load): nothing to
    // replace, nobody to blame.
    if (isolate.retired && isolate.runs.size === 0) return;
    const reason = isolate.reason ?? 'crashed';
    telemetry.metrics.isolateRestarts.inc({ reason });
    const culprit = this.#runs.get(isolate.entered[PULSE_RUN]!);
    // An isolate that never got ready could not load the agents module: do not respawn it in a
    // tight loop. A retired one is not replaced: the reloaded module's isolates took its place.
    if (!isolate.retired) {
      if (isolate.ready) this.#spawn();
      else setTimeout(() => !this.#closed && this.#spawn(), RESPAWN_DELAY_MS).unref();
    }
    for (const run of [...isolate.runs]) {
      isolate.runs.delete(run);
      run.releaseTurns();
      if (run.closed) continue;
      if (run === culprit) {
        const limit = run.x.agent?.blockedAfterMs ?? this.#blockedAfterMs;
        const message =
          reason === 'blocked'
            ? `a turn of agent ${run.x.run.agent} did not yield for more than ${limit} ms`
            : reason === 'oom'
              ? `agent ${run.x.run.agent} exceeded its isolate's memory limit (${this.#memoryMb} MiB)`
              : `agent ${run.x.run.agent}'s isolate died`;
        this.#fail(
          run,
          new KeelError(CODE_OF[reason], message, {
            details: {
              reason,
              ...(reason === 'blocked' ? { limitMs: limit } : { memoryMb: this.#memoryMb }),
            },
          }),
          reason,
        );
        continue;
      }
      this.#place(run);
    }
  }
}

function mcpToolByName(name: string): ToolDefinition<unknown, Json> {
  const { server, tool } = parseMcpToolName(name)!;
  return mcpTool(server, tool) as ToolDefinition<unknown, Json>;
}
