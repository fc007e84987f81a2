// Typed errors: every error Keel raises on purpose is a KeelError with a stable `code` from the
// registry. Retry behaviour is carried by the type (`retryable`, `retryAfterMs`), never parsed from
// a message.
import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

export class KeelError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      details?: Record<string, unknown>;
      retryable?: boolean;
      retryAfterMs?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KeelError';
    this.code = code;
    this.details = options.details;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** Recognises Keel errors across package copies (dist vs source), where `instanceof` would fail. */
export function isKeelError(error: unknown): error is KeelError {
  return (
    error instanceof KeelError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { name?: unknown }).name === 'KeelError' &&
      typeof (error as { code?: unknown }).code === 'string')
  );
}

/** The journaled form of an error: what replay rethrows. */
export interface SerializedError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export function serializeError(error: unknown, fallback: ErrorCode): SerializedError {
  if (isKeelError(error)) return error.toJSON();
  const message = error instanceof Error ? error.message : String(error);
  return { code: fallback, message };
}

export function deserializeError(error: SerializedError): KeelError {
  const code = (error.code in ERROR_CODES ? error.code : 'internal') as ErrorCode;
  return new KeelError(
    code,
    error.message,
    error.details === undefined ? {} : { details: error.details },
  );
}
