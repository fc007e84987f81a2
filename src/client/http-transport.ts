// keel/client's HTTP plumbing: URL building, bearer auth, JSON bodies, per-request timeouts, and
// turning non-2xx answers into typed errors (errors.ts). Browser-safe: only fetch, URLSearchParams
// and AbortSignal, no Node modules. It never retries and never reads the environment: the
// operations above it decide what a failure means.
import {
  describeFetchFailure,
  errorFromResponse,
  KeelConnectionError,
  KeelProtocolError,
} from './errors.ts';

/** A JSON request must be answered within this (long-polls add their wait to it). */
export const REQUEST_TIMEOUT_MS = 30_000;

export type QueryValue = string | number | boolean | undefined;

export interface HttpOptions {
  /**
   * Keel's address, e.g. `http://127.0.0.1:7070`; `''` for the page's own origin (the dashboard).
   */
  baseUrl: string;
  /** The tenant API key, or a function read at each request (a key that can change, or none). */
  apiKey: string | (() => string | undefined);
  /** Another fetch (a test's, or one with a custom agent); default: the global fetch. */
  fetch?: typeof fetch;
  /** Per-request timeout in ms (default REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** Added to the timeout: a long-poll may take this long on purpose. */
  extraTimeoutMs?: number;
}

export interface JsonAnswer<T> {
  status: number;
  body: T;
}

export class HttpTransport {
  readonly baseUrl: string;
  readonly #apiKey: () => string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: HttpOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const key = options.apiKey;
    this.#apiKey = typeof key === 'function' ? key : () => key;
    // Bound to globalThis: a browser's fetch refuses to be called as another object's method.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  url(path: string, query: Record<string, QueryValue> = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) params.set(name, String(value));
    const search = params.toString();
    return `${this.baseUrl}${path}${search === '' ? '' : `?${search}`}`;
  }

  /** Sends a request and parses its JSON answer (an empty body is `undefined`) with the status. */
  async call<T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<JsonAnswer<T>> {
    const timeoutMs = this.#timeoutMs + (options.extraTimeoutMs ?? 0);
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal =
      options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
    const url = this.url(path, options.query);
    const response = await this.send(method, path, { ...options, signal }, timeoutMs);
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new KeelConnectionError(url, describeFetchFailure(error, timeoutMs), error);
    }
    if (!response.ok)
      throw errorFromResponse(response.status, response.statusText, response.headers, text);
    if (text.trim() === '') return { status: response.status, body: undefined as T };
    try {
      return { status: response.status, body: JSON.parse(text) as T };
    } catch {
      throw new KeelProtocolError(
        `${method} ${url} answered ${response.status} with a body that is not JSON`,
      );
    }
  }

  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.call<T>(method, path, options)).body;
  }

  /**
   * Opens a streaming GET (no overall timeout: a stream lives as long as its run); a non-2xx answer
   * is read and thrown as a typed error.
   */
  async stream(path: string, options: RequestOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const response = await this.send('GET', path, options, this.#timeoutMs);
    if (!response.ok)
      throw errorFromResponse(
        response.status,
        response.statusText,
        response.headers,
        await response.text().catch(() => ''),
      );
    if (response.body === null)
      throw new KeelProtocolError(`GET ${this.url(path, options.query)} answered without a body`);
    return response.body;
  }

  async send(
    method: string,
    path: string,
    options: RequestOptions,
    timeoutMs: number,
  ): Promise<Response> {
    const url = this.url(path, options.query);
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    // A caller's own authorization header (a key being tried at sign-in) wins over the client's.
    const key = this.#apiKey();
    if (key !== undefined && key !== '' && headers.authorization === undefined)
      headers.authorization = `Bearer ${key}`;
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    if (options.signal !== undefined) init.signal = options.signal;
    try {
      return await this.#fetch(url, init);
    } catch (error) {
      // The caller's own abort is not a connection problem: let it through unchanged.
      if (options.signal?.aborted && error instanceof Error && error.name === 'AbortError')
        throw error;
      if (options.signal?.aborted && !(error instanceof Error && error.name === 'TimeoutError'))
        throw error;
      throw new KeelConnectionError(url, describeFetchFailure(error, timeoutMs), error);
    }
  }
}
