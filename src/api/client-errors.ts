// Answers requests that Node's HTTP server refuses before Fastify sees them (a control character in
// a header, a request line plus headers over the size limit, a client too slow to send its headers,
// an Expect header other than 100-continue) in Keel's error envelope with a stable code. After a
// parse error the connection is closed: the byte stream cannot be trusted. It never writes into a
// response already under way, and never reads the rest of a request.
import type { Socket } from 'node:net';
import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ErrorCode } from '../domain/error-codes.ts';
import { ERROR_CODES } from '../domain/error-codes.ts';

interface ParserError extends Error {
  code?: string;
}

/**
 * The error code and message for a parser refusal; `undefined` when the client is gone and nothing
 * can be sent.
 */
export function clientErrorOf(
  error: ParserError,
): { code: ErrorCode; message: string } | undefined {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'request_headers_too_large',
        message: `the request line and headers exceed ${maxHeaderSize} bytes; shorten the URL (send large parameters in a JSON body)`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return {
        code: 'request_timeout',
        message: 'the request was not received completely in time',
      };
    default:
      return {
        code: 'malformed_request',
        message: `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'}): check for control characters in headers and the request line`,
      };
  }
}

/**
 * Fastify's `clientErrorHandler`: called with the raw socket of a connection whose request could
 * not be parsed.
 */
export function clientErrorHandler(error: ParserError, socket: Socket): void {
  const answer = clientErrorOf(error);
  // A response already started on this socket (a parse error in a later pipelined request) cannot
  // take a second one.
  const inFlight =
    (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent ===
    true;
  if (answer !== undefined && socket.writable && !inFlight) {
    const status = ERROR_CODES[answer.code].status;
    const body = JSON.stringify({
      error: {
        code: answer.code,
        message: answer.message,
        details: { parserCode: error.code ?? null },
      },
    });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * The server's 'checkExpectation' listener: Node would answer an Expect other than 100-continue
 * with a bare 417 and no body; with a listener it leaves the answer to us. The body is not read, so
 * the connection is closed after it.
 */
export function answerExpectationFailed(request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify({
    error: {
      code: 'expectation_failed',
      message: `this server only supports Expect: 100-continue, not ${JSON.stringify(request.headers.expect ?? '')}`,
    },
  });
  response.writeHead(ERROR_CODES.expectation_failed.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}
