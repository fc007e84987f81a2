// A run's events as an async iterator over SSE (fetch + eventsource-parser; EventSource cannot send
// the Authorization header). A dropped connection is resumed with Last-Event-ID = the last run
// event delivered, after a bounded, jittered backoff, so no event is lost or repeated; the iterator
// ends after the run's terminal event. Ephemeral model deltas (no `id:`) go to a callback and never
// move the cursor. Browser-safe: no Node modules.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { backoffDelayMs } from '../domain/backoff.ts';
import { isTransientError, KeelStreamError } from './errors.ts';
import type { HttpTransport } from './http-transport.ts';
import { sleep } from './sleep.ts';
import type { EventsOptions } from './keel-runs.ts';
import {
  isTerminalStatus,
  type ModelDelta,
  type ToolOutput,
  type Run,
  type RunEvent,
  TERMINAL_EVENT_TYPES,
} from './types.ts';

/** Consecutive failed connections tolerated before the iterator throws KeelStreamError. */
export const STREAM_MAX_RECONNECTS = 8;
/** The second consecutive retry waits about this long; later ones double it, up to the max. */
export const STREAM_RETRY_BASE_DELAY_MS = 250;
export const STREAM_RETRY_MAX_DELAY_MS = 10_000;
/**
 * A connection silent for this long is presumed dead and replaced (the server writes a keep-alive
 * comment every 15 s, so a live one never is).
 */
export const STREAM_IDLE_TIMEOUT_MS = 45_000;

/** Delay before the `attempt`-th consecutive reconnection: immediate, then doubling, jittered. */
export function reconnectDelayMs(attempt: number): number {
  if (attempt <= 1) return 0;
  return backoffDelayMs(
    {
      initialDelayMs: STREAM_RETRY_BASE_DELAY_MS,
      maxDelayMs: STREAM_RETRY_MAX_DELAY_MS,
      multiplier: 2,
      jitter: 'equal',
    },
    attempt - 1,
  );
}

/** What one SSE message of a run's stream is. */
export type StreamMessage =
  | { kind: 'event'; event: RunEvent }
  | { kind: 'delta'; delta: ModelDelta }
  | { kind: 'output'; output: ToolOutput }
  | { kind: 'ignored' };

/**
 * Tells the two kinds of message apart by their SSE fields, never by their data: a run event
 * carries a numeric `id:` equal to its data's `seq` (the resume cursor); a model delta carries no
 * `id:` (its `seq` is a journal position, not an event number: taken for an event, it would resume
 * the stream at a wrong place). Anything else — a kind this client does not know yet — is ignored
 * rather than allowed to break the reader.
 */
export function classifyStreamMessage(message: {
  id?: string | undefined;
  event?: string | undefined;
  data: string;
}): StreamMessage {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return { kind: 'ignored' };
  }
  if (typeof data !== 'object' || data === null) return { kind: 'ignored' };
  const d = data as Record<string, unknown>;
  if (message.event === 'model.delta') {
    if (message.id !== undefined) return { kind: 'ignored' };
    if (typeof d.seq !== 'number' || typeof d.text !== 'string') return { kind: 'ignored' };
    return {
      kind: 'delta',
      delta: {
        seq: d.seq,
        model: typeof d.model === 'string' ? d.model : '',
        attempt: typeof d.attempt === 'number' ? d.attempt : 1,
        index: typeof d.index === 'number' ? d.index : 0,
        text: d.text,
      },
    };
  }
  if (message.event === 'tool.output') {
    if (message.id !== undefined) return { kind: 'ignored' };
    if (
      typeof d.seq !== 'number' ||
      typeof d.text !== 'string' ||
      (d.stream !== 'stdout' && d.stream !== 'stderr')
    )
      return { kind: 'ignored' };
    return {
      kind: 'output',
      output: {
        seq: d.seq,
        executionId: typeof d.executionId === 'string' ? d.executionId : '',
        tool: typeof d.tool === 'string' ? d.tool : '',
        attempt: typeof d.attempt === 'number' ? d.attempt : 1,
        stream: d.stream,
        text: d.text,
      },
    };
  }
  if (message.id === undefined || !/^\d+$/.test(message.id)) return { kind: 'ignored' };
  if (typeof d.type !== 'string' || d.seq !== Number(message.id)) return { kind: 'ignored' };
  return { kind: 'event', event: data as RunEvent };
}

interface Progress {
  lastSeq: number;
  received: number;
  ended: boolean;
}

/**
 * Yields one SSE connection's messages as they are parsed; returns the error that cut the
 * connection (reset, truncated chunk, idle abort), or undefined when the server ended it. `idle`
 * is called on every chunk (it re-arms the idle timer). Stopping early releases the socket.
 */
export async function* sseMessages(
  body: ReadableStream<Uint8Array>,
  idle: () => void,
): AsyncGenerator<EventSourceMessage, unknown, undefined> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push(message) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        return error;
      }
      idle();
      if (chunk.done) return undefined;
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      yield* pending.splice(0);
    }
  } finally {
    // Stopping early must release the socket, not leave it to the server.
    reader.cancel().catch(() => undefined);
  }
}

/** Yields one connection's new run events; returns the error that cut it, or undefined. */
async function* readConnection(
  body: ReadableStream<Uint8Array>,
  progress: Progress,
  options: EventsOptions,
  idle: () => void,
): AsyncGenerator<RunEvent, unknown, undefined> {
  const messages = sseMessages(body, idle);
  try {
    for (;;) {
      const next = await messages.next();
      if (next.done) return next.value;
      const classified = classifyStreamMessage(next.value);
      if (classified.kind === 'delta') options.onModelDelta?.(classified.delta);
      if (classified.kind === 'output') options.onToolOutput?.(classified.output);
      if (classified.kind !== 'event') continue;
      const event = classified.event;
      if (event.seq <= progress.lastSeq) continue; // a resumed stream never repeats an event
      progress.lastSeq = event.seq;
      progress.received += 1;
      yield event;
      if (TERMINAL_EVENT_TYPES.has(event.type)) {
        progress.ended = true;
        return undefined;
      }
    }
  } finally {
    await messages.return(undefined);
  }
}

/**
 * The run's events after `options.after`, across reconnections, until its terminal event.
 *
 * @example
 * for await (const event of followRunEvents(http, runId, { after: 0 })) console.log(event.type);
 */
export async function* followRunEvents(
  http: HttpTransport,
  runId: string,
  options: EventsOptions = {},
): AsyncGenerator<RunEvent, void, undefined> {
  const path = `/v1/runs/${encodeURIComponent(runId)}/events`;
  const progress: Progress = { lastSeq: options.after ?? 0, received: 0, ended: false };
  const maxReconnects = options.maxReconnects ?? STREAM_MAX_RECONNECTS;
  let failures = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    progress.received = 0;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (progress.lastSeq > 0) headers['last-event-id'] = String(progress.lastSeq);
    const cut = yield* sseConnection(http, path, { headers }, options, (body, idle) =>
      readConnection(body, progress, options, idle),
    );
    options.signal?.throwIfAborted();
    if (progress.ended) return;
    // A clean end that delivered nothing: the run may be over with nothing left after our cursor.
    if (
      cut === undefined &&
      progress.received === 0 &&
      (yield* drainIfEnded(http, runId, progress))
    )
      return;
    failures = progress.received > 0 ? 1 : failures + 1;
    if (failures > maxReconnects) throw new KeelStreamError(maxReconnects, progress.lastSeq, cut);
    const delayMs = reconnectDelayMs(failures);
    options.onReconnect?.({
      attempt: failures,
      maxAttempts: maxReconnects,
      delayMs,
      lastSeq: progress.lastSeq,
      error: cut,
    });
    if (delayMs > 0) await sleep(delayMs, options.signal);
  }
}

/**
 * One connection of a followed SSE stream: opens `path`, hands its body to `read` with an idle
 * timer to re-arm on every message (a silent stream is cut after STREAM_IDLE_TIMEOUT_MS), and
 * returns why it ended (undefined for a clean end). A transient failure to connect is returned as
 * the cut, anything else is thrown; the caller's signal aborts the connection.
 */
export async function* sseConnection<T>(
  http: HttpTransport,
  path: string,
  request: { headers: Record<string, string>; query?: Record<string, string | undefined> },
  options: { signal?: AbortSignal | undefined; onConnect?: (() => void) | undefined },
  read: (
    body: ReadableStream<Uint8Array>,
    idle: () => void,
  ) => AsyncGenerator<T, unknown, undefined>,
): AsyncGenerator<T, unknown, undefined> {
  const connection = new AbortController();
  const onAbort = (): void => connection.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const idle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(
      () => connection.abort(new Error('the stream went silent')),
      STREAM_IDLE_TIMEOUT_MS,
    );
  };
  try {
    let body: ReadableStream<Uint8Array>;
    try {
      body = await http.stream(path, { ...request, signal: connection.signal });
    } catch (error) {
      if (options.signal?.aborted || !isTransientError(error)) throw error;
      return error;
    }
    options.onConnect?.();
    idle();
    return yield* read(body, idle);
  } finally {
    clearTimeout(idleTimer);
    options.signal?.removeEventListener('abort', onAbort);
    connection.abort();
  }
}

/**
 * If the run has ended, yields the events stored after the cursor (a stream cut by a server
 * shutting down may not have sent them) and says so; a transient failure says "not known: retry".
 */
async function* drainIfEnded(
  http: HttpTransport,
  runId: string,
  progress: Progress,
): AsyncGenerator<RunEvent, boolean, undefined> {
  const id = encodeURIComponent(runId);
  try {
    const run = await http.json<Run>('GET', `/v1/runs/${id}`);
    if (!isTerminalStatus(run.status)) return false;
    const rest = await http.json<RunEvent[]>('GET', `/v1/runs/${id}/events`, {
      query: { format: 'json', after: progress.lastSeq },
    });
    for (const event of rest) {
      if (event.seq <= progress.lastSeq) continue;
      progress.lastSeq = event.seq;
      yield event;
    }
    return true;
  } catch (error) {
    if (isTransientError(error)) return false;
    throw error;
  }
}
