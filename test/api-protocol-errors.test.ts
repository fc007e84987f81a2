// Requests refused before they reach a route, over real sockets: what Node's HTTP parser rejects (a
// control character in a header, a 70 KB URL, conflicting framing headers), an Expect header the
// server cannot meet, and methods a path does not have (405 with Allow, while an unknown path stays
// 404). Each answer is Keel's error envelope with a code from the registry whose status is the one
// sent, never Fastify's or Node's own body.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test, type TestContext } from 'node:test';
import { ERROR_CODES } from '../src/domain/error-codes.ts';
import { defineAgent } from '../src/index.ts';
import { assertError } from './support/assert-error.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { done: true };
  },
});

/** Node's default limit on the request line plus headers is 16 KiB; this is well past it. */
const LONG_URL_BYTES = 70 * 1024;

async function start(t: TestContext): Promise<TestKeel> {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  return keel;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  closed: boolean;
}

/**
 * Writes bytes on a fresh TCP connection and reads the one response until the server closes or the
 * deadline passes.
 */
async function rawRequest(keel: TestKeel, bytes: string, deadlineMs = 5_000): Promise<RawAnswer> {
  const { port, hostname } = new URL(keel.url);
  const text = await new Promise<{ data: string; closed: boolean }>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data, closed: false });
    }, deadlineMs);
    socket.on('data', (chunk) => (data += chunk.toString('utf8')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data, closed: true });
    });
    socket.on('error', (error) => (data === '' ? reject(error) : undefined)); // a reset after the answer is fine
  });
  const [head = '', body = ''] = text.data.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const at = line.indexOf(':');
      return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()];
    }),
  );
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: JSON.parse(body),
    closed: text.closed,
  };
}

function assertEnvelope(
  res: { status: number; body: any },
  status: number,
  code: keyof typeof ERROR_CODES,
): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(ERROR_CODES[code].status, status, 'the registry agrees on the status');
  assert.equal(res.body?.error?.code, code, JSON.stringify(res.body));
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok(res.body.error.message.length > 10, 'a message that says what is wrong');
  assert.deepEqual(
    Object.keys(res.body),
    ['error'],
    'nothing beside the envelope (no Fastify statusCode/error fields)',
  );
}

test('a control character in a header is 400 malformed_request in the envelope, and the connection is closed', async (t) => {
  const keel = await start(t);
  for (const [name, header] of [
    ['SOH in a value', 'X-Note: a\x01b'],
    ['NUL in a value', 'X-Note: a\x00b'],
    ['space in a name', 'X Note: a'],
  ] as const) {
    await t.test(name, async () => {
      const res = await rawRequest(
        keel,
        `GET /v1/runs HTTP/1.1\r\nHost: keel\r\nAuthorization: Bearer ${keel.apiKey}\r\n${header}\r\n\r\n`,
      );
      assertEnvelope(res, 400, 'malformed_request');
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.headers.connection, 'close');
      assert.match(res.body.error.details.parserCode, /^HPE_/);
      assert.ok(res.closed, 'the server closes the connection after a parse error');
    });
  }
});

test('conflicting framing headers (Content-Length with Transfer-Encoding) are 400 malformed_request', async (t) => {
  const keel = await start(t);
  const body = '{"agent":"quick"}';
  const res = await rawRequest(
    keel,
    `POST /v1/runs HTTP/1.1\r\nHost: keel\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n${body}`,
  );
  assertEnvelope(res, 400, 'malformed_request');
  const list = await keel.request('GET', '/v1/runs');
  assert.equal(list.body.runs.length, 0, 'the smuggling-shaped request created nothing');
});

test('a 70 KB URL is 431 request_headers_too_large in the envelope, to fetch and to a raw socket', async (t) => {
  const keel = await start(t);
  const query = `agent=${'a'.repeat(LONG_URL_BYTES)}`;
  const res = await fetch(`${keel.url}/v1/runs?${query}`, {
    headers: { authorization: `Bearer ${keel.apiKey}` },
  });
  assertEnvelope({ status: res.status, body: await res.json() }, 431, 'request_headers_too_large');
  const raw = await rawRequest(keel, `GET /v1/runs?${query} HTTP/1.1\r\nHost: keel\r\n\r\n`);
  assertEnvelope(raw, 431, 'request_headers_too_large');
  assert.match(raw.body.error.message, /16384 bytes/);
  // The server is fine afterwards.
  assert.equal((await keel.request('GET', '/v1/runs')).status, 200);
});

test('an Expect header other than 100-continue is 417 expectation_failed in the envelope', async (t) => {
  const keel = await start(t);
  const res = await rawRequest(
    keel,
    `POST /v1/runs HTTP/1.1\r\nHost: keel\r\nAuthorization: Bearer ${keel.apiKey}\r\nContent-Type: application/json\r\n` +
      'Content-Length: 17\r\nExpect: the-moon\r\n\r\n{"agent":"quick"}',
  );
  assertEnvelope(res, 417, 'expectation_failed');
  assert.equal(
    (await keel.request('GET', '/v1/runs')).body.runs.length,
    0,
    'the body was not acted on',
  );
});

test('a method the path does not have is 405 method_not_allowed with an Allow header; an unknown path stays 404', async (t) => {
  const keel = await start(t);
  const cases: Array<[method: string, path: string, allow: string]> = [
    ['PUT', '/v1/runs', 'GET, HEAD, POST'],
    ['DELETE', '/v1/runs', 'GET, HEAD, POST'],
    ['PATCH', '/healthz', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['PUT', '/v1/runs/run_x', 'GET, HEAD'],
    ['GET', '/v1/runs/run_x/cancel', 'POST'],
    ['DELETE', '/v1/admin/tenants', 'GET, HEAD, POST'],
    ['POST', '/openapi.json', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of cases) {
    await t.test(`${method} ${path}`, async () => {
      const res = await keel.request(
        method,
        path,
        undefined,
        path.startsWith('/v1/admin') ? keel.adminKey : undefined,
      );
      assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers.get('allow'), allow);
      assert.deepEqual(res.body.error.details.allow, allow.split(', '));
    });
  }
  await t.test(
    '405 is decided before the body is read: a broken or non-JSON body does not turn it into 400 or 415',
    async () => {
      const res = await fetch(`${keel.url}/v1/runs`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${keel.apiKey}`, 'content-type': 'application/json' },
        body: '{broken',
      });
      assert.equal(res.status, 405);
      const xml = await fetch(`${keel.url}/v1/runs`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${keel.apiKey}`, 'content-type': 'application/xml' },
        body: '<a/>',
      });
      assert.equal(xml.status, 405);
    },
  );
  await t.test('HEAD is answered wherever GET is', async () => {
    const res = await fetch(`${keel.url}/v1/runs`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${keel.apiKey}` },
    });
    assert.equal(res.status, 200);
  });
  for (const [method, path] of [
    ['GET', '/nope'],
    ['GET', '/v2/runs'],
    ['GET', '/v1/nothing'],
    ['GET', '/v1/runs/x/y/z'],
    ['PUT', '/v1/nothing'],
  ] as const) {
    await t.test(`${method} ${path} (no such path)`, async () => {
      const res = await keel.request(method, path);
      assertError(res, 404, 'not_found');
      assert.equal(res.headers.get('allow'), null);
    });
  }
});
