// A run's live event stream for the dashboard, through keel/client (src/client/): fetch, not
// EventSource (which cannot send the Authorization header; a key in the URL would leak into logs),
// resumed after a dropped connection with Last-Event-ID so no event is lost or repeated, ended
// after the terminal event. The client tells run events (stored, `id:` = seq) from ephemeral
// `model.delta` token deltas and `tool.output` pieces (no `id:`); only run events move the resume
// cursor.
import {
  classifyStreamMessage,
  KeelApiError,
  type ModelDelta,
  type ToolOutput,
} from '../../src/client/index.ts';
import { keel, signOut, type RunEvent } from './api.ts';

export type { ModelDelta, ToolOutput };
/** How one SSE message is classified (exported for its unit test). */
export const classifyMessage = classifyStreamMessage;

export interface StreamHandlers {
  onEvent(event: RunEvent): void;
  onDelta?(delta: ModelDelta): void;
  onToolOutput?(output: ToolOutput): void;
  onState?(state: 'connecting' | 'live' | 'ended' | 'retrying'): void;
}

/**
 * Streams events after `afterSeq` until the run ends or `signal` aborts; a page stays open as long
 * as the user looks at it, so reconnection never gives up (the client backs off up to 10 s).
 */
export async function streamRunEvents(
  runId: string,
  afterSeq: number,
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<void> {
  handlers.onState?.('connecting');
  try {
    const events = keel.runs.events(runId, {
      after: afterSeq,
      signal,
      maxReconnects: Number.POSITIVE_INFINITY,
      onConnect: () => handlers.onState?.('live'),
      onReconnect: () => handlers.onState?.('retrying'),
      ...(handlers.onDelta ? { onModelDelta: handlers.onDelta } : {}),
      ...(handlers.onToolOutput ? { onToolOutput: handlers.onToolOutput } : {}),
    });
    for await (const event of events) handlers.onEvent(event);
    handlers.onState?.('ended');
  } catch (error) {
    if (signal.aborted) return;
    if (error instanceof KeelApiError && error.status === 401) return signOut();
    // 404: the run is gone (or never was); any other refusal will not change by retrying.
    handlers.onState?.('ended');
  }
}
