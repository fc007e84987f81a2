// Server-sent events over fetch: parses `text/event-stream` frames (WHATWG rules) into { id, event,
// data } and, when a connection drops, reconnects with `Last-Event-ID` under bounded, backed-off
// retries. It never interprets event data, never retries a non-transient error (a 4xx), and never
// retries without bound: too many consecutive failed connections end the read with
// SseRetriesExhaustedError.
import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelayMs } from '../../domain/backoff.ts';
import { isTransientError } from './http-client.ts';

/** Consecutive failed connections tolerated before giving up. */
export const SSE_MAX_RETRIES = 6;
/**
 * The second consecutive retry waits this long; later ones double it (the first retry is
 * immediate).
 */
export const SSE_RETRY_BASE_DELAY_MS = 250;
export const SSE_RETRY_MAX_DELAY_MS = 5_000;
/**
 * A connection that stayed up this long counts as healthy even if it carried no event (a long human
 * wait).
 */
export const SSE_HEALTHY_CONNECTION_MS = 30_000;
/**
 * One event's buffered text may not exceed this; a larger one is a protocol error, not a memory
 * leak.
 */
export const SSE_MAX_EVENT_CHARS = 16 * 1024 * 1024;

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

export class SseProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SseProtocolError';
  }
}

export class SseRetriesExhaustedError extends Error {
  readonly lastEventId: string | undefined;

  constructor(attempts: number, lastEventId: string | undefined, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : 'the stream ended';
    super(
      `event stream lost after ${attempts} reconnection attempts (last event id ${lastEventId ?? 'none'}): ${reason}`,
      { cause },
    );
    this.name = 'SseRetriesExhaustedError';
    this.lastEventId = lastEventId;
  }
}

/** Incremental `text/event-stream` parser: feed decoded text, get complete messages. */
export class SseParser {
  #buffer = '';
  #started = false;
  #data: string[] = [];
  #dataChars = 0;
  #event = '';
  #idBuffer: string | undefined;
  #lastEventId: string | undefined;

  /** `lastEventId` carries over from an earlier connection, as an EventSource's does. */
  constructor(lastEventId?: string) {
    this.#idBuffer = lastEventId;
    this.#lastEventId = lastEventId;
  }

  /**
   * The id in force after the last dispatched event: what a reconnection must send as
   * Last-Event-ID.
   */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  push(text: string): SseMessage[] {
    let buffer = this.#buffer + text;
    if (!this.#started && buffer.length > 0) {
      this.#started = true;
      if (buffer.startsWith('\uFEFF')) buffer = buffer.slice(1);
    }
    const messages: SseMessage[] = [];
    let start = 0;
    for (;;) {
      const cr = buffer.indexOf('\r', start);
      const lf = buffer.indexOf('\n', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      // A trailing '\r' may be the first half of '\r\n' split across chunks: wait for the next
      // chunk.
      if (end === -1 || (end === cr && end === buffer.length - 1)) break;
      const message = this.#line(buffer.slice(start, end));
      if (message !== undefined) messages.push(message);
      start = end + (buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1);
    }
    this.#buffer = buffer.slice(start);
    if (this.#buffer.length + this.#dataChars > SSE_MAX_EVENT_CHARS) {
      throw new SseProtocolError(`an event exceeds ${SSE_MAX_EVENT_CHARS} characters`);
    }
    return messages;
  }

  /**
   * The stream ended: a pending '\r' completes its line; an event without its blank line is
   * discarded.
   */
  end(): SseMessage[] {
    const messages = this.#buffer.endsWith('\r') ? this.push('\n') : [];
    this.#buffer = '';
    this.#data = [];
    this.#dataChars = 0;
    this.#event = '';
    return messages;
  }

  #line(line: string): SseMessage | undefined {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return undefined; // a comment, typically a keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const raw = colon === -1 ? '' : line.slice(colon + 1);
    const value = raw.startsWith(' ') ? raw.slice(1) : raw;
    if (field === 'data') {
      this.#data.push(value);
      this.#dataChars += value.length + 1;
    } else if (field === 'event') {
      this.#event = value;
    } else if (field === 'id' && !value.includes('\0')) {
      this.#idBuffer = value;
    }
    // 'retry' and unknown fields are ignored: the reconnection policy is ours, and bounded.
    return undefined;
  }

  #dispatch(): SseMessage | undefined {
    this.#lastEventId = this.#idBuffer;
    const data = this.#data;
    const event = this.#event === '' ? 'message' : this.#event;
    this.#data = [];
    this.#dataChars = 0;
    this.#event = '';
    if (data.length === 0) return undefined;
    return { id: this.#lastEventId, event, data: data.join('\n') };
  }
}

export interface SseReconnect {
  /** 1-based count of consecutive failed connections, at most `maxRetries`. */
  attempt: number;
  maxRetries: number;
  delayMs: number;
  lastEventId: string | undefined;
  /**
   * Why the previous connection ended: an error, or undefined for a clean end the caller chose to
   * resume.
   */
  error: unknown;
}

export interface ReadSseOptions {
  /**
   * Opens one connection, resuming after `lastEventId`; errors are classified by
   * `isTransientError`.
   */
  connect: (
    lastEventId: string | undefined,
    signal: AbortSignal,
  ) => Promise<ReadableStream<Uint8Array>>;
  lastEventId?: string;
  /**
   * Asked when a connection ends cleanly; `true` reconnects. Without it a clean end finishes the
   * read.
   */
  resumeAfterEnd?: (info: {
    received: number;
    lastEventId: string | undefined;
  }) => Promise<boolean> | boolean;
  onReconnect?: (info: SseReconnect) => void;
  signal?: AbortSignal;
  maxRetries?: number;
  retryBaseDelayMs?: number;
}

/**
 * Delay before the `attempt`-th consecutive retry: immediate, then doubling from the base, with
 * jitter.
 */
export function retryDelayMs(attempt: number, baseMs = SSE_RETRY_BASE_DELAY_MS): number {
  if (attempt <= 1) return 0;
  return backoffDelayMs(
    { initialDelayMs: baseMs, maxDelayMs: SSE_RETRY_MAX_DELAY_MS, multiplier: 2, jitter: 'equal' },
    attempt - 1,
  );
}

interface ConnectionProgress {
  received: number;
  lastEventId: string | undefined;
}

/**
 * Yields one connection's messages; returns `{ error }` if it dropped, `undefined` if it ended
 * cleanly.
 */
async function* readConnection(
  body: ReadableStream<Uint8Array>,
  progress: ConnectionProgress,
): AsyncGenerator<SseMessage, { error: unknown } | undefined, undefined> {
  const parser = new SseParser(progress.lastEventId);
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        return { error }; // reset, truncated chunk, body timeout: the connection dropped
      }
      const messages = chunk.done
        ? [...parser.push(decoder.decode()), ...parser.end()]
        : parser.push(decoder.decode(chunk.value, { stream: true }));
      for (const message of messages) {
        progress.received += 1;
        progress.lastEventId = message.id;
        yield message;
      }
      progress.lastEventId = parser.lastEventId;
      if (chunk.done) return undefined;
    }
  } finally {
    // Stopping early (the caller saw what it wanted) must release the socket, not leave it to the
    // server.
    reader.cancel().catch(() => undefined);
  }
}

async function connectOnce(
  options: ReadSseOptions,
  lastEventId: string | undefined,
  signal: AbortSignal,
): Promise<{ body?: ReadableStream<Uint8Array>; error?: unknown }> {
  try {
    return { body: await options.connect(lastEventId, signal) };
  } catch (error) {
    if (options.signal?.aborted || !isTransientError(error)) throw error;
    return { error };
  }
}

/**
 * Reads an event stream across reconnections: each message is yielded once per delivery, in order,
 * and a reconnection resumes after the last id seen. Breaking out of the loop closes the
 * connection.
 *
 * @example
 * for await (const message of readSse({ connect: (id, signal) => client.openEventStream(runId, id, signal) })) {
 *   console.log(message.id, message.event, JSON.parse(message.data));
 * }
 */
export async function* readSse(
  options: ReadSseOptions,
): AsyncGenerator<SseMessage, void, undefined> {
  const maxRetries = options.maxRetries ?? SSE_MAX_RETRIES;
  const progress: ConnectionProgress = { received: 0, lastEventId: options.lastEventId };
  let failures = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const connection = new AbortController();
    const abort = (): void => connection.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', abort, { once: true });
    const startedAt = Date.now();
    progress.received = 0;
    let outcome: { error: unknown } | undefined;
    try {
      const opened = await connectOnce(options, progress.lastEventId, connection.signal);
      outcome =
        opened.body === undefined
          ? { error: opened.error }
          : yield* readConnection(opened.body, progress);
    } finally {
      options.signal?.removeEventListener('abort', abort);
      connection.abort();
    }
    options.signal?.throwIfAborted();
    const snapshot = { received: progress.received, lastEventId: progress.lastEventId };
    if (outcome === undefined && !(await options.resumeAfterEnd?.(snapshot))) return;
    const healthy = progress.received > 0 || Date.now() - startedAt >= SSE_HEALTHY_CONNECTION_MS;
    failures = healthy ? 1 : failures + 1;
    if (failures > maxRetries)
      throw new SseRetriesExhaustedError(maxRetries, progress.lastEventId, outcome?.error);
    const delayMs = retryDelayMs(failures, options.retryBaseDelayMs);
    options.onReconnect?.({
      attempt: failures,
      maxRetries,
      delayMs,
      lastEventId: progress.lastEventId,
      error: outcome?.error,
    });
    if (delayMs > 0) await delay(delayMs, undefined, { signal: options.signal });
  }
}
