// A run's event stream over fetch, not EventSource: EventSource cannot send the Authorization
// header, and putting the API key in the URL would leak it into logs. The stream resumes after a
// dropped connection with Last-Event-ID, so no event is lost or repeated; it ends after the
// terminal event.
//
// Two kinds of message share the stream, told apart by their SSE fields, never by their data:
// run events (stored, gapless; `id:` = their sequence number) and ephemeral `model.delta` token
// deltas (no `id:`, not stored, their `data.seq` is the *journal position* of the streaming model
// call, not an event number). Only a run event's `id:` moves the resume cursor: a delta taken for
// a run event crashed the run page and would have resumed the stream at a wrong event.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { authHeaders, signOut, type RunEvent } from './api.ts';

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;
const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'run.succeeded',
  'run.failed',
  'run.cancelled',
]);

/** A piece of a model answer as it streams (ephemeral: the committed step replaces it). */
export interface ModelDelta {
  /** Journal position of the model call. */
  seq: number;
  model: string;
  /** The provider attempt: a retried or fallen-back call streams again from its start. */
  attempt: number;
  /** The delta's index within its attempt, from 0. */
  index: number;
  text: string;
}

export type StreamMessage =
  | { kind: 'event'; event: RunEvent }
  | { kind: 'delta'; delta: ModelDelta }
  | { kind: 'ignored' };

/**
 * What one SSE message is. A run event must carry a numeric `id:` equal to its data's `seq`;
 * anything else that is not a well-formed delta (a message type this dashboard does not know yet)
 * is ignored rather than allowed to break the page.
 */
export function classifyMessage(message: EventSourceMessage): StreamMessage {
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
  if (message.id === undefined || !/^\d+$/.test(message.id)) return { kind: 'ignored' };
  if (typeof d.type !== 'string' || d.seq !== Number(message.id)) return { kind: 'ignored' };
  return { kind: 'event', event: data as RunEvent };
}

export interface StreamHandlers {
  onEvent(event: RunEvent): void;
  onDelta?(delta: ModelDelta): void;
  onState?(state: 'connecting' | 'live' | 'ended' | 'retrying'): void;
}

/** Streams events after `afterSeq` until the run ends or `signal` aborts. */
export async function streamRunEvents(
  runId: string,
  afterSeq: number,
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<void> {
  /** The resume cursor: the sequence number of the last *run event* received. */
  let lastSeq = afterSeq;
  let delay = RECONNECT_MIN_MS;
  while (!signal.aborted) {
    handlers.onState?.('connecting');
    let ended = false;
    try {
      const response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/events`, {
        headers: {
          ...authHeaders(),
          accept: 'text/event-stream',
          ...(lastSeq > 0 ? { 'last-event-id': String(lastSeq) } : {}),
        },
        signal,
      });
      if (response.status === 401) return signOut();
      if (response.status === 404) return handlers.onState?.('ended');
      if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`);
      handlers.onState?.('live');
      delay = RECONNECT_MIN_MS;
      const parser = createParser({
        onEvent: (raw) => {
          const message = classifyMessage(raw);
          if (message.kind === 'delta') handlers.onDelta?.(message.delta);
          if (message.kind !== 'event') return;
          // A resumed stream never repeats an event; a duplicate would be a server bug, not a
          // reason to move the cursor back.
          if (message.event.seq <= lastSeq) return;
          lastSeq = message.event.seq;
          if (TERMINAL_EVENTS.has(message.event.type)) ended = true;
          handlers.onEvent(message.event);
        },
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
      // The server closes the stream after the terminal event, or when it shuts down: then
      // reconnect and resume.
    } catch (error) {
      if (signal.aborted) return;
      void error;
    }
    if (ended) {
      handlers.onState?.('ended');
      return;
    }
    handlers.onState?.('retrying');
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  }
}
