// The runs API contract over real HTTP: idempotent submission (also under concurrency and across
// tenants), cursor pagination and filters, cancel and input conflicts, the gapless event log,
// health, readiness and OpenAPI.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { assertError } from './support/assert-error.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run(_ctx, input: unknown) {
    return { echo: (input ?? null) as never };
  },
});
const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('answer');
  },
});
const twoInputs = defineAgent({
  name: 'two-inputs',
  version: '1',
  async run(ctx) {
    const first = await ctx.waitForInput<string>('first');
    const second = await ctx.waitForInput<string>('second');
    return { first, second };
  },
});

async function start(t: TestContext): Promise<TestKeel> {
  const keel = await startKeel({ agents: [quick, waiter, twoInputs] });
  t.after(() => keel.close());
  return keel;
}

async function submit(keel: TestKeel, body: unknown, key?: string): Promise<any> {
  const res = await keel.request('POST', '/v1/runs', body, key);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** Every run of the caller's tenant, following cursors; also checks each page's shape. */
async function listAll(
  keel: TestKeel,
  query: string,
  pageLimit: number,
  from: string | null = null,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = from;
  let pages = 0;
  do {
    const sep = query === '' ? '' : '&';
    const res = await keel.request(
      'GET',
      `/v1/runs?${query}${sep}limit=${pageLimit}${cursor === null ? '' : `&cursor=${cursor}`}`,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(res.body.runs.length <= pageLimit);
    pages += 1;
    assert.ok(pages <= 1000, 'pagination does not terminate');
    ids.push(...res.body.runs.map((r: { id: string }) => r.id));
    cursor = res.body.nextCursor;
    if (cursor !== null)
      assert.equal(res.body.runs.length, pageLimit, 'only a full page may have a next page');
  } while (cursor !== null);
  return { ids, pages };
}

test('idempotency: the same key and body returns the same run (200) and creates exactly one', async (t) => {
  const keel = await start(t);
  const body = {
    agent: 'quick',
    input: { n: 1, tags: ['a', 'b'] },
    idempotencyKey: 'order-42',
    priority: 'batch',
    budget: { maxSteps: 10 },
    metadata: { source: 'test' },
  };
  const first = await keel.request('POST', '/v1/runs', body);
  assert.equal(first.status, 201);
  const again = await keel.request('POST', '/v1/runs', body);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.id, first.body.id);
  assert.equal(again.body.idempotencyKey, 'order-42');

  // Key order inside objects does not make it a different request.
  const reordered = await keel.request('POST', '/v1/runs', {
    metadata: { source: 'test' },
    budget: { maxSteps: 10 },
    priority: 'batch',
    idempotencyKey: 'order-42',
    input: { tags: ['a', 'b'], n: 1 },
    agent: 'quick',
  });
  assert.equal(reordered.status, 200, JSON.stringify(reordered.body));
  assert.equal(reordered.body.id, first.body.id);

  // After the run finished, a retry still answers with the same run.
  await keel.waitForRun(first.body.id, (r) => r.status === 'succeeded');
  const late = await keel.request('POST', '/v1/runs', body);
  assert.equal(late.status, 200);
  assert.equal(late.body.id, first.body.id);
  assert.equal(late.body.status, 'succeeded');

  const all = await listAll(keel, '', 50);
  assert.deepEqual(all.ids, [first.body.id]);
});

test('idempotency: the same key with a different body is 409 idempotency_conflict and creates nothing', async (t) => {
  const keel = await start(t);
  const original = await submit(keel, { agent: 'quick', input: { n: 1 }, idempotencyKey: 'k' });
  const variants: Array<[string, unknown]> = [
    ['different input', { agent: 'quick', input: { n: 2 }, idempotencyKey: 'k' }],
    ['input omitted', { agent: 'quick', idempotencyKey: 'k' }],
    ['different agent', { agent: 'waiter', input: { n: 1 }, idempotencyKey: 'k' }],
    [
      'different priority',
      { agent: 'quick', input: { n: 1 }, idempotencyKey: 'k', priority: 'batch' },
    ],
    [
      'a budget added',
      { agent: 'quick', input: { n: 1 }, idempotencyKey: 'k', budget: { maxSteps: 5 } },
    ],
    [
      'metadata added',
      { agent: 'quick', input: { n: 1 }, idempotencyKey: 'k', metadata: { a: 1 } },
    ],
  ];
  for (const [name, body] of variants) {
    await t.test(name, async () => {
      const res = await keel.request('POST', '/v1/runs', body);
      assertError(res, 409, 'idempotency_conflict');
      assert.equal(res.body.error.details?.runId, original.id);
    });
  }
  const all = await listAll(keel, '', 50);
  assert.deepEqual(all.ids, [original.id]);
  // Without a key, the same body is simply a new run.
  const fresh = await submit(keel, { agent: 'quick', input: { n: 1 } });
  assert.notEqual(fresh.id, original.id);
});

test('idempotency: the same key in another tenant is independent', async (t) => {
  const keel = await start(t);
  const tenant = await keel.request('POST', '/v1/admin/tenants', { name: 'other' }, keel.adminKey);
  assert.equal(tenant.status, 201);
  const otherKey: string = tenant.body.apiKey;
  const mine = await submit(keel, { agent: 'quick', input: 1, idempotencyKey: 'shared' });
  const theirs = await submit(
    keel,
    { agent: 'quick', input: 1, idempotencyKey: 'shared' },
    otherKey,
  );
  assert.notEqual(theirs.id, mine.id);
  assert.equal(theirs.tenantId, tenant.body.tenant.id);
  // A different body under the same key is no conflict across tenants either.
  const theirsOther = await keel.request(
    'POST',
    '/v1/runs',
    { agent: 'quick', input: 2, idempotencyKey: 'shared-2' },
    otherKey,
  );
  assert.equal(theirsOther.status, 201);
  const mineOther = await keel.request('POST', '/v1/runs', {
    agent: 'quick',
    input: 3,
    idempotencyKey: 'shared-2',
  });
  assert.equal(mineOther.status, 201);
  // Each tenant's retry finds its own run.
  assert.equal(
    (
      await keel.request(
        'POST',
        '/v1/runs',
        { agent: 'quick', input: 1, idempotencyKey: 'shared' },
        otherKey,
      )
    ).body.id,
    theirs.id,
  );
  assert.equal(
    (await keel.request('POST', '/v1/runs', { agent: 'quick', input: 1, idempotencyKey: 'shared' }))
      .body.id,
    mine.id,
  );
});

test('idempotency: 20 concurrent identical submissions give exactly one 201 and nineteen 200 with the same id', async (t) => {
  const keel = await start(t);
  const body = { agent: 'waiter', input: { order: 7 }, idempotencyKey: 'burst' };
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => keel.request('POST', '/v1/runs', body)),
  );
  const statuses = answers.map((a) => a.status).sort((x, y) => x - y);
  assert.deepEqual(
    statuses,
    [...Array<number>(19).fill(200), 201],
    JSON.stringify(answers.map((a) => [a.status, a.body?.error?.code])),
  );
  const ids = new Set(answers.map((a) => a.body.id));
  assert.equal(ids.size, 1);
  const all = await listAll(keel, '', 50);
  assert.deepEqual(all.ids, [...ids]);

  // The same burst with a conflicting body mixed in: one run, the rest 200 or 409.
  const mixed = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      keel.request('POST', '/v1/runs', {
        ...body,
        idempotencyKey: 'burst-2',
        input: { order: i % 2 },
      }),
    ),
  );
  const created = mixed.filter((a) => a.status === 201);
  assert.equal(created.length, 1);
  for (const a of mixed) {
    if (a.status === 200) assert.equal(a.body.id, created[0]!.body.id);
    else if (a.status !== 201) assertError(a, 409, 'idempotency_conflict');
  }
});

test('pagination: 25 runs in pages of 10 come back each exactly once, newest first, then nextCursor null', async (t) => {
  const keel = await start(t);
  const created: string[] = [];
  for (let i = 0; i < 25; i++) created.push((await submit(keel, { agent: 'quick', input: i })).id);
  const newestFirst = [...created].reverse();

  const byTen = await listAll(keel, '', 10);
  assert.equal(byTen.pages, 3);
  assert.deepEqual(byTen.ids, newestFirst);

  // Page sizes that divide the total exactly: the last full page has no next page (no empty
  // trailing page).
  const byFive = await listAll(keel, '', 5);
  assert.equal(byFive.pages, 5);
  assert.deepEqual(byFive.ids, newestFirst);
  const byTwentyFive = await listAll(keel, '', 25);
  assert.equal(byTwentyFive.pages, 1);
  assert.deepEqual(byTwentyFive.ids, newestFirst);

  // The default page holds them all; createdAt never increases down the list.
  const page = await keel.request('GET', '/v1/runs');
  assert.equal(page.body.nextCursor, null);
  assert.deepEqual(
    page.body.runs.map((r: { id: string }) => r.id),
    newestFirst,
  );
  const times = page.body.runs.map((r: { createdAt: string }) => Date.parse(r.createdAt));
  for (let i = 1; i < times.length; i++) assert.ok(times[i - 1] >= times[i]);

  // Runs created while paging do not disturb the pages already promised (they are newer than the
  // cursor).
  const first = await keel.request('GET', '/v1/runs?limit=10');
  const extra = await submit(keel, { agent: 'quick' });
  const rest = await listAll(keel, '', 10, first.body.nextCursor);
  assert.deepEqual([...first.body.runs.map((r: { id: string }) => r.id), ...rest.ids], newestFirst);
  assert.ok(!rest.ids.includes(extra.id));
});

test('filters: status and agent, alone, combined and with pagination', async (t) => {
  const keel = await start(t);
  const waiting: string[] = [];
  const done: string[] = [];
  for (let i = 0; i < 3; i++) waiting.push((await submit(keel, { agent: 'waiter' })).id);
  for (let i = 0; i < 4; i++) done.push((await submit(keel, { agent: 'quick', input: i })).id);
  for (const id of waiting) await keel.waitForRun(id, (r) => r.status === 'waiting');
  for (const id of done) await keel.waitForRun(id, (r) => r.status === 'succeeded');
  const newest = (ids: string[]) => [...ids].reverse();

  assert.deepEqual((await listAll(keel, 'status=waiting', 50)).ids, newest(waiting));
  assert.deepEqual((await listAll(keel, 'status=succeeded', 50)).ids, newest(done));
  assert.deepEqual((await listAll(keel, 'status=failed', 50)).ids, []);
  assert.deepEqual((await listAll(keel, 'agent=waiter', 50)).ids, newest(waiting));
  assert.deepEqual((await listAll(keel, 'agent=quick', 50)).ids, newest(done));
  assert.deepEqual((await listAll(keel, 'agent=quick&status=succeeded', 50)).ids, newest(done));
  assert.deepEqual((await listAll(keel, 'agent=quick&status=waiting', 50)).ids, []);
  assert.deepEqual((await listAll(keel, 'agent=no-such-agent', 50)).ids, []);
  // A filter keeps its meaning across pages.
  const paged = await listAll(keel, 'agent=quick', 3);
  assert.deepEqual(paged.ids, newest(done));
  assert.equal(paged.pages, 2);
  const list = await keel.request('GET', '/v1/runs?status=waiting');
  for (const r of list.body.runs) assert.equal(r.status, 'waiting');
});

test('cancel: a finished run is 409 run_terminal; a waiting run is cancelled once, then it is terminal too', async (t) => {
  const keel = await start(t);
  const finished = await submit(keel, { agent: 'quick' });
  await keel.waitForRun(finished.id, (r) => r.status === 'succeeded');
  assertError(await keel.request('POST', `/v1/runs/${finished.id}/cancel`), 409, 'run_terminal');
  assertError(
    await keel.request('POST', `/v1/runs/${finished.id}/cancel`, {}),
    409,
    'run_terminal',
  );
  assert.equal((await keel.request('GET', `/v1/runs/${finished.id}`)).body.status, 'succeeded');

  const waiting = await submit(keel, { agent: 'waiter' });
  await keel.waitForRun(waiting.id, (r) => r.status === 'waiting');
  const cancel = await keel.request('POST', `/v1/runs/${waiting.id}/cancel`);
  assert.equal(cancel.status, 202, JSON.stringify(cancel.body));
  assert.ok(['cancelling', 'cancelled'].includes(cancel.body.status), cancel.body.status);
  const ended = await keel.waitForRun(waiting.id, (r) => TERMINAL.has(r.status));
  assert.equal(ended.status, 'cancelled');
  assertError(await keel.request('POST', `/v1/runs/${waiting.id}/cancel`), 409, 'run_terminal');
  assertError(
    await keel.request('POST', `/v1/runs/${waiting.id}/input`, { key: 'answer', value: 1 }),
    409,
    'run_terminal',
  );
});

test('cancel graceMs: a whole number of ms from 0 to 3600000, else 400 validation_failed; the run keeps it', async (t) => {
  const keel = await start(t);
  const waiting = await submit(keel, { agent: 'waiter' });
  await keel.waitForRun(waiting.id, (r) => r.status === 'waiting');
  for (const body of [
    { graceMs: -1 },
    { graceMs: 3_600_001 },
    { graceMs: 1.5 },
    { graceMs: '200' },
    { graceMs: null },
    { grace: 200 },
  ])
    assertError(
      await keel.request('POST', `/v1/runs/${waiting.id}/cancel`, body),
      400,
      'validation_failed',
    );
  assert.equal((await keel.request('GET', `/v1/runs/${waiting.id}`)).body.status, 'waiting');
  const cancel = await keel.request('POST', `/v1/runs/${waiting.id}/cancel`, { graceMs: 0 });
  assert.equal(cancel.status, 202, JSON.stringify(cancel.body));
  const ended = await keel.waitForRun(waiting.id, (r) => TERMINAL.has(r.status));
  assert.equal(ended.status, 'cancelled');
  const events = await keel.request('GET', `/v1/runs/${waiting.id}/events?format=json`);
  const cancelling = events.body.find((e: any) => e.type === 'run.cancelling');
  assert.deepEqual(cancelling?.data, { from: 'waiting', by: 'api', graceMs: 0 });
});

test('input: posting the same key twice is 409 input_already_provided; the first value wins', async (t) => {
  const keel = await start(t);
  const run = await submit(keel, { agent: 'two-inputs' });
  await keel.waitForRun(run.id, (r) => r.status === 'waiting');

  const first = await keel.request('POST', `/v1/runs/${run.id}/input`, {
    key: 'first',
    value: 'one',
  });
  assert.equal(first.status, 202, JSON.stringify(first.body));
  assertError(
    await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'first', value: 'uno' }),
    409,
    'input_already_provided',
  );
  assertError(
    await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'first', value: 'one' }),
    409,
    'input_already_provided',
  );

  // A key the run is not (yet) waiting for is stored once as well.
  assert.equal(
    (await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'second', value: 'two' }))
      .status,
    202,
  );
  const ended = await keel.waitForRun(run.id, (r) => TERMINAL.has(r.status));
  assert.equal(ended.status, 'succeeded');
  assert.deepEqual(ended.result, { first: 'one', second: 'two' });
  assertError(
    await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'second', value: 'again' }),
    409,
    'run_terminal',
  );
});

test('input: a key nobody waits for is accepted once and then conflicts, leaving the run waiting', async (t) => {
  const keel = await start(t);
  const run = await submit(keel, { agent: 'waiter' });
  await keel.waitForRun(run.id, (r) => r.status === 'waiting');
  assert.equal(
    (await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'unrelated', value: null }))
      .status,
    202,
  );
  assertError(
    await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'unrelated', value: 2 }),
    409,
    'input_already_provided',
  );
  assert.equal((await keel.request('GET', `/v1/runs/${run.id}`)).body.status, 'waiting');
});

test('events (format=json): a gapless array from seq 1 to the terminal event; after and limit page through it', async (t) => {
  const keel = await start(t);
  const run = await submit(keel, { agent: 'two-inputs' });
  await keel.waitForRun(run.id, (r) => r.status === 'waiting');
  await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'first', value: 'a' });
  await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'second', value: 'b' });
  await keel.waitForRun(run.id, (r) => r.status === 'succeeded');

  const res = await keel.request('GET', `/v1/runs/${run.id}/events?format=json`);
  assert.equal(res.status, 200);
  const events: Array<{ seq: number; type: string; at: string }> = res.body;
  assert.ok(Array.isArray(events) && events.length >= 3, JSON.stringify(events));
  for (const [i, e] of events.entries()) {
    assert.equal(
      e.seq,
      i + 1,
      `gap or disorder at index ${i}: ${JSON.stringify(events.map((x) => x.seq))}`,
    );
  }
  assert.equal(events[0]!.type, 'run.created');
  assert.equal(events.at(-1)!.type, 'run.succeeded');
  assert.equal(events.filter((e) => e.type === 'run.succeeded').length, 1);
  for (const e of events) assert.ok(!Number.isNaN(Date.parse(e.at)));

  const tail = await keel.request('GET', `/v1/runs/${run.id}/events?format=json&after=2`);
  assert.deepEqual(tail.body, events.slice(2));
  const window = await keel.request('GET', `/v1/runs/${run.id}/events?format=json&after=1&limit=2`);
  assert.deepEqual(window.body, events.slice(1, 3));
  const beyond = await keel.request(
    'GET',
    `/v1/runs/${run.id}/events?format=json&after=${events.length}`,
  );
  assert.deepEqual(beyond.body, []);
  // Last-Event-ID works for the JSON form too, and wins over ?after.
  const viaHeader = await fetch(`${keel.url}/v1/runs/${run.id}/events?format=json&after=0`, {
    headers: { authorization: `Bearer ${keel.apiKey}`, 'last-event-id': '3' },
  });
  assert.deepEqual(await viaHeader.json(), events.slice(3));
});

test('events (SSE): a finished run streams every event with gapless ids and closes; Last-Event-ID resumes', async (t) => {
  const keel = await start(t);
  const run = await submit(keel, { agent: 'quick', input: 'sse' });
  await keel.waitForRun(run.id, (r) => r.status === 'succeeded');
  const json = (await keel.request('GET', `/v1/runs/${run.id}/events?format=json`)).body as Array<{
    seq: number;
    type: string;
  }>;

  const read = async (headers: Record<string, string>, query = '') => {
    const res = await fetch(`${keel.url}/v1/runs/${run.id}/events${query}`, {
      headers: { authorization: `Bearer ${keel.apiKey}`, ...headers },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const frames = (await res.text()).split('\n\n').filter((f) => f.startsWith('id: '));
    return frames.map((f) => {
      const fields = Object.fromEntries(
        f
          .split('\n')
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
      );
      return {
        id: Number(fields.id),
        event: fields.event,
        data: JSON.parse(fields.data ?? 'null'),
      };
    });
  };
  const all = await read({});
  assert.deepEqual(
    all.map((f) => f.id),
    json.map((e) => e.seq),
  );
  assert.deepEqual(
    all.map((f) => f.event),
    json.map((e) => e.type),
  );
  for (const f of all) assert.equal(f.data.seq, f.id);
  const resumed = await read({ 'last-event-id': '2' });
  assert.deepEqual(
    resumed.map((f) => f.id),
    json.slice(2).map((e) => e.seq),
  );
  const afterQuery = await read({}, '?after=1');
  assert.deepEqual(
    afterQuery.map((f) => f.id),
    json.slice(1).map((e) => e.seq),
  );
});

test('GET /healthz is 200; GET /readyz is 200 and reports the store and its durability', async (t) => {
  const keel = await start(t);
  const health = await keel.request('GET', '/healthz', undefined, null);
  assert.equal(health.status, 200);
  assert.deepEqual(health.body, { ok: true });
  const ready = await keel.request('GET', '/readyz', undefined, null);
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, {
    ready: true,
    store: 'ok',
    changeFeed: 'ok',
    durability: 'fsync',
    notDurableCommits: 0,
  });
});

test('/openapi.json is an OpenAPI 3 document describing the /v1/runs routes', async (t) => {
  const keel = await start(t);
  const res = await keel.request('GET', '/openapi.json', undefined, null);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const doc = res.body;
  assert.match(doc.openapi, /^3\.\d+\.\d+$/);
  assert.equal(typeof doc.info?.title, 'string');
  assert.equal(typeof doc.info?.version, 'string');
  assert.equal(doc.components?.securitySchemes?.bearer?.scheme, 'bearer');

  const expected: Record<string, string[]> = {
    '/v1/runs': ['get', 'post'],
    '/v1/runs/{id}': ['get'],
    '/v1/runs/{id}/cancel': ['post'],
    '/v1/runs/{id}/input': ['post'],
    '/v1/runs/{id}/retry': ['post'],
    '/v1/runs/{id}/steps': ['get'],
    '/v1/runs/{id}/events': ['get'],
  };
  for (const [path, methods] of Object.entries(expected)) {
    assert.ok(doc.paths?.[path], `${path} is missing`);
    for (const method of methods) {
      const op = doc.paths[path][method];
      assert.ok(op, `${method.toUpperCase()} ${path} is missing`);
      assert.ok(
        Object.keys(op.responses ?? {}).some((s) => /^2\d\d$/.test(s)),
        `${method} ${path} has no 2xx response`,
      );
      for (const status of Object.keys(op.responses))
        assert.ok(/^[1-5]\d\d$|^default$/.test(status), `${path}: bad status key ${status}`);
      const params: Array<{ in: string; name: string; required?: boolean }> = op.parameters ?? [];
      for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
        const p = params.find((x) => x.in === 'path' && x.name === name);
        assert.ok(p, `${method} ${path}: path parameter ${name} is not declared`);
        assert.equal(
          p.required,
          true,
          `${method} ${path}: path parameter ${name} must be required`,
        );
      }
    }
  }
  assert.ok(
    doc.paths['/v1/runs'].post.requestBody?.content?.['application/json'],
    'POST /v1/runs documents its JSON body',
  );
  const listParams = doc.paths['/v1/runs'].get.parameters
    .map((p: { name: string }) => p.name)
    .sort();
  assert.deepEqual(listParams, ['agent', 'code', 'cursor', 'limit', 'rerunOf', 'status']);
  // Internal routes stay out of the document.
  for (const hidden of ['/healthz', '/readyz', '/openapi.json'])
    assert.equal(doc.paths[hidden], undefined);
});

test('/openapi.json: every $ref resolves inside the document', async (t) => {
  const keel = await start(t);
  const doc = (await keel.request('GET', '/openapi.json', undefined, null)).body;
  const refs = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.add(v);
        else walk(v);
      }
    }
  };
  walk(doc.paths);
  walk(doc.components);
  assert.ok(refs.size > 0);
  const dangling = [...refs].filter((ref) => {
    if (!ref.startsWith('#/')) return true;
    let node: any = doc;
    for (const part of ref.slice(2).split('/'))
      node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return node === undefined;
  });
  assert.deepEqual(dangling, [], `dangling $refs: ${dangling.join(', ')}`);
});
