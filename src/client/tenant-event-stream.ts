// The tenant's events, many runs on one connection (GET /v1/events), as an async iterator over
// SSE. A dropped connection is resumed with Last-Event-ID = the last cursor the server gave (its
// first `id:` names where the stream starts, so even a stream cut before any event resumes in
// place), after a bounded, jittered backoff: no event is lost or repeated. Browser-safe.
import { KeelStreamError } from './errors.ts';
import type { HttpTransport } from './http-transport.ts';
import type { EventsOptions } from './keel-runs.ts';
import {
  reconnectDelayMs,
  sseConnection,
  sseMessages,
  STREAM_MAX_RECONNECTS,
} from './run-event-stream.ts';
import { sleep } from './sleep.ts';
import type { TenantEvent, TenantEventFilter } from './types.ts';

/** Run ids one stream may filter on (the server's bound). */
export const FOLLOW_RUN_IDS_MAX = 100;

export interface TenantStreamOptions
  extends Pick<EventsOptions, 'signal' | 'onConnect' | 'maxReconnects'> {
  /** Resume after this cursor (a TenantEvent's `cursor`). */
  after?: string;
  /** Without `after`: from the first stored event, or only events written from now on. */
  from?: 'start' | 'now';
  /** Called before each reconnection after a dropped connection. */
  onReconnect?: (info: { attempt: number; delayMs: number; cursor: string | undefined }) => void;
}

const CURSOR = /^(\d+)\.(\d+)$/;

/** Whether cursor `a` comes after `b` (both `tx.pos`). */
function isAfter(a: string, b: string | undefined): boolean {
  if (b === undefined) return true;
  const x = CURSOR.exec(a);
  const y = CURSOR.exec(b);
  if (x === null || y === null) return true;
  const [tx, ty] = [BigInt(x[1]!), BigInt(y[1]!)];
  return tx > ty || (tx === ty && BigInt(x[2]!) > BigInt(y[2]!));
}

export function tenantEventsQuery(filter: TenantEventFilter): Record<string, string | undefined> {
  return {
    runIds: filter.runIds?.join(','),
    agent: filter.agent,
    types: filter.types?.join(','),
    parentRunId: filter.parentRunId,
  };
}

/** Yields one connection's new events; returns the error that cut it, or undefined. */
async function* readConnection(
  body: ReadableStream<Uint8Array>,
  state: { cursor: string | undefined; received: number },
  idle: () => void,
): AsyncGenerator<TenantEvent, unknown, undefined> {
  const messages = sseMessages(body, idle);
  try {
    for (;;) {
      const next = await messages.next();
      if (next.done) return next.value;
      const message = next.value;
      if (message.id === undefined || !CURSOR.test(message.id)) continue;
      if (!isAfter(message.id, state.cursor)) continue; // a resumed stream never repeats
      state.cursor = message.id;
      if (message.data === '') continue; // the stream's starting place, no event
      let event: TenantEvent;
      try {
        event = JSON.parse(message.data) as TenantEvent;
      } catch {
        continue;
      }
      state.received += 1;
      yield event;
    }
  } finally {
    await messages.return(undefined);
  }
}

/**
 * The tenant's events matching `filter`, across reconnections, until `options.signal` aborts (or
 * the consumer stops).
 *
 * @example
 * for await (const e of streamTenantEvents(http, { types: ['run.failed'] })) alert(e.runId);
 */
export async function* streamTenantEvents(
  http: HttpTransport,
  filter: TenantEventFilter = {},
  options: TenantStreamOptions = {},
): AsyncGenerator<TenantEvent, void, undefined> {
  const state = { cursor: options.after, received: 0 };
  const maxReconnects = options.maxReconnects ?? STREAM_MAX_RECONNECTS;
  let failures = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    state.received = 0;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (state.cursor !== undefined) headers['last-event-id'] = state.cursor;
    const query = {
      ...tenantEventsQuery(filter),
      from: state.cursor === undefined ? options.from : undefined,
    };
    const cut = yield* sseConnection(
      http,
      '/v1/events',
      { headers, query },
      options,
      (body, idle) => readConnection(body, state, idle),
    );
    options.signal?.throwIfAborted();
    failures = state.received > 0 ? 1 : failures + 1;
    if (failures > maxReconnects) throw new KeelStreamError(maxReconnects, 0, cut);
    const delayMs = reconnectDelayMs(failures);
    options.onReconnect?.({ attempt: failures, delayMs, cursor: state.cursor });
    if (delayMs > 0) await sleep(delayMs, options.signal);
  }
}
