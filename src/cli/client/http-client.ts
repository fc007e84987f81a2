// The CLI's typed client of Keel's HTTP API: URL building, bearer auth, JSON bodies, and turning
// the API's `{ error: { code, message, details? } }` bodies into thrown ApiErrors that carry status
// and code. It never reads the environment, prints, exits or retries: callers decide what a failure
// means. It speaks HTTP only and must never import the engine, the store or the API server's
// modules.

/**
 * A JSON request must answer within this; event streams are exempt (they live as long as the run).
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How much of an unreadable response body an error message quotes. */
const BODY_SNIPPET_MAX_CHARS = 200;

export const RUN_STATUSES = [
  'queued',
  'running',
  'waiting',
  'cancelling',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set([
  'succeeded',
  'failed',
  'cancelled',
]);
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  'run.succeeded',
  'run.failed',
  'run.cancelled',
]);

export interface ApiErrorBody {
  code: string;
  message: string;
  details?: unknown;
}

export interface Run {
  id: string;
  tenantId: string;
  agent: string;
  agentVersion: string;
  status: RunStatus;
  stateVersion: number;
  priority: string;
  input: unknown;
  result?: unknown;
  error?: ApiErrorBody;
  waitingReason?: unknown;
  waitingSince?: string | null;
  createdAt: string;
  updatedAt: string;
  endedAt?: string;
  /** The run this one reruns. */
  rerunOf?: string | null;
  /** The run whose journal this one reused through `position`. */
  resetFrom?: { runId: string; position: number } | null;
}

/** What `POST /v1/runs/:id/rerun|reset|fork` take (rerun: only the key). */
export interface CopyRunBody {
  position?: number;
  input?: unknown;
  agentVersion?: string;
  idempotencyKey?: string;
}

export interface RunEvent {
  seq: number;
  type: string;
  at: string | number | undefined;
  data: unknown;
}

export interface Step {
  seq: number;
  kind: string;
  name: string;
  status: string;
  attempts: number;
  executionId?: string;
  queuedAt?: string;
  startedAt?: string;
  endedAt?: string;
  error?: ApiErrorBody | string;
  /** What the step received and returned (absent when none); previews when the flags say so. */
  input?: unknown;
  output?: unknown;
  inputTruncated?: boolean;
  outputTruncated?: boolean;
}

/** One attempt as GET /v1/runs/:id/attempts returns it: one claim of the run. */
export interface Attempt {
  number: number;
  worker: string;
  leaseToken: number;
  startedAt: string;
  endedAt: string | null;
  ending: string;
}

export interface SubmitRunBody {
  agent: string;
  input: unknown;
  idempotencyKey?: string;
  priority?: 'interactive' | 'batch';
  budget?: { maxSteps?: number; maxTokens?: number; maxCostUsd?: number; deadlineMs?: number };
  /** With a deadline: accept, refuse (429 deadline_unmeetable) or batch when expected late. */
  whenLate?: 'accept' | 'refuse' | 'batch';
}

export interface ListRunsQuery {
  status?: string;
  agent?: string;
  /** Only runs whose error has this code (e.g. poison_run). */
  code?: string;
  limit?: number;
  cursor?: string;
  /** Only the reruns of this run. */
  rerunOf?: string;
}

export interface RunPage {
  runs: Run[];
  nextCursor: string | null;
}

/**
 * The API answered with a non-2xx status. `code` is the API's stable error code, or `http_<status>`
 * if the body had none.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, body: ApiErrorBody) {
    super(body.message);
    this.name = 'ApiError';
    this.status = status;
    this.code = body.code;
    this.details = body.details;
  }
}

/** The request never got an HTTP answer: refused, reset, DNS failure or timeout. */
export class ConnectionError extends Error {
  readonly url: string;

  constructor(url: string, cause: unknown) {
    super(`cannot reach Keel at ${url}: ${describeCause(cause)}`, { cause });
    this.name = 'ConnectionError';
    this.url = url;
  }
}

/** A 2xx answer the client cannot read (not JSON, or not the documented shape). */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** Failures worth retrying: no answer at all, or a server-side/overload status. */
export function isTransientError(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  return (
    error instanceof ApiError &&
    (error.status >= 500 || error.status === 429 || error.status === 408)
  );
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error && cause.name === 'TimeoutError')
    return `no answer within ${REQUEST_TIMEOUT_MS} ms`;
  // undici reports "fetch failed" and keeps the useful part (ECONNREFUSED, ENOTFOUND…) one level
  // down.
  const inner = cause instanceof Error ? cause.cause : undefined;
  if (inner instanceof Error) {
    const code = (inner as { code?: unknown }).code;
    if (typeof code !== 'string' || inner.message.includes(code))
      return inner.message || 'connection failed';
    return inner.message === '' ? code : `${code}: ${inner.message}`; // AggregateError (IPv4 + IPv6) has no message
  }
  return cause instanceof Error ? cause.message : String(cause);
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_SNIPPET_MAX_CHARS ? `${flat.slice(0, BODY_SNIPPET_MAX_CHARS)}…` : flat;
}

function errorFromResponse(status: number, statusText: string, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: Partial<ApiErrorBody> };
    const error = body.error;
    if (error && typeof error.code === 'string') {
      const message = typeof error.message === 'string' ? error.message : statusText;
      return new ApiError(
        status,
        error.details === undefined
          ? { code: error.code, message }
          : { code: error.code, message, details: error.details },
      );
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): fall through to a generic error quoting the body.
  }
  const message =
    text.trim() === ''
      ? `HTTP ${status} ${statusText}`
      : `HTTP ${status} ${statusText}: ${snippet(text)}`;
  return new ApiError(status, { code: `http_${status}`, message });
}

export type QueryValue = string | number | undefined;

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * A typed client of Keel's `/v1` API.
 *
 * @example
 * const client = new KeelHttpClient({ baseUrl: 'http://127.0.0.1:7070', apiKey: 'k_…' });
 * const run = await client.getRun('run_123'); // throws ApiError (code 'run_not_found') on 404
 */
export class KeelHttpClient {
  readonly baseUrl: string;
  readonly #apiKey: string;

  constructor(options: { baseUrl: string; apiKey: string }) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
  }

  url(path: string, query: Record<string, QueryValue> = {}): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  /** Sends a request and parses the JSON answer; an empty 2xx body yields `undefined`. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const signal =
      options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
    const response = await this.#send(method, path, { ...options, signal });
    const url = this.url(path, options.query);
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw options.signal?.aborted ? error : new ConnectionError(url, error);
    }
    if (!response.ok) throw errorFromResponse(response.status, response.statusText, text);
    if (text.trim() === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ProtocolError(
        `${method} ${url} answered ${response.status} with a body that is not JSON: ${snippet(text)}`,
      );
    }
  }

  /**
   * Opens a streaming response (no overall timeout); a non-2xx answer is read and thrown as
   * ApiError.
   */
  async openStream(
    path: string,
    options: RequestOptions = {},
  ): Promise<ReadableStream<Uint8Array>> {
    const response = await this.#send('GET', path, options);
    if (!response.ok)
      throw errorFromResponse(response.status, response.statusText, await response.text());
    if (response.body === null)
      throw new ProtocolError(`GET ${this.url(path, options.query)} answered without a body`);
    return response.body;
  }

  async #send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const url = this.url(path, options.query);
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...options.headers,
      authorization: `Bearer ${this.#apiKey}`,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    try {
      const init: RequestInit = { method, headers };
      if (options.body !== undefined) init.body = JSON.stringify(options.body);
      if (options.signal !== undefined) init.signal = options.signal;
      return await fetch(url, init);
    } catch (error) {
      // A caller's own abort is not a connection problem: let it through unchanged.
      if (error instanceof Error && error.name === 'AbortError') throw error;
      throw new ConnectionError(url, error);
    }
  }

  submitRun(body: SubmitRunBody): Promise<Run> {
    return this.request<Run>('POST', '/v1/runs', { body });
  }

  getRun(id: string): Promise<Run> {
    return this.request<Run>('GET', `/v1/runs/${encodeURIComponent(id)}`);
  }

  listRuns(query: ListRunsQuery): Promise<RunPage> {
    return this.request<RunPage>('GET', '/v1/runs', { query: { ...query } });
  }

  /** A rerun, reset or fork of run `id`: the new run. */
  copyRun(id: string, op: 'rerun' | 'reset' | 'fork', body: CopyRunBody): Promise<Run> {
    return this.request<Run>('POST', `/v1/runs/${encodeURIComponent(id)}/${op}`, { body });
  }

  cancelRun(id: string): Promise<unknown> {
    return this.request<unknown>('POST', `/v1/runs/${encodeURIComponent(id)}/cancel`, { body: {} });
  }

  provideInput(id: string, key: string, value: unknown): Promise<unknown> {
    return this.request<unknown>('POST', `/v1/runs/${encodeURIComponent(id)}/input`, {
      body: { key, value },
    });
  }

  /** Every event after `after`, at once. The API may answer with a bare array or `{ events }`. */
  async listEvents(id: string, after: number): Promise<RunEvent[]> {
    const path = `/v1/runs/${encodeURIComponent(id)}/events`;
    const body = await this.request<RunEvent[] | { events?: RunEvent[] }>('GET', path, {
      query: { format: 'json', after },
    });
    const events = Array.isArray(body) ? body : body?.events;
    if (!Array.isArray(events))
      throw new ProtocolError(`GET ${this.url(path)} did not answer with a list of events`);
    return events;
  }

  async listSteps(id: string): Promise<Step[]> {
    const body = await this.request<{ steps?: Step[] }>(
      'GET',
      `/v1/runs/${encodeURIComponent(id)}/steps`,
    );
    if (!Array.isArray(body?.steps))
      throw new ProtocolError(`GET /v1/runs/${id}/steps did not answer with { steps: [...] }`);
    return body.steps;
  }

  /** One step with its whole input and output (the list holds previews of large ones). */
  async getStep(id: string, seq: number): Promise<Step> {
    const path = `/v1/runs/${encodeURIComponent(id)}/steps/${seq}`;
    const body = await this.request<{ step?: Step }>('GET', path);
    if (typeof body?.step !== 'object' || body.step === null)
      throw new ProtocolError(`GET ${path} did not answer with { step: {...} }`);
    return body.step;
  }

  /** The run's attempts (each claim of it), oldest first. */
  async listAttempts(id: string): Promise<Attempt[]> {
    const body = await this.request<{ attempts?: Attempt[] }>(
      'GET',
      `/v1/runs/${encodeURIComponent(id)}/attempts`,
    );
    if (!Array.isArray(body?.attempts))
      throw new ProtocolError(
        `GET /v1/runs/${id}/attempts did not answer with { attempts: [...] }`,
      );
    return body.attempts;
  }

  /** The run's live event stream (SSE), resuming after `lastEventId` when given. */
  openEventStream(
    id: string,
    lastEventId: string | undefined,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    return this.openStream(`/v1/runs/${encodeURIComponent(id)}/events`, { headers, signal });
  }
}
