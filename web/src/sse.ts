// A run's event stream over fetch, not EventSource: EventSource cannot send the Authorization
// header, and putting the API key in the URL would leak it into logs. The stream resumes after a
// dropped connection with Last-Event-ID (the last sequence number seen), so no event is lost or
// repeated; it ends after the terminal event.
import { createParser } from 'eventsource-parser';
import { authHeaders, signOut, type RunEvent } from './api.ts';

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;

export interface StreamHandlers {
  onEvent(event: RunEvent): void;
  onState?(state: 'connecting' | 'live' | 'ended' | 'retrying'): void;
}

/** Streams events after `afterSeq` until the run ends or `signal` aborts. */
export async function streamRunEvents(
  runId: string,
  afterSeq: number,
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<void> {
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
        onEvent: (message) => {
          const event = JSON.parse(message.data) as RunEvent;
          lastSeq = event.seq;
          if (
            event.type === 'run.succeeded' ||
            event.type === 'run.failed' ||
            event.type === 'run.cancelled'
          )
            ended = true;
          handlers.onEvent(event);
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
