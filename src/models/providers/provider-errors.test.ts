import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyProviderError, retryAfter } from './provider-errors.ts';

const http = (status: number, headers: Record<string, string> = {}, extra: object = {}) =>
  Object.assign(new Error(`${status} error`), { status, headers: new Headers(headers) }, extra);

describe('provider errors', () => {
  it('reads Retry-After as milliseconds, seconds or an HTTP date', () => {
    assert.equal(retryAfter(new Headers({ 'retry-after-ms': '250' })), 250);
    assert.equal(retryAfter(new Headers({ 'retry-after': '2' })), 2_000);
    const inFiveSeconds = new Date(Date.now() + 5_000).toUTCString();
    const fromDate = retryAfter(new Headers({ 'retry-after': inFiveSeconds }))!;
    assert.ok(fromDate > 3_000 && fromDate <= 5_000, String(fromDate));
    assert.equal(retryAfter(new Headers({ 'retry-after': 'soon' })), undefined);
    assert.equal(retryAfter(new Headers({})), undefined);
  });

  it('retries 429, 408, 409 and 5xx; fails fast on 400, 401, 403, 404, 422 and context length', () => {
    const cases: Array<[Error, string, boolean]> = [
      [http(429, { 'retry-after': '1' }), 'model_rate_limited', true],
      [http(408), 'model_unavailable', true],
      [http(529), 'model_unavailable', true],
      [http(400), 'model_request_invalid', false],
      [http(422), 'model_request_invalid', false],
      [http(401), 'model_auth_failed', false],
      [http(403), 'model_auth_failed', false],
      [http(404), 'model_endpoint_not_found', false],
      [http(400, {}, { code: 'context_length_exceeded' }), 'model_context_length_exceeded', false],
      [
        http(400, {}, { message: 'prompt is too long: 210000 tokens > 200000 maximum' }),
        'model_context_length_exceeded',
        false,
      ],
      [new TypeError('fetch failed'), 'model_unavailable', true],
      [new SyntaxError('Unexpected end of JSON input'), 'model_response_invalid', true],
    ];
    for (const [error, code, retryable] of cases) {
      const classified = classifyProviderError(error, 'gpt/east');
      assert.equal(classified.code, code, error.message);
      assert.equal(classified.retryable, retryable, error.message);
    }
    assert.equal(classifyProviderError(http(429, { 'retry-after': '1' }), 'e').retryAfterMs, 1_000);
  });
});

describe('classifyProviderError: bugs versus outages', () => {
  it('a TypeError raised by the adapter is internal_error (not retried), never model_unavailable', () => {
    const e = classifyProviderError(
      new TypeError("Cannot read properties of undefined (reading 'length')"),
      'gpt/0',
    );
    assert.equal(e.code, 'internal_error');
    assert.equal(e.retryable, false);
    assert.match(String(e.details?.correlationId), /^err_/);
  });
  it('a refused connection (undici: TypeError fetch failed, with a coded cause) stays an outage', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    const e = classifyProviderError(refused, 'gpt/0');
    assert.equal(e.code, 'model_unavailable');
    assert.equal(e.retryable, true);
  });
});
