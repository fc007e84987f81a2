// Bad input over real HTTP: every malformed, oversize, unknown or out-of-range request is answered
// 4xx with a stable `error.code` from the registry, never 5xx and never Fastify's own error shape.
// Ends with property tests that throw arbitrary bodies, query strings, path segments and headers at
// the API, and one that walks every route of the OpenAPI document on both stores (Postgres refuses
// some text SQLite keeps: U+0000, out-of-range integers).
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { newRunId } from '../src/domain/ids.ts';
import { ERROR_CODES } from '../src/domain/error-codes.ts';
import { defineAgent } from '../src/index.ts';
import { assertError } from './support/assert-error.ts';
import { startKeel, type StartOptions, type TestKeel } from './support/keel-server.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';
import { ADMIN_KEY, startSchedulesKeel, type SchedulesKeel } from './support/schedules-keel.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { done: true };
  },
});
const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('answer');
  },
});

/** Bounds each property so the whole file stays within a few seconds. */
const PROPERTY_RUNS = 150;
const MIB = 1024 * 1024;

async function start(t: TestContext, options: Partial<StartOptions> = {}): Promise<TestKeel> {
  const keel = await startKeel({ agents: [quick, waiter], ...options });
  t.after(() => keel.close());
  return keel;
}

interface Answer {
  status: number;
  body: any;
}

/**
 * The error contract: this status, this registered code, the registry agrees on the status, and a
 * message.
 */
/** Never 5xx; every 4xx carries a registered code whose registry status is the one sent. */
function assertClientErrorContract(res: Answer, what: string): void {
  const where = `${what} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
  assert.ok(res.status < 500, `5xx for ${where}`);
  if (res.status < 400) return;
  const code: unknown = res.body?.error?.code;
  assert.equal(typeof code, 'string', `no error.code for ${where}`);
  assert.ok((code as string) in ERROR_CODES, `unregistered code for ${where}`);
  assert.equal(
    ERROR_CODES[code as keyof typeof ERROR_CODES].status,
    res.status,
    `status disagrees with the registry for ${where}`,
  );
}

async function raw(
  keel: TestKeel,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const res = await fetch(keel.url + path, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${keel.apiKey}`, ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

const cursorOf = (value: unknown): string =>
  Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JSON body of exactly `bytes` bytes (ASCII) that is otherwise a valid run submission. */
function bodyOfSize(bytes: number): string {
  const shell = JSON.stringify({ agent: 'quick', input: '' });
  return JSON.stringify({ agent: 'quick', input: 'x'.repeat(bytes - shell.length) });
}

test('POST /v1/runs: malformed, incomplete or out-of-schema bodies are 4xx with stable codes', async (t) => {
  const keel = await start(t);
  const cases: Array<[name: string, body: unknown, status: number, code: string]> = [
    ['malformed JSON', '{"agent": "quick",', 400, 'invalid_json'],
    ['truncated JSON', '{', 400, 'invalid_json'],
    ['not JSON at all', 'agent=quick', 400, 'invalid_json'],
    [
      'prototype pollution attempt',
      '{"agent":"quick","__proto__":{"admin":true}}',
      400,
      'forbidden_key',
    ],
    [
      '__proto__ spelt with escapes',
      '{"agent":"quick","\\u005f_proto__":{"admin":true}}',
      400,
      'forbidden_key',
    ],
    [
      '__proto__ deep inside the input',
      '{"agent":"quick","input":{"a":[{"b":{"__proto__":{"x":1}}}]}}',
      400,
      'forbidden_key',
    ],
    [
      'constructor.prototype',
      '{"agent":"quick","input":{"constructor":{"prototype":{"admin":true}}}}',
      400,
      'forbidden_key',
    ],
    [
      'malformed JSON that mentions __proto__',
      '{"agent":"quick","__proto__":',
      400,
      'invalid_json',
    ],
    ['empty body', '', 400, 'validation_failed'],
    ['JSON null', 'null', 400, 'validation_failed'],
    ['JSON array', '[]', 400, 'validation_failed'],
    ['JSON string', '"quick"', 400, 'validation_failed'],
    ['JSON number', '42', 400, 'validation_failed'],
    ['missing agent', { input: 1 }, 400, 'validation_failed'],
    ['empty agent name', { agent: '' }, 400, 'validation_failed'],
    ['agent not a string', { agent: 7 }, 400, 'validation_failed'],
    ['agent name too long', { agent: 'a'.repeat(201) }, 400, 'validation_failed'],
    ['unknown agent', { agent: 'no-such-agent' }, 404, 'agent_not_found'],
    ['unknown agent version', { agent: 'quick@999' }, 404, 'agent_not_found'],
    ['unknown top-level field', { agent: 'quick', bogus: true }, 400, 'validation_failed'],
    ['misspelt field', { agent: 'quick', idempotency_key: 'k' }, 400, 'validation_failed'],
    ['empty idempotency key', { agent: 'quick', idempotencyKey: '' }, 400, 'validation_failed'],
    [
      'idempotency key not a string',
      { agent: 'quick', idempotencyKey: 5 },
      400,
      'validation_failed',
    ],
    ['bad priority', { agent: 'quick', priority: 'urgent' }, 400, 'validation_failed'],
    ['priority wrong type', { agent: 'quick', priority: 1 }, 400, 'validation_failed'],
    ['budget not an object', { agent: 'quick', budget: 5 }, 400, 'validation_failed'],
    [
      'unknown budget field',
      { agent: 'quick', budget: { maxSeconds: 5 } },
      400,
      'validation_failed',
    ],
    ['negative maxSteps', { agent: 'quick', budget: { maxSteps: -1 } }, 400, 'validation_failed'],
    ['zero maxSteps', { agent: 'quick', budget: { maxSteps: 0 } }, 400, 'validation_failed'],
    ['float maxSteps', { agent: 'quick', budget: { maxSteps: 1.5 } }, 400, 'validation_failed'],
    ['huge maxSteps', { agent: 'quick', budget: { maxSteps: 1e300 } }, 400, 'validation_failed'],
    [
      'maxSteps as a string',
      { agent: 'quick', budget: { maxSteps: '10' } },
      400,
      'validation_failed',
    ],
    [
      'negative maxTokens',
      { agent: 'quick', budget: { maxTokens: -100 } },
      400,
      'validation_failed',
    ],
    ['zero maxTokens', { agent: 'quick', budget: { maxTokens: 0 } }, 400, 'validation_failed'],
    ['float maxTokens', { agent: 'quick', budget: { maxTokens: 10.25 } }, 400, 'validation_failed'],
    [
      'negative maxCostUsd',
      { agent: 'quick', budget: { maxCostUsd: -0.01 } },
      400,
      'validation_failed',
    ],
    ['zero maxCostUsd', { agent: 'quick', budget: { maxCostUsd: 0 } }, 400, 'validation_failed'],
    [
      'negative deadlineMs',
      { agent: 'quick', budget: { deadlineMs: -1 } },
      400,
      'validation_failed',
    ],
    ['zero deadlineMs', { agent: 'quick', budget: { deadlineMs: 0 } }, 400, 'validation_failed'],
    [
      'float deadlineMs',
      { agent: 'quick', budget: { deadlineMs: 1000.5 } },
      400,
      'validation_failed',
    ],
    [
      'deadlineMs beyond a year',
      { agent: 'quick', budget: { deadlineMs: 366 * 24 * 3600 * 1000 } },
      400,
      'validation_failed',
    ],
    ['metadata not an object', { agent: 'quick', metadata: [1, 2] }, 400, 'validation_failed'],
    // A depth no agent needs: it must be refused as input, not crash a handler.
    [
      'absurdly deep input',
      `{"agent":"quick","input":${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
      400,
      'validation_failed',
    ],
  ];
  for (const [name, body, status, code] of cases) {
    await t.test(name, async () =>
      assertError(await keel.request('POST', '/v1/runs', body), status, code),
    );
  }
});

test('a float or sub-1 maxCostUsd is a valid budget (only non-positive is refused)', async (t) => {
  const keel = await start(t);
  const res = await keel.request('POST', '/v1/runs', {
    agent: 'quick',
    budget: { maxCostUsd: 0.25, maxSteps: 3 },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.deepEqual(res.body.budget, { maxCostUsd: 0.25, maxSteps: 3 });
});

test('payload limit: a body over the configured payloadMaxBytes is 413 payload_too_large; one at the limit is accepted', async (t) => {
  const limit = 2048;
  const keel = await start(t, { payloadMaxBytes: limit });
  const atLimit = bodyOfSize(limit);
  assert.equal(Buffer.byteLength(atLimit), limit);
  const accepted = await keel.request('POST', '/v1/runs', atLimit);
  assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
  assertError(
    await keel.request('POST', '/v1/runs', bodyOfSize(limit + 1)),
    413,
    'payload_too_large',
  );
  assertError(
    await keel.request('POST', '/v1/runs', bodyOfSize(10 * limit)),
    413,
    'payload_too_large',
  );
  // The limit applies to every JSON route, not only submission.
  assertError(
    await keel.request('POST', `/v1/runs/${accepted.body.id}/input`, {
      key: 'answer',
      value: 'y'.repeat(limit),
    }),
    413,
    'payload_too_large',
  );
});

test('payload limit: the default is 1 MiB, so a 2 MiB body is 413 payload_too_large', async (t) => {
  const keel = await start(t);
  assertError(
    await keel.request('POST', '/v1/runs', bodyOfSize(2 * MIB)),
    413,
    'payload_too_large',
  );
  const justUnder = await keel.request('POST', '/v1/runs', bodyOfSize(MIB - 1024));
  assert.equal(justUnder.status, 201, 'a body just under 1 MiB is accepted');
});

test('a body that is not application/json is 415 unsupported_media_type', async (t) => {
  const keel = await start(t);
  const body = JSON.stringify({ agent: 'quick' });
  for (const type of [
    'application/xml',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
    'multipart/form-data; boundary=x',
    'not a media type',
  ]) {
    await t.test(type, async () =>
      assertError(
        await raw(keel, '/v1/runs', { method: 'POST', headers: { 'content-type': type }, body }),
        415,
        'unsupported_media_type',
      ),
    );
  }
  await t.test('application/json with a charset parameter is still JSON', async () => {
    const res = await raw(keel, '/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  });
});

test('a text/plain body is 415 unsupported_media_type, not parsed as a string and then refused by validation', async (t) => {
  const keel = await start(t);
  const body = JSON.stringify({ agent: 'quick' });
  assertError(
    await raw(keel, '/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body,
    }),
    415,
    'unsupported_media_type',
  );
  assertError(
    await raw(keel, '/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body,
    }),
    415,
    'unsupported_media_type',
  );
});

test('an unknown run id is 404 run_not_found on every run route', async (t) => {
  const keel = await start(t);
  for (const id of [
    newRunId(),
    'nope',
    'run_',
    'run_00000000-0000-7000-8000-000000000000',
    encodeURIComponent('run x/../y'),
  ]) {
    const routes: Array<[string, string, unknown]> = [
      ['GET', `/v1/runs/${id}`, undefined],
      ['POST', `/v1/runs/${id}/cancel`, undefined],
      ['POST', `/v1/runs/${id}/cancel`, {}],
      ['POST', `/v1/runs/${id}/input`, { key: 'answer', value: 1 }],
      ['GET', `/v1/runs/${id}/steps`, undefined],
      ['GET', `/v1/runs/${id}/events`, undefined],
      ['GET', `/v1/runs/${id}/events?format=json`, undefined],
      ['GET', `/v1/runs/${id}/events?format=sse`, undefined],
    ];
    for (const [method, path, body] of routes) {
      await t.test(`${method} ${path}`, async () =>
        assertError(await keel.request(method, path, body), 404, 'run_not_found'),
      );
    }
  }
});

test('run ids the router itself refuses (too long, broken percent-encoding) still get a Keel error body', async (t) => {
  const keel = await start(t);
  for (const path of [
    `/v1/runs/run_${'a'.repeat(300)}`,
    '/v1/runs/%E0%A4%A',
    '/v1/runs/%zz/steps',
  ]) {
    await t.test(path.slice(0, 40), async () =>
      assertClientErrorContract(await keel.request('GET', path), path),
    );
  }
});

test('GET /v1/runs: bad cursor, limit, status or unknown parameters are 400', async (t) => {
  const keel = await start(t);
  const cases: Array<[query: string, code: string]> = [
    ['cursor=%25%25%25garbage', 'invalid_cursor'], // the literal cursor "%%%garbage"
    ['cursor=%%%garbage', 'invalid_cursor'], // the same, not percent-encoded by the client
    [`cursor=${cursorOf({ foo: 1 })}`, 'invalid_cursor'], // valid base64url, wrong JSON shape
    [`cursor=${cursorOf([1, 2, 3])}`, 'invalid_cursor'],
    [`cursor=${cursorOf(null)}`, 'invalid_cursor'],
    [`cursor=${cursorOf({ v: 1 })}`, 'invalid_cursor'],
    [`cursor=${cursorOf({ v: 2, after: newRunId() })}`, 'invalid_cursor'], // a future cursor version
    [
      `cursor=${cursorOf({ v: 1, after: 'ten_0c6a3a43-6f3f-4a8e-9a53-000000000000' })}`,
      'invalid_cursor',
    ], // not a run id
    [`cursor=${cursorOf({ v: 1, after: "run_1' OR '1'='1" })}`, 'invalid_cursor'],
    [`cursor=${Buffer.from('hello, world').toString('base64url')}`, 'invalid_cursor'], // base64url, not JSON
    [
      `cursor=${Buffer.from(JSON.stringify({ v: 1, after: newRunId() })).toString('base64')}`,
      'invalid_cursor',
    ], // padded base64
    ['cursor=', 'invalid_cursor'],
    [`cursor=${'A'.repeat(513)}`, 'validation_failed'],
    ['limit=-1', 'validation_failed'],
    ['limit=0', 'validation_failed'],
    ['limit=1000', 'validation_failed'],
    ['limit=201', 'validation_failed'],
    ['limit=abc', 'validation_failed'],
    ['limit=1.5', 'validation_failed'],
    ['limit=Infinity', 'validation_failed'],
    ['limit=', 'validation_failed'],
    ['limit=5&limit=6', 'validation_failed'],
    ['status=bogus', 'validation_failed'],
    ['status=SUCCEEDED', 'validation_failed'],
    ['status=', 'validation_failed'],
    ['agent=', 'validation_failed'],
    ['sort=asc', 'validation_failed'],
    ['__proto__=x', 'validation_failed'],
    ['status[]=queued', 'validation_failed'],
  ];
  for (const [query, code] of cases) {
    await t.test(query.slice(0, 60), async () =>
      assertError(await keel.request('GET', `/v1/runs?${query}`), 400, code),
    );
  }
  await t.test('the bounds themselves are accepted', async () => {
    for (const limit of [1, 200])
      assert.equal((await keel.request('GET', `/v1/runs?limit=${limit}`)).status, 200);
  });
});

test('POST /v1/runs/:id/input: a body without key or value, or with extra fields, is 400', async (t) => {
  const keel = await start(t);
  const run = await keel.request('POST', '/v1/runs', { agent: 'waiter' });
  assert.equal(run.status, 201);
  const cases: Array<[name: string, body: unknown, code: string]> = [
    ['no key', { value: 1 }, 'validation_failed'],
    ['empty key', { key: '', value: 1 }, 'validation_failed'],
    ['key not a string', { key: 1, value: 1 }, 'validation_failed'],
    ['key too long', { key: 'k'.repeat(257), value: 1 }, 'validation_failed'],
    ['no value', { key: 'answer' }, 'validation_failed'],
    ['extra field', { key: 'answer', value: 1, note: 'x' }, 'validation_failed'],
    ['empty body', '', 'validation_failed'],
    ['JSON array', '[]', 'validation_failed'],
    ['malformed JSON', '{"key":', 'invalid_json'],
  ];
  for (const [name, body, code] of cases) {
    await t.test(name, async () =>
      assertError(await keel.request('POST', `/v1/runs/${run.body.id}/input`, body), 400, code),
    );
  }
  await t.test('none of them reached the run', async () => {
    const events = await keel.request('GET', `/v1/runs/${run.body.id}/events?format=json`);
    assert.equal(events.status, 200);
    assert.equal(
      events.body.filter((e: { type: string }) => e.type === 'input.received').length,
      0,
    );
  });
});

test('GET /v1/runs/:id/events: bad after, Last-Event-ID, format or limit are 400 validation_failed', async (t) => {
  const keel = await start(t);
  const run = await keel.request('POST', '/v1/runs', { agent: 'quick' });
  assert.equal(run.status, 201);
  const events = `/v1/runs/${run.body.id}/events`;
  for (const query of [
    'after=-1',
    'after=abc',
    'after=1.5',
    'after=Infinity',
    'format=xml',
    'format=',
    'limit=0',
    'limit=10001',
    'limit=x',
    'cursor=1',
  ]) {
    for (const format of ['', '&format=json']) {
      const path = `${events}?${query}${query.startsWith('format=') ? '' : format}`;
      await t.test(path.slice(events.length), async () =>
        assertError(await keel.request('GET', path), 400, 'validation_failed'),
      );
    }
  }
  for (const header of ['abc', '-1', '1.5', '1e3', '9999999999999999', ' 12x']) {
    for (const format of ['sse', 'json']) {
      await t.test(`Last-Event-ID: ${header} (${format})`, async () => {
        assertError(
          await raw(keel, `${events}?format=${format}`, { headers: { 'last-event-id': header } }),
          400,
          'validation_failed',
        );
      });
    }
  }
});

test('unknown paths are 404 not_found (a known path with another method is 405: test/api-protocol-errors.test.ts)', async (t) => {
  // GET / is the web dashboard; its deep links are tested in test/api-dashboard.test.ts.
  const keel = await start(t);
  for (const [method, path] of [
    ['GET', '/nope'],
    ['GET', '/v2/runs'],
    ['GET', '/v1/nothing'],
    ['GET', '/v1/runs/x/y/z'],
    ['DELETE', '/v1/nope'],
    ['POST', '/healthz/x'],
  ] as const) {
    await t.test(`${method} ${path}`, async () =>
      assertError(await keel.request(method, path), 404, 'not_found'),
    );
  }
});

// Properties: whatever arrives, the answer is never 5xx and a 4xx always carries a registered
// error.code.

const anyJson = fc.jsonValue({ maxDepth: 4 });
const nearlyValidRun = fc.record(
  {
    agent: fc.oneof(fc.constantFrom('quick', 'waiter', 'quick@1', 'quick@2', '@', ''), fc.string()),
    input: anyJson,
    idempotencyKey: fc.oneof(fc.constantFrom('k1', 'k2'), fc.string({ maxLength: 210 })),
    priority: fc.oneof(fc.constantFrom('interactive', 'batch'), anyJson),
    budget: fc.oneof(
      fc.dictionary(
        fc.constantFrom('maxSteps', 'maxTokens', 'maxCostUsd', 'deadlineMs', 'other'),
        fc.oneof(fc.integer(), fc.double(), anyJson),
      ),
      anyJson,
    ),
    metadata: anyJson,
    extra: anyJson,
  },
  { requiredKeys: [] },
);

test('property: arbitrary JSON and arbitrary strings as POST /v1/runs bodies never produce 5xx', async (t) => {
  const keel = await start(t);
  const body = fc.oneof(
    anyJson.map((v) => JSON.stringify(v)),
    nearlyValidRun.map((v) => JSON.stringify(v)),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.string({ maxLength: 200 }),
    fc.json({ maxDepth: 3 }).map((s) => s.slice(0, Math.max(0, s.length - 1))), // truncated JSON
  );
  await fc.assert(
    fc.asyncProperty(body, async (payload) => {
      assertClientErrorContract(
        await keel.request('POST', '/v1/runs', payload),
        `POST /v1/runs ${JSON.stringify(payload).slice(0, 200)}`,
      );
    }),
    { numRuns: PROPERTY_RUNS * 2 },
  );
});

test('property: arbitrary query strings never produce 5xx', async (t) => {
  const keel = await start(t);
  const run = await keel.request('POST', '/v1/runs', { agent: 'quick' });
  assert.equal(run.status, 201);
  const value = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.integer().map(String),
    fc.double().map(String),
  );
  const pair = fc
    .tuple(
      fc.oneof(
        fc.constantFrom('limit', 'cursor', 'status', 'agent', 'after', 'format'),
        fc.string({ maxLength: 10 }),
      ),
      value,
      fc.boolean(),
    )
    .map(([k, v, encode]) =>
      encode ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : `${k}=${v}`,
    );
  const query = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.array(pair, { maxLength: 4 }).map((ps) => ps.join('&')),
  );
  const base = fc.constantFrom(
    '/v1/runs',
    `/v1/runs/${run.body.id}/events?format=json&`,
    `/v1/runs/${run.body.id}`,
    `/v1/runs/${run.body.id}/steps`,
  );
  await fc.assert(
    fc.asyncProperty(base, query, async (path, q) => {
      const url = path.includes('?') ? path + q : `${path}?${q}`;
      assertClientErrorContract(await keel.request('GET', url), `GET ${url}`);
    }),
    { numRuns: PROPERTY_RUNS * 2 },
  );
});

test('property: arbitrary run ids in the path never produce 5xx', async (t) => {
  const keel = await start(t);
  const segment = fc.oneof(
    fc.string({ minLength: 1, maxLength: 120 }).map(encodeURIComponent),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }).map(encodeURIComponent),
    fc.string({ minLength: 1, maxLength: 60 }), // raw: may contain '%', '/', '?', '#'
  );
  const route = fc.constantFrom<[string, string, unknown]>(
    ['GET', '', undefined],
    ['GET', '/steps', undefined],
    ['GET', '/events?format=json', undefined],
    ['POST', '/cancel', undefined],
    ['POST', '/input', { key: 'k', value: 1 }],
  );
  await fc.assert(
    fc.asyncProperty(segment, route, async (id, [method, suffix, body]) => {
      const path = `/v1/runs/${id}${suffix}`;
      assertClientErrorContract(await keel.request(method, path, body), `${method} ${path}`);
    }),
    { numRuns: PROPERTY_RUNS },
  );
});

test('property: arbitrary Last-Event-ID headers never produce 5xx', async (t) => {
  const keel = await start(t);
  const run = await keel.request('POST', '/v1/runs', { agent: 'quick' });
  await keel.waitForRun(run.body.id, (r) => r.status === 'succeeded');
  // Printable ASCII only: fetch itself refuses other header bytes.
  const header = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.nat().map(String),
    fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String),
  );
  await fc.assert(
    fc.asyncProperty(header, fc.constantFrom('json', 'sse'), async (value, format) => {
      const res = await raw(keel, `/v1/runs/${run.body.id}/events?format=${format}`, {
        headers: { 'last-event-id': value },
      });
      assertClientErrorContract(res, `Last-Event-ID ${JSON.stringify(value)}`);
    }),
    { numRuns: PROPERTY_RUNS },
  );
});

test('an oversize body is answered 413 to a client in another process, never a broken connection mid-upload', async (t) => {
  const keel = await startKeel({ agents: [] as never[] });
  t.after(() => keel.close());
  // A separate process, as real clients are: in-process, client and server share one event loop and
  // the race (the server answering while the client still uploads) does not show.
  const script = `
    const statuses = [];
    for (let i = 0; i < 10; i++) {
      try {
        const res = await fetch(process.argv[1] + '/v1/runs', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.argv[2] },
          body: JSON.stringify({ agent: 'x', input: { blob: 'x'.repeat(2 * 1024 * 1024) } }) });
        statuses.push(res.status + ':' + (await res.json()).error.code);
      } catch (e) { statuses.push('error:' + (e.cause?.code ?? e.message)); }
    }
    console.log(JSON.stringify(statuses));`;
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', script, keel.url, keel.apiKey],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await once(child, 'exit');
  assert.deepEqual(JSON.parse(out), Array(10).fill('413:payload_too_large'));
});

// Every route, both stores: the classes of input that reached a store as something it cannot hold.

const hasPostgres = await postgresAvailable();
const STORES = [
  { name: 'SQLite', databaseUrl: undefined },
  { name: 'Postgres', databaseUrl: hasPostgres ? 'fresh' : undefined, skip: !hasPostgres },
] as const;

async function startOn(t: TestContext, store: (typeof STORES)[number]): Promise<SchedulesKeel> {
  const db = store.databaseUrl === undefined ? undefined : await createFreshDatabase();
  const keel = await startSchedulesKeel({
    agents: [quick, waiter],
    start: '2026-01-01T00:00:00Z',
    ...(db ? { databaseUrl: db.url } : {}),
  });
  t.after(async () => {
    await keel.close();
    await db?.drop();
  });
  return keel;
}

/**
 * A request whose answer may be anything: the status and the body as text, parsed when it is JSON.
 */
async function send(
  keel: { url: string },
  method: string,
  path: string,
  init: { key?: string | null; type?: string; body?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.key != null) headers.authorization = `Bearer ${init.key}`;
  if (init.type !== undefined) headers['content-type'] = init.type;
  const res = await fetch(keel.url + path, {
    method,
    headers,
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  // A stream that never ends (GET /v1/events follows the tenant for as long as it is read): its
  // answer is its status.
  if (res.status === 200 && res.headers.get('content-type')?.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, body: null };
  }
  const text = await res.text();
  try {
    return { status: res.status, body: text === '' ? null : JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

for (const store of STORES) {
  test(`${store.name}: control characters and unpaired surrogates in ids, keys, names and filters are 400, never a 500 or a silently changed key`, {
    skip: 'skip' in store && store.skip,
  }, async (t) => {
    const keel = await startOn(t, store);
    const run = await keel.request('POST', '/v1/runs', { agent: 'waiter' });
    assert.equal(run.status, 201);
    const schedule = { intervalMs: 60_000, timeZone: 'UTC', template: { agent: 'quick' } };
    const cases: Array<[method: string, path: string, body?: unknown]> = [
      ['GET', '/v1/runs/%00'],
      ['GET', '/v1/runs/run_%01x/steps'],
      ['POST', '/v1/runs/%00/cancel'],
      ['GET', '/v1/runs?agent=%00'],
      ['GET', '/v1/runs?agent=a%0Ab'],
      ['GET', '/v1/schedules/%00'],
      ['POST', `/v1/runs/${run.body.id}/executions/%00/resolve`, { action: 'retry' }],
      ['POST', '/v1/runs', { agent: 'waiter', idempotencyKey: 'a\u0000b' }],
      ['POST', '/v1/runs', { agent: 'waiter', idempotencyKey: '\ud800' }],
      ['POST', '/v1/runs', { agent: 'waiter', idempotencyKey: 'tab\there' }],
      ['POST', '/v1/runs', { agent: 'wait\u0000er' }],
      ['POST', `/v1/runs/${run.body.id}/input`, { key: 'answer\u0000', value: 1 }],
      ['POST', `/v1/runs/${run.body.id}/input`, { key: '\udc00', value: 1 }],
      ['POST', '/v1/schedules', { ...schedule, name: 'n\u0000' }],
      ['POST', '/v1/schedules', { ...schedule, webhookUrl: 'https://hooks.example.com/a\u0000b' }],
      ['POST', '/v1/schedules', { ...schedule, template: { agent: 'quick\u0000' } }],
      ['PATCH', '/v1/admin/tenants/%00', { weight: 2 }],
      ['GET', '/v1/admin/tenants/%00/webhook-allowlist'],
      ['PUT', '/v1/admin/tenants/%00/webhook-allowlist', { origins: [] }],
    ];
    for (const [method, path, body] of cases) {
      await t.test(`${method} ${path} ${JSON.stringify(body ?? '')}`.slice(0, 100), async () => {
        assertError(
          await keel.request(
            method,
            path,
            body,
            path.startsWith('/v1/admin') ? ADMIN_KEY : undefined,
          ),
          400,
          'validation_failed',
        );
      });
    }
    await t.test(
      'values inside JSON (input, metadata) may hold any character: they are stored as JSON text',
      async () => {
        const res = await keel.request('POST', '/v1/runs', {
          agent: 'quick',
          input: 'nul\u0000 \ud800',
          metadata: { 'k\u0000': 'v\u0001' },
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        const done = await keel.waitForRun(res.body.id, (r) => r.status === 'succeeded');
        assert.equal(done.input, 'nul\u0000 \ud800');
      },
    );
    await t.test('a surrogate pair (an emoji) is plain text', async () => {
      const res = await keel.request('POST', '/v1/runs', {
        agent: 'quick',
        idempotencyKey: 'key-\u{1F600}',
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    });
  });

  test(`${store.name}: integers past what the store's columns hold are 400 at the API`, {
    skip: 'skip' in store && store.skip,
  }, async (t) => {
    const keel = await startOn(t, store);
    const tenant = (body: Record<string, unknown>) =>
      keel.request(
        'POST',
        '/v1/admin/tenants',
        { name: `t${Math.random().toString(36).slice(2, 10)}`, ...body },
        ADMIN_KEY,
      );
    assertError(await tenant({ tpm: 2 ** 31 }), 400, 'validation_failed');
    assertError(await tenant({ tpm: 1_000_000_000_000 }), 400, 'validation_failed');
    const biggest = await tenant({
      tpm: 2 ** 31 - 1,
      rpm: 100_000_000,
      maxConcurrentRuns: 1_000_000,
      maxQueuedRuns: 100_000_000,
      dailyTokenBudget: 10 ** 15,
    });
    assert.equal(biggest.status, 201, JSON.stringify(biggest.body));
    assert.equal(biggest.body.tenant.tpm, 2 ** 31 - 1);
    assertError(
      await keel.request(
        'PATCH',
        `/v1/admin/tenants/${biggest.body.tenant.id}`,
        { tpm: 2 ** 31 },
        ADMIN_KEY,
      ),
      400,
      'validation_failed',
    );
    const run = await keel.request('POST', '/v1/runs', {
      agent: 'quick',
      budget: { maxTokens: Number.MAX_SAFE_INTEGER, maxCostUsd: 1e308 },
    });
    assert.equal(run.status, 201, JSON.stringify(run.body));
    assertError(
      await keel.request('POST', '/v1/runs', {
        agent: 'quick',
        budget: { maxTokens: Number.MAX_SAFE_INTEGER + 2 },
      }),
      400,
      'validation_failed',
    );
    assertError(
      await keel.request('POST', '/v1/runs', '{"agent":"quick","budget":{"maxCostUsd":1e400}}'),
      400,
      'validation_failed',
    );
  });

  test(`${store.name}: a route without query parameters refuses any, as the others refuse unknown ones`, {
    skip: 'skip' in store && store.skip,
  }, async (t) => {
    const keel = await startOn(t, store);
    const run = await keel.request('POST', '/v1/runs', { agent: 'quick' });
    const tenantRoutes = [
      '/v1/usage',
      '/v1/dashboard/tenant',
      '/v1/dashboard/nodes',
      `/v1/runs/${run.body.id}`,
      `/v1/runs/${run.body.id}/steps`,
    ];
    for (const path of tenantRoutes) {
      await t.test(path, async () => {
        assert.equal((await keel.request('GET', path)).status, 200);
        assertError(await keel.request('GET', `${path}?stauts=failed`), 400, 'validation_failed');
      });
    }
    for (const path of ['/v1/admin/tenants', '/v1/admin/pools', '/v1/admin/dashboard/tenants']) {
      await t.test(path, async () => {
        assert.equal((await keel.request('GET', path, undefined, ADMIN_KEY)).status, 200);
        assertError(
          await keel.request('GET', `${path}?limit=5`, undefined, ADMIN_KEY),
          400,
          'validation_failed',
        );
      });
    }
    await t.test(
      'outside /v1 a query is ignored (cache-busting on health checks and the document)',
      async () => {
        assert.equal((await keel.request('GET', '/healthz?t=1')).status, 200);
        assert.equal((await keel.request('GET', '/openapi.json?v=2')).status, 200);
      },
    );
  });

  test(`${store.name}: the schedule list routes refuse bad cursors, limits, filters and unknown parameters with 400`, {
    skip: 'skip' in store && store.skip,
  }, async (t) => {
    const keel = await startOn(t, store);
    const s = await keel.request('POST', '/v1/schedules', {
      intervalMs: 60_000,
      timeZone: 'UTC',
      template: { agent: 'quick' },
    });
    assert.equal(s.status, 201);
    const lists: Array<[path: string, cursors: unknown[]]> = [
      // A schedule list cursor names a schedule id; a run id, a number or SQL are not one.
      [
        '/v1/schedules',
        [
          { v: 1, after: newRunId() },
          { v: 1, after: 5 },
          { v: 1, after: "sch_' OR 1=1 --" },
          { v: 2, after: s.body.id },
        ],
      ],
      // A fire cursor names a logical time: a safe integer of milliseconds.
      [
        `/v1/schedules/${s.body.id}/fires`,
        [
          { v: 1, after: 1.5 },
          { v: 1, after: 1e300 },
          { v: 1, after: '1' },
          { v: 1, after: 2 ** 53 },
        ],
      ],
    ];
    for (const [path, cursors] of lists) {
      for (const cursor of cursors) {
        await t.test(`${path} cursor ${JSON.stringify(cursor)}`, async () =>
          assertError(
            await keel.request('GET', `${path}?cursor=${cursorOf(cursor)}`),
            400,
            'invalid_cursor',
          ),
        );
      }
      for (const query of [
        'cursor=zzz%25',
        'cursor=',
        'limit=0',
        'limit=-1',
        'limit=x',
        'limit=1e9',
        'limit=1&limit=2',
        'bogus=1',
        'status=nope',
        'status[]=x',
      ]) {
        const code = query.startsWith('cursor') ? 'invalid_cursor' : 'validation_failed';
        if (query.startsWith('status') && path === '/v1/schedules') continue; // schedules have no status filter: 'status' is unknown there
        await t.test(`${path}?${query}`, async () =>
          assertError(await keel.request('GET', `${path}?${query}`), 400, code),
        );
      }
    }
    for (const query of [
      'after=-1',
      'after=x',
      'after=9007199254740992',
      'limit=0',
      'limit=1001',
      'format=json',
    ]) {
      await t.test(`events?${query}`, async () =>
        assertError(
          await keel.request('GET', `/v1/schedules/${s.body.id}/events?${query}`),
          400,
          'validation_failed',
        ),
      );
    }
    await t.test('the cursors the server issues still page', async () => {
      await keel.request('POST', '/v1/schedules', {
        intervalMs: 60_000,
        timeZone: 'UTC',
        template: { agent: 'quick' },
      });
      const first = await keel.request('GET', '/v1/schedules?limit=1');
      const second = await keel.request(
        'GET',
        `/v1/schedules?limit=1&cursor=${first.body.nextCursor}`,
      );
      assert.equal(second.status, 200);
      assert.notEqual(second.body.schedules[0].id, first.body.schedules[0].id);
    });
  });

  test(`${store.name}: property: any input on any documented route, with any content type, is never 5xx and always an enveloped 4xx`, {
    skip: 'skip' in store && store.skip,
  }, async (t) => {
    const keel = await startOn(t, store);
    const run = await keel.request('POST', '/v1/runs', { agent: 'quick' });
    await keel.waitForRun(run.body.id, (r) => r.status === 'succeeded'); // a finished run: its SSE stream ends at once
    const schedule = await keel.request('POST', '/v1/schedules', {
      intervalMs: 60_000,
      timeZone: 'UTC',
      template: { agent: 'quick' },
    });
    const tenants = await keel.request('GET', '/v1/admin/tenants', undefined, ADMIN_KEY);
    const doc = await keel.request('GET', '/openapi.json');
    const operations = Object.entries(
      doc.body.paths as Record<string, Record<string, unknown>>,
    ).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => [method.toUpperCase(), path] as const),
    );
    assert.ok(operations.length >= 30, `only ${operations.length} documented operations`);

    const realIds = {
      id: [run.body.id, schedule.body.id, tenants.body.tenants[0].id],
      tenantId: [tenants.body.tenants[0].id],
      executionId: ['exe_1'],
    };
    const segment = fc.oneof(
      fc.constantFrom(
        'x',
        '%00',
        '%ED%A0%80',
        '%E0%A4%A',
        '..',
        '%2F',
        'a'.repeat(300),
        '-1',
        '1e999',
        '__proto__',
        'constructor',
      ),
      fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(encodeURIComponent),
    );
    const huge = fc.constantFrom(1e308, -1e308, 2 ** 53, 2 ** 31, -(2 ** 31) - 1, 0.1, -0, 1e-320);
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      huge,
      fc.constantFrom('\u0000', '\ud800', 'x'.repeat(3000), [], {}, [[[]]]),
    );
    const bodyOf = fc.oneof(
      value.map((v) => JSON.stringify(v)),
      fc
        .dictionary(
          fc.constantFrom(
            'agent',
            'name',
            'key',
            'value',
            'origins',
            'cron',
            'intervalMs',
            'timeZone',
            'template',
            'from',
            'to',
            'action',
            'weight',
            'poolCaps',
            'tpm',
          ),
          value,
        )
        .map((v) => JSON.stringify(v)),
      fc.constantFrom(
        '',
        '{',
        '{"__proto__":{}}',
        '{"a":1e400}',
        '[1,2,3]',
        'null',
        '"str"',
        '{"constructor":{"prototype":{}}}',
      ),
    );
    const query = fc.oneof(
      fc.constant(''),
      fc
        .array(
          fc.tuple(
            fc.constantFrom(
              'limit',
              'cursor',
              'status',
              'agent',
              'after',
              'format',
              'minutes',
              'code',
              'x',
            ),
            fc.oneof(segment, huge.map(String)),
          ),
          { maxLength: 3 },
        )
        .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
    );
    const type = fc.constantFrom(
      undefined,
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/JSON',
      '*/*',
    );
    const request = fc.record({
      operation: fc.constantFrom(...operations),
      ids: fc.array(fc.oneof(segment, fc.constantFrom(...realIds.id, ...realIds.executionId)), {
        minLength: 2,
        maxLength: 2,
      }),
      query,
      body: fc.option(bodyOf, { nil: undefined }),
      type,
      key: fc.constantFrom('tenant', 'admin', 'none'),
    });
    await fc.assert(
      fc.asyncProperty(
        request,
        async ({ operation: [method, template], ids, query: q, body, type: contentType, key }) => {
          let i = 0;
          const path = template.replace(/\{[^}]+\}/g, () => ids[i++]!) + q;
          const credential =
            key === 'none'
              ? null
              : key === 'admin' || template.startsWith('/v1/admin')
                ? ADMIN_KEY
                : keel.apiKey;
          const withBody = method !== 'GET' && method !== 'HEAD' && body !== undefined;
          const res = await send(keel, method, path, {
            key: credential,
            ...(withBody
              ? { body, ...(contentType !== undefined ? { type: contentType } : {}) }
              : {}),
          });
          assertClientErrorContract(
            res,
            `${method} ${path} ${contentType ?? ''} ${withBody ? body!.slice(0, 120) : ''}`,
          );
          if (res.status >= 400)
            assert.deepEqual(
              Object.keys(res.body),
              ['error'],
              `only the envelope for ${method} ${path}`,
            );
        },
      ),
      { numRuns: PROPERTY_RUNS * 3 },
    );
  });

  test(`${store.name}: every documented path parameter holding a NUL or a lone surrogate is a 4xx, never a 500`, {
    skip: 'skip' in store && store.skip,
  }, async (t) => {
    // PostgreSQL refuses both in text: a route whose parameter schema lets them through to the store
    // answers 500 (found for /v1/admin/tenants/{id}/mcp-servers by the property above).
    const keel = await startOn(t, store);
    const doc = await keel.request('GET', '/openapi.json');
    for (const [template, methods] of Object.entries(
      doc.body.paths as Record<string, Record<string, unknown>>,
    )) {
      if (!template.includes('{')) continue;
      for (const method of Object.keys(methods).map((m) => m.toUpperCase())) {
        for (const bad of ['%00', '%ED%A0%80']) {
          const path = template.replace(/\{[^}]+\}/g, bad);
          const res = await send(keel, method, path, {
            key: template.startsWith('/v1/admin') ? ADMIN_KEY : keel.apiKey,
            ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
          });
          assertClientErrorContract(res, `${method} ${path}`);
        }
      }
    }
  });
}
