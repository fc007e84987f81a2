// The API's one error boundary: domain errors become their status and `{ error: { code, message,
// details? } }`; Fastify's own client errors (bad JSON, oversize body, bad media type, validation)
// get stable codes too. Anything else is a bug: logged with its stack, answered 500 `internal`
// without internals.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ErrorCode } from '../domain/error-codes.ts';
import { ERROR_CODES } from '../domain/error-codes.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_VALIDATION: 'validation_failed',
};

export function toKeelError(error: unknown): KeelError | undefined {
  if (isKeelError(error)) return error;
  const e = error as FastifyError;
  if (hasZodFastifySchemaValidationErrors(e)) {
    return new KeelError(
      'validation_failed',
      `invalid request ${e.validationContext ?? ''}: ${e.message}`.replace(/\s+/g, ' ').trim(),
      {
        details: {
          issues: e.validation.map((v) => ({ path: v.instancePath, message: v.message })),
        },
      },
    );
  }
  const mapped = typeof e?.code === 'string' ? FASTIFY_CODES[e.code] : undefined;
  if (mapped !== undefined) return new KeelError(mapped, e.message);
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new KeelError(
      e.statusCode === 413 ? 'payload_too_large' : 'validation_failed',
      e.message,
    );
  }
  return undefined;
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const keel = toKeelError(error);
  if (keel === undefined) {
    request.log.error({ err: error }, 'unhandled error');
    void reply
      .status(500)
      .send({ error: { code: 'internal', message: 'internal error; it has been logged' } });
    return;
  }
  if (keel.code === 'idempotency_conflict' || keel.status >= 500)
    request.log.warn({ code: keel.code }, keel.message);
  const status = ERROR_CODES[keel.code].status;
  // A refusal that says when to come back (429 tenant_queue_full, 503) tells HTTP clients too, in
  // whole seconds.
  if (keel.retryAfterMs !== undefined)
    void reply.header('retry-after', String(Math.max(1, Math.ceil(keel.retryAfterMs / 1000))));
  void reply
    .status(status >= 500 && keel.code !== 'store_busy' ? 500 : status)
    .send({ error: keel.toJSON() });
}
