// The schedule operations an application performs (create, read, edit, pause, fire, backfill,
// history), as one interface like KeelRuns, and its HTTP implementation over `/v1/schedules`.
// Browser-safe.
import type { HttpTransport } from './http-transport.ts';
import type { CallOptions } from './keel-runs.ts';
import type {
  CreateScheduleRequest,
  Fire,
  FirePage,
  Schedule,
  ScheduleEvent,
  SchedulePage,
  UpdateScheduleRequest,
} from './types.ts';

export interface KeelSchedules {
  create(request: CreateScheduleRequest, options?: CallOptions): Promise<Schedule>;
  get(id: string, options?: CallOptions): Promise<Schedule>;
  list(page?: { limit?: number; cursor?: string }, options?: CallOptions): Promise<SchedulePage>;
  /** An edit: only the fields given change; the schedule's version goes up. */
  update(id: string, edit: UpdateScheduleRequest, options?: CallOptions): Promise<Schedule>;
  /** Deletes the schedule; the runs it created stay. */
  delete(id: string, options?: CallOptions): Promise<void>;
  pause(id: string, options?: CallOptions): Promise<Schedule>;
  resume(id: string, options?: CallOptions): Promise<Schedule>;
  /** Fires now (the overlap policy applies). */
  trigger(id: string, options?: CallOptions): Promise<Fire>;
  /** Requests the fires of a past range (ISO times). */
  backfill(
    id: string,
    range: { from: string; to: string },
    options?: CallOptions,
  ): Promise<{ fireTimes: string[]; requested: string[] }>;
  /** The schedule's fires, newest first. */
  fires(
    id: string,
    page?: { limit?: number; cursor?: string; status?: string },
    options?: CallOptions,
  ): Promise<FirePage>;
  /** What happened to the schedule's fires, in order, after `after`. */
  events(
    id: string,
    page?: { after?: number; limit?: number },
    options?: CallOptions,
  ): Promise<ScheduleEvent[]>;
}

const path = (id: string): string => `/v1/schedules/${encodeURIComponent(id)}`;

export class HttpSchedules implements KeelSchedules {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  create(request: CreateScheduleRequest, options: CallOptions = {}): Promise<Schedule> {
    return this.#http.json('POST', '/v1/schedules', { body: request, signal: options.signal });
  }

  get(id: string, options: CallOptions = {}): Promise<Schedule> {
    return this.#http.json('GET', path(id), { signal: options.signal });
  }

  list(page: { limit?: number; cursor?: string } = {}, options: CallOptions = {}) {
    return this.#http.json<SchedulePage>('GET', '/v1/schedules', {
      query: { ...page },
      signal: options.signal,
    });
  }

  update(id: string, edit: UpdateScheduleRequest, options: CallOptions = {}): Promise<Schedule> {
    return this.#http.json('PATCH', path(id), { body: edit, signal: options.signal });
  }

  async delete(id: string, options: CallOptions = {}): Promise<void> {
    await this.#http.call('DELETE', path(id), { signal: options.signal });
  }

  pause(id: string, options: CallOptions = {}): Promise<Schedule> {
    return this.#http.json('POST', `${path(id)}/pause`, { body: {}, signal: options.signal });
  }

  resume(id: string, options: CallOptions = {}): Promise<Schedule> {
    return this.#http.json('POST', `${path(id)}/resume`, { body: {}, signal: options.signal });
  }

  trigger(id: string, options: CallOptions = {}): Promise<Fire> {
    return this.#http.json('POST', `${path(id)}/trigger`, { body: {}, signal: options.signal });
  }

  backfill(id: string, range: { from: string; to: string }, options: CallOptions = {}) {
    return this.#http.json<{ fireTimes: string[]; requested: string[] }>(
      'POST',
      `${path(id)}/backfill`,
      { body: range, signal: options.signal },
    );
  }

  fires(
    id: string,
    page: { limit?: number; cursor?: string; status?: string } = {},
    options: CallOptions = {},
  ): Promise<FirePage> {
    return this.#http.json('GET', `${path(id)}/fires`, {
      query: { ...page },
      signal: options.signal,
    });
  }

  async events(
    id: string,
    page: { after?: number; limit?: number } = {},
    options: CallOptions = {},
  ): Promise<ScheduleEvent[]> {
    const body = await this.#http.json<{ events: ScheduleEvent[] }>('GET', `${path(id)}/events`, {
      query: { ...page },
      signal: options.signal,
    });
    return body.events;
  }
}
