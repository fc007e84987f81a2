// What each refusal of Node's HTTP parser is answered with: a registered code whose status fits the
// refusal, and nothing at all for a connection the client already reset. The answers on the wire:
// test/api-protocol-errors.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_CODES } from '../domain/error-codes.ts';
import { clientErrorOf } from './client-errors.ts';

const parserError = (code: string) => Object.assign(new Error(code), { code });

describe('clientErrorOf', () => {
  it('maps header overflow to 431, timeouts to 408 and every other parser error to 400', () => {
    assert.equal(
      clientErrorOf(parserError('HPE_HEADER_OVERFLOW'))?.code,
      'request_headers_too_large',
    );
    assert.equal(ERROR_CODES.request_headers_too_large.status, 431);
    for (const code of ['ERR_HTTP_REQUEST_TIMEOUT', 'HPE_HEADERS_TIMEOUT'])
      assert.equal(clientErrorOf(parserError(code))?.code, 'request_timeout');
    for (const code of [
      'HPE_INVALID_HEADER_TOKEN',
      'HPE_INVALID_METHOD',
      'HPE_UNEXPECTED_CONTENT_LENGTH',
      'SOMETHING_NEW',
    ]) {
      assert.equal(clientErrorOf(parserError(code))?.code, 'malformed_request', code);
    }
    assert.equal(clientErrorOf(new Error('no code'))?.code, 'malformed_request');
  });

  it('sends nothing to a client that is gone', () => {
    assert.equal(clientErrorOf(parserError('ECONNRESET')), undefined);
    assert.equal(clientErrorOf(parserError('EPIPE')), undefined);
  });
});
