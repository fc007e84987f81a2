// The messages between the main thread (which owns runs, effects and commits) and an agent isolate
// (a worker thread that only runs agent code). The isolate counts journal positions itself, answers
// replayed positions from the journal it was given, and asks the main thread for everything else;
// the main thread checks every position again.
import type { SerializedError } from '../../domain/keel-error.ts';
import type {
  Json,
  ModelRequest,
  ParentEndPolicy,
  RetryPolicy,
  SendOptions,
} from '../../sdk/types.ts';
import type { EffectKind } from '../../domain/records.ts';
import type { ReplayState } from '../../domain/run-snapshot.ts';
import type { Decision, FanInMode } from '../fan-in.ts';
import type { SharedCall } from '../shared-space-ctx.ts';

/** What the isolate needs of a journal entry to replay it without asking. */
export interface ReplayEntry {
  seq: number;
  kind: EffectKind;
  name: string;
  status: string;
  result: Json;
  error: SerializedError | null;
}

/** Data the isolate starts with (workerData). */
export interface IsolateData {
  agentsFile: string;
  /**
   * Model names the gateway knows: an unknown one fails before taking a position, as in the main
   * thread.
   */
  models: string[];
  /**
   * Shared with the main thread: [0] the isolate's last event-loop tick (epoch ms, Float64), [2]
   * the run it last entered (Int32).
   */
  pulse: SharedArrayBuffer;
  /** Nice value of the isolate's thread (higher = lower CPU priority than the main thread). */
  nice: number;
}

/** Float64 index of the last tick in `pulse`; Int32 index of the run handle last entered. */
export const PULSE_TICK = 0;
export const PULSE_RUN = 2;
export const PULSE_BYTES = 16;
/** How often an isolate's event loop proves it is turning. */
export const PULSE_INTERVAL_MS = 50;

export type Call =
  | { op: 'step'; name: string; retry?: RetryPolicy; maxAttempts?: number }
  | { op: 'model'; name: string; request: ModelRequest }
  | { op: 'tool'; name: string; args: Json }
  | { op: 'input'; name: string; timeoutMs?: number }
  | { op: 'sleep'; name: 'sleep'; ms: number }
  | { op: 'child'; name: string; agent: string; input: Json; onParentEnd: ParentEndPolicy }
  /** ctx.send: the main thread delivers the message and journals the send (message-send.ts). */
  | { op: 'message'; name: string; to: string; payload: Json; options?: SendOptions }
  /** ctx.shared: the main thread reads or writes the tree's shared space (shared-space.ts). */
  | { op: 'shared'; name: string; call: SharedCall }
  /** A fan-in decided (fan-in.ts): the main thread journals it and cancels the losers. */
  | { op: 'decision'; name: FanInMode; decision: Decision }
  /** ctx.checkpoint: the main thread journals the snapshot (checkpoint.ts) with the isolate's replay state. */
  | {
      op: 'checkpoint';
      name: string;
      state: Json;
      bytes: number;
      random: [number, number, number, number];
      channels: Record<string, number>;
    };

export type Outcome = { ok: true; value: Json } | { ok: false; error: ThrownError };

/**
 * An error crossing threads: a KeelError keeps its code and details, another error its name and
 * `code` property.
 */
export interface ThrownError extends SerializedError {
  keel: boolean;
  name: string;
}

export type ToIsolate =
  | {
      t: 'start';
      run: number;
      runId: string;
      /** What seeds ctx.random()/ctx.uuid() (the run id, or a reset run's source's seed). */
      seed: string;
      agent: string;
      input: Json;
      tenantId: string;
      journal: ReplayEntry[];
      /** The last journaled position, settled or not: ctx.progress below it is a replay's. */
      replayUpTo: number;
      /** The latest checkpoint: the agent re-enters from it, after its position (run-snapshot.ts). */
      resumedFrom?: { seq: number; state: Json; replay: ReplayState };
      /** Kinds of the journaled positions not settled yet (an optional checkpoint's test). */
      unsettled?: Array<{ seq: number; kind: EffectKind }>;
    }
  | { t: 'reply'; run: number; call: number; outcome: Outcome }
  | { t: 'attempt'; run: number; attempt: number; seq: number }
  | { t: 'drop'; run: number };

export type FromIsolate =
  /** The agents module is loaded: the watchdog starts watching this isolate. */
  | { t: 'ready' }
  /** The agents module did not load here (it may load on the main thread): the isolate ends. */
  | { t: 'load-failed'; message: string }
  | { t: 'call'; run: number; call: number; seq: number; body: Call }
  | { t: 'now'; run: number; seq: number; value: number }
  /** ctx.progress, checked and live (not replayed): the main thread commits the latest. */
  | { t: 'progress'; run: number; state: Json }
  | { t: 'attempted'; run: number; attempt: number; outcome: Outcome }
  /**
   * The turn that a start or a reply began is over: the run's code waits on ctx (or on nothing).
   */
  | { t: 'idle'; run: number }
  | { t: 'done'; run: number; outcome: Outcome }
  /** Agent code broke the run from outside its turn (process.exit, a throw in a timer callback). */
  | { t: 'fatal'; run: number; error: SerializedError };
