// follow() and waitMany() written once over any transport's tenant stream (HTTP: GET /v1/events;
// embedded: the store in process): many runs on one stream, never one connection per run. A run
// id the tenant does not own never ends on a stream, so waitMany reads each run first (404 then).
import { KeelWaitTimeoutError } from './errors.ts';
import { FOLLOW_RUN_IDS_MAX } from './tenant-event-stream.ts';
import type { CallOptions, WaitOptions } from './keel-runs.ts';
import {
  isTerminalStatus,
  TERMINAL_EVENT_TYPES,
  type Run,
  type TenantEvent,
  type TenantEventFilter,
} from './types.ts';

/** A transport's tenant stream from the first stored event matching `filter`. */
export type OpenTenantStream = (
  filter: TenantEventFilter,
  signal: AbortSignal | undefined,
) => AsyncIterable<TenantEvent>;

/** Reads held at once while waitMany reads the runs (before and after following them). */
const WAIT_MANY_READS_IN_FLIGHT = 8;

/** The events of `runIds` (at most FOLLOW_RUN_IDS_MAX) on one stream, until each has ended. */
export async function* followRuns(
  open: OpenTenantStream,
  runIds: readonly string[],
  options: CallOptions = {},
): AsyncGenerator<TenantEvent, void, undefined> {
  const left = new Set(runIds);
  if (left.size > FOLLOW_RUN_IDS_MAX)
    throw new RangeError(`follow() takes at most ${FOLLOW_RUN_IDS_MAX} runs; use waitMany()`);
  if (left.size === 0) return;
  for await (const event of open({ runIds: [...left] }, options.signal)) {
    yield event;
    if (TERMINAL_EVENT_TYPES.has(event.type)) {
      left.delete(event.runId);
      if (left.size === 0) return;
    }
  }
  // A stream that ends while runs are left was stopped: by the caller's signal, or a closing runtime.
  options.signal?.throwIfAborted();
}

async function mapBounded<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(WAIT_MANY_READS_IN_FLIGHT, items.length) }, worker),
  );
  return out;
}

/**
 * Waits until every run has ended and returns them, in the order asked: the unfinished ones are
 * followed FOLLOW_RUN_IDS_MAX at a time on one stream. KeelWaitTimeoutError after `timeoutMs`.
 */
export async function waitForRuns(
  open: OpenTenantStream,
  get: (id: string, options: CallOptions) => Promise<Run>,
  runIds: readonly string[],
  options: WaitOptions = {},
): Promise<Run[]> {
  const timeout =
    options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
  const signals = [options.signal, timeout].filter((s) => s !== undefined);
  const signal = signals.length === 0 ? undefined : AbortSignal.any(signals);
  const ids = [...new Set(runIds)];
  const byId = new Map<string, Run>();
  try {
    const first = await mapBounded(ids, (id) => get(id, { ...(signal ? { signal } : {}) }));
    for (const run of first) byId.set(run.id, run);
    const open_ = ids.filter((id) => !isTerminalStatus(byId.get(id)!.status));
    for (let i = 0; i < open_.length; i += FOLLOW_RUN_IDS_MAX) {
      const chunk = open_.slice(i, i + FOLLOW_RUN_IDS_MAX);
      for await (const _ of followRuns(open, chunk, signal ? { signal } : {}));
      for (const run of await mapBounded(chunk, (id) => get(id, signal ? { signal } : {})))
        byId.set(run.id, run);
    }
  } catch (error) {
    if (timeout?.aborted && !options.signal?.aborted) {
      const waiting = ids.find((id) => !isTerminalStatus(byId.get(id)?.status ?? 'queued'));
      throw new KeelWaitTimeoutError(waiting ?? ids[0]!, options.timeoutMs ?? 0);
    }
    throw error;
  }
  return ids.length === runIds.length
    ? ids.map((id) => byId.get(id)!)
    : runIds.map((id) => byId.get(id)!);
}
