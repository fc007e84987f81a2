// The exceptions keel/client throws. An answer from Keel that is not a success is a KeelApiError
// carrying the API's stable `code` (the registry in docs/reference/error-codes.md), the HTTP
// status, details and the request id; no answer at all is a KeelConnectionError; an answer the
// client cannot read is a KeelProtocolError. Callers branch on `code`, never on messages.

/** How much of an unreadable response body an error message quotes. */
const BODY_SNIPPET_MAX_CHARS = 200;

export interface KeelApiErrorInit {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  /** The server's x-request-id: the same id is in its log lines for the request. */
  requestId?: string | undefined;
  /** From a Retry-After header (429, 503), in ms. */
  retryAfterMs?: number | undefined;
}

/**
 * Keel answered with an error. `code` is the API's stable code (`run_not_found`,
 * `validation_failed`, `unauthorized`, `forbidden_scope`, `idempotency_conflict`, …), or
 * `http_<status>` when the body carried none (a proxy's error page).
 *
 * @example
 * try { await keel.runs.get(id); } catch (error) {
 *   if (error instanceof KeelApiError && error.code === 'run_not_found') return null;
 *   throw error;
 * }
 */
export class KeelApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(init: KeelApiErrorInit) {
    super(init.message);
    this.name = 'KeelApiError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** The request got no HTTP answer: refused, reset, DNS failure or timeout. */
export class KeelConnectionError extends Error {
  readonly code = 'connection_failed';
  readonly url: string;

  constructor(url: string, reason: string, cause: unknown) {
    super(`cannot reach Keel at ${url}: ${reason}`, { cause });
    this.name = 'KeelConnectionError';
    this.url = url;
  }
}

/** A success the client cannot read: not JSON, or not the documented shape. */
export class KeelProtocolError extends Error {
  readonly code = 'protocol_error';

  constructor(message: string) {
    super(message);
    this.name = 'KeelProtocolError';
  }
}

/** An event stream that could not be resumed: too many consecutive failed reconnections. */
export class KeelStreamError extends Error {
  readonly code = 'stream_lost';
  /** The last event delivered: resume from here with `events(id, { after })`. */
  readonly lastSeq: number;

  constructor(attempts: number, lastSeq: number, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : 'the stream ended';
    super(
      `event stream lost after ${attempts} reconnection attempts (last event ${lastSeq}): ${reason}`,
      { cause },
    );
    this.name = 'KeelStreamError';
    this.lastSeq = lastSeq;
  }
}

/** `wait()` gave up: the run had not ended within the caller's timeout. */
export class KeelWaitTimeoutError extends Error {
  readonly code = 'wait_timeout';
  readonly runId: string;

  constructor(runId: string, timeoutMs: number) {
    super(`run ${runId} did not end within ${timeoutMs} ms`);
    this.name = 'KeelWaitTimeoutError';
    this.runId = runId;
  }
}

/** Failures worth retrying: no answer at all, or an overloaded or failing server. */
export function isTransientError(error: unknown): boolean {
  if (error instanceof KeelConnectionError) return true;
  return (
    error instanceof KeelApiError &&
    (error.status >= 500 || error.status === 429 || error.status === 408)
  );
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_SNIPPET_MAX_CHARS ? `${flat.slice(0, BODY_SNIPPET_MAX_CHARS)}…` : flat;
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null || !/^\d{1,9}$/.test(header.trim())) return undefined;
  return Number(header.trim()) * 1000;
}

/** The typed error for a non-2xx answer, from its `{ error: { code, message, details? } }` body. */
export function errorFromResponse(
  status: number,
  statusText: string,
  headers: { get(name: string): string | null },
  text: string,
): KeelApiError {
  const common = {
    status,
    requestId: headers.get('x-request-id') ?? undefined,
    retryAfterMs: retryAfterMs(headers.get('retry-after')),
  };
  try {
    const body = JSON.parse(text) as {
      error?: { code?: unknown; message?: unknown; details?: unknown };
    };
    const error = body.error;
    if (error && typeof error.code === 'string') {
      const message = typeof error.message === 'string' ? error.message : statusText;
      return new KeelApiError({ ...common, code: error.code, message, details: error.details });
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): a generic error quoting the body.
  }
  const message =
    text.trim() === ''
      ? `HTTP ${status} ${statusText}`
      : `HTTP ${status} ${statusText}: ${snippet(text)}`;
  return new KeelApiError({ ...common, code: `http_${status}`, message });
}

/** What a fetch failure means, in words (undici hides ECONNREFUSED and the like one level down). */
export function describeFetchFailure(cause: unknown, timeoutMs: number): string {
  if (cause instanceof Error && cause.name === 'TimeoutError')
    return `no answer within ${timeoutMs} ms`;
  const inner = cause instanceof Error ? cause.cause : undefined;
  if (inner instanceof Error) {
    const code = (inner as { code?: unknown }).code;
    if (typeof code !== 'string' || inner.message.includes(code))
      return inner.message || 'connection failed';
    return inner.message === '' ? code : `${code}: ${inner.message}`;
  }
  return cause instanceof Error ? cause.message : String(cause);
}
