// Test helper: follows a run's SSE stream over real HTTP and collects every event (durable ones
// with `id:`, ephemeral ones without) until the stream ends. Parsing by hand: the format is a few
// lines and tests check it.
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: any;
}

export interface SseFollower {
  events: SseEvent[];
  /** The raw text received, to check what must never appear in it (keys). */
  raw(): string;
  /** Resolves when the server closes the stream. */
  done: Promise<void>;
  /** Resolves once the response headers arrived (the subscription is live). */
  connected: Promise<void>;
  close(): void;
}

export function followEvents(url: string, runId: string, apiKey: string): SseFollower {
  const controller = new AbortController();
  const events: SseEvent[] = [];
  let text = '';
  let markConnected: () => void = () => {};
  const connected = new Promise<void>((resolve) => (markConnected = resolve));
  const done = (async () => {
    const res = await fetch(`${url}/v1/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: controller.signal,
    });
    markConnected();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const piece = decoder.decode(chunk, { stream: true });
        text += piece;
        buffer += piece;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          if (fields.has('data'))
            events.push({
              id: fields.get('id'),
              event: fields.get('event') ?? 'message',
              data: JSON.parse(fields.get('data')!),
            });
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return { events, raw: () => text, done, connected, close: () => controller.abort() };
}
