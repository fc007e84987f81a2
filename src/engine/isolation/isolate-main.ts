// The entry of an agent isolate (a worker thread): loads the agents module, hosts the runs the main
// thread starts here, and keeps agent code from breaking more than its own run:
// - a pulse in shared memory (the last event-loop tick, and which run's code was last entered) lets
//   the main thread's watchdog see a turn that does not yield and know whose it is;
// - the isolate's thread runs at a lower CPU priority than the main thread (Linux: a nice value per
//   thread), so agent code burning CPU cannot starve the API, heartbeats and commits of CPU time;
// - process.exit() called by agent code, and a throw from a timer callback it scheduled, fail that
//   run only (the run is known from the async context the code runs in) instead of ending the
//   isolate.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { KeelError } from '../../domain/keel-error.ts';
import { parseAgentInput } from '../agent-contract.ts';
import { loadAgentsModule } from '../agents-module.ts';
import { AgentRegistry } from '../registry.ts';
import { toJson } from '../journal-cursor.ts';
import { IsolatedRun, thrown } from './isolate-context.ts';
import {
  PULSE_INTERVAL_MS,
  PULSE_RUN,
  PULSE_TICK,
  type FromIsolate,
  type IsolateData,
  type ToIsolate,
} from './protocol.ts';

const data = workerData as IsolateData;
const port = parentPort!;
const tick = new Float64Array(data.pulse);
const entered = new Int32Array(data.pulse);
const runs = new Map<number, IsolatedRun>();
const current = new AsyncLocalStorage<number>();
const { setInterval: realSetInterval, setImmediate: realSetImmediate } = globalThis;

// Messages of one event-loop iteration (a run's call and the idle after it, the attempts and calls
// of every run hosted here) leave in one postMessage at its end: each message costs both threads a
// structured clone and a wake-up, so a step's call and idle, and the calls of many runs, share
// them.
// A run's fatal error leaves at once (with what is queued before it): the code that broke may go
// on to block this thread, and the run must still fail for what it did first.
let outbox: FromIsolate[] = [];
const flush = () => {
  const batch = outbox;
  if (batch.length === 0) return;
  outbox = [];
  port.postMessage(batch.length === 1 ? batch[0] : batch);
};
const post = (message: FromIsolate) => {
  if (outbox.push(message) === 1 && message.t !== 'fatal') realSetImmediate(flush);
  if (message.t === 'fatal') flush();
};

tick[PULSE_TICK] = Date.now();
lowerThreadPriority(data.nice);
realSetInterval(() => {
  tick[PULSE_TICK] = Date.now();
}, PULSE_INTERVAL_MS);

/**
 * setpriority() on this thread's id: on Linux, a nice value applies to the one thread. Elsewhere:
 * left as is.
 */
function lowerThreadPriority(nice: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not Linux, or not permitted: the isolate runs at the process's priority
  }
}

function enter(handle: number): void {
  entered[PULSE_RUN] = handle;
}

/** Fails run `handle` for good from inside the isolate; its later calls are refused. */
function fatal(handle: number, error: unknown): void {
  const run = runs.get(handle);
  if (run === undefined || run.dropped) return;
  run.dropped = true;
  runs.delete(handle);
  post({ t: 'fatal', run: handle, error: thrown(error, 'agent_crashed') });
}

// process.exit() from agent code ends its run, not the isolate. Thrown so that the code after it
// does not run.
const realExit = process.exit.bind(process);
process.exit = ((code?: number | string | null) => {
  const handle = current.getStore();
  if (handle === undefined || !runs.has(handle)) return realExit(code ?? undefined);
  fatal(
    handle,
    new KeelError('agent_crashed', `agent code called process.exit(${code ?? ''})`, {
      details: { exitCode: code ?? null },
    }),
  );
  throw new KeelError('agent_crashed', 'process.exit() called by agent code: the run was ended');
}) as typeof process.exit;

// Timer callbacks run in the async context that scheduled them: a throw there is the scheduling
// run's fault.
function guarded<F>(original: F): F {
  const schedule = original as unknown as (...args: unknown[]) => unknown;
  const wrapper = (callback: unknown, ...rest: unknown[]) => {
    if (typeof callback !== 'function') return schedule(callback, ...rest);
    const wrapped = function (this: unknown, ...args: unknown[]) {
      const handle = current.getStore();
      if (handle !== undefined) enter(handle);
      try {
        return (callback as (...a: unknown[]) => unknown).apply(this, args);
      } catch (error) {
        if (handle === undefined) throw error;
        // A run that has already left this isolate (parked, ended) cannot be failed here; its throw
        // is dropped.
        fatal(
          handle,
          new KeelError(
            'agent_crashed',
            `agent code threw from a callback: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
        return undefined;
      }
    };
    return schedule(wrapped, ...rest);
  };
  return wrapper as unknown as F;
}
globalThis.setTimeout = Object.assign(guarded(globalThis.setTimeout), {
  __promisify__: globalThis.setTimeout.__promisify__,
});
globalThis.setInterval = guarded(globalThis.setInterval);
globalThis.setImmediate = Object.assign(guarded(globalThis.setImmediate), {
  __promisify__: globalThis.setImmediate.__promisify__,
});

// Whatever still escapes (a callback scheduled some other way) is pinned on the run whose code was
// last entered.
process.on('uncaughtException', (error) => {
  const handle = entered[PULSE_RUN]!;
  if (runs.has(handle))
    fatal(
      handle,
      new KeelError(
        'agent_crashed',
        `uncaught exception in agent code: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
});
// A rejected promise nobody awaited is the agent's own business; it must not end the isolate.
process.on('unhandledRejection', () => {});

// A module that fails to load has no run to pin the failure on, so the uncaughtException handler
// above would swallow it and leave the host waiting for `ready` forever: report it and end.
const loaded = await loadAgentsModule(data.agentsFile).catch((error: unknown) => {
  port.postMessage({
    t: 'load-failed',
    message: error instanceof Error ? error.message : String(error),
  } satisfies FromIsolate);
  return realExit(1);
});
const registry = new AgentRegistry();
for (const agent of loaded.agents) registry.register(agent);
const models = new Set(data.models);

/**
 * After the microtasks of a turn ran: tell the main thread the run's code now waits (in the batch
 * that carries the turn's calls).
 */
const idle = (handle: number) => realSetImmediate(() => post({ t: 'idle', run: handle }));

function start(message: Extract<ToIsolate, { t: 'start' }>): void {
  const run = new IsolatedRun(message, post);
  runs.set(message.run, run);
  const at = message.agent.lastIndexOf('@');
  const agent = registry.get(message.agent.slice(0, at), message.agent.slice(at + 1));
  current.run(message.run, () => {
    enter(message.run);
    const finished = (outcome: FromIsolate & { t: 'done' }) => {
      if (runs.get(message.run) !== run || run.dropped) return;
      runs.delete(message.run);
      post(outcome);
    };
    const result =
      agent === undefined
        ? Promise.reject(
            new KeelError(
              'agent_version_unavailable',
              `agent ${message.agent} is not in this isolate's module`,
            ),
          )
        : Promise.resolve().then(() =>
            agent.run(
              run.context(registry, models) as never,
              parseAgentInput(agent, message.input) as never,
            ),
          );
    // The agent's first turn runs in the microtasks after this: the idle below comes after it.
    result.then(
      (value) =>
        finished({ t: 'done', run: message.run, outcome: { ok: true, value: toJson(value) } }),
      (error: unknown) =>
        finished({
          t: 'done',
          run: message.run,
          outcome: { ok: false, error: thrown(error, 'agent_error') },
        }),
    );
  });
  idle(message.run);
}

async function attempt(message: Extract<ToIsolate, { t: 'attempt' }>): Promise<void> {
  const run = runs.get(message.run);
  if (run === undefined) return;
  const fn = await run.stepAt(message.seq);
  await current.run(message.run, async () => {
    enter(message.run);
    try {
      const value = toJson(await fn());
      post({
        t: 'attempted',
        run: message.run,
        attempt: message.attempt,
        outcome: { ok: true, value },
      });
    } catch (error) {
      post({
        t: 'attempted',
        run: message.run,
        attempt: message.attempt,
        outcome: { ok: false, error: thrown(error, 'step_failed') },
      });
    }
  });
}

port.on('message', (message: ToIsolate | ToIsolate[]) => {
  if (Array.isArray(message)) receiveEach(message, 0);
  else receive(message);
});

/**
 * A batch from the main thread, one message per event-loop turn: the microtasks a start, reply or
 * attempt sets off (a run's agent code) finish before the next run is entered, so the pulse names
 * the run whose code holds the isolate and its idle follows its own turn, as with one message each.
 */
function receiveEach(batch: ToIsolate[], from: number): void {
  receive(batch[from]!);
  if (from + 1 < batch.length) realSetImmediate(() => receiveEach(batch, from + 1));
}

function receive(message: ToIsolate): void {
  switch (message.t) {
    case 'start':
      start(message);
      return;
    case 'reply': {
      const run = runs.get(message.run);
      if (run !== undefined) {
        enter(message.run);
        run.settle(message.call, message.outcome);
      }
      idle(message.run);
      return;
    }
    case 'attempt':
      void attempt(message);
      return;
    case 'drop': {
      const run = runs.get(message.run);
      if (run !== undefined) run.dropped = true;
      runs.delete(message.run);
      return;
    }
  }
}
post({ t: 'ready' });
