// The client an application holds: one HTTP transport, and the run and schedule operations over
// it. Construct it once per Keel address and key; it keeps no state beyond them.
import { HttpTransport, type HttpOptions } from './http-transport.ts';
import { HttpRuns } from './http-runs.ts';
import type { KeelRuns } from './keel-runs.ts';
import { HttpSchedules, type KeelSchedules } from './keel-schedules.ts';
import { streamTenantEvents, type TenantStreamOptions } from './tenant-event-stream.ts';
import type { TenantEvent, TenantEventFilter } from './types.ts';

/** The tenant's events, every run on one stream (GET /v1/events). */
export interface KeelEvents {
  /**
   * The tenant's events matching `filter` (default: from now on; `from: 'start'` or `after` to
   * replay), for as long as it is read; resumed across dropped connections with nothing lost or
   * repeated.
   */
  stream(filter?: TenantEventFilter, options?: TenantStreamOptions): AsyncIterable<TenantEvent>;
}

export type KeelClientOptions = HttpOptions;

export interface KeelClient {
  readonly runs: KeelRuns;
  readonly schedules: KeelSchedules;
  readonly events: KeelEvents;
  /**
   * The underlying transport, for routes the typed operations do not cover yet.
   * @internal
   */
  readonly http: HttpTransport;
}

/**
 * A client of the Keel at `baseUrl`, authenticated with a tenant API key.
 *
 * @example
 * import { createKeelClient } from 'keel/client';
 * const keel = createKeelClient({ baseUrl: 'http://127.0.0.1:7070', apiKey: process.env.KEEL_API_KEY! });
 * const run = await keel.runs.create({ agent: 'summarize', input: { url }, idempotencyKey: jobId });
 * const done = await keel.runs.wait(run.id, { timeoutMs: 120_000 });
 */
export function createKeelClient(options: KeelClientOptions): KeelClient {
  const http = new HttpTransport(options);
  return {
    runs: new HttpRuns(http),
    schedules: new HttpSchedules(http),
    events: { stream: (filter, streamOptions) => streamTenantEvents(http, filter, streamOptions) },
    http,
  };
}
