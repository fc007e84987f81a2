// GET /v1/events (one stream for many runs) and POST /v1/runs:batch on both stores: every event of
// the runs followed arrives once, in the tenant-wide order, across a cut and a resume (on Postgres
// the resume goes to another process); filters and bad inputs; the Postgres cursor never passes a
// transaction still in flight, so an event committed late with a lower position is not skipped.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import pg from 'pg';
import { defineAgent } from '../src/index.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { TENANT_EVENTS_EXAMINED_MAX } from '../src/store/procedures/reads.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { EVENT_CURSOR_START, type EventCursor } from '../src/domain/event-cursor.ts';
import { newRunId } from '../src/domain/ids.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { apiClient, distributedScene } from './support/distributed.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';
import { startKeel } from './support/keel-server.ts';

const TERMINAL = new Set(['run.succeeded', 'run.failed', 'run.cancelled']);
const STREAM_DEADLINE_MS = 30_000;

const stepper = defineAgent({
  name: 'stepper',
  version: '1',
  async run(ctx, input: { n: number }) {
    await ctx.step('a', async () => input.n);
    await ctx.step('b', async () => input.n * 2);
    return { n: input.n };
  },
});
const other = defineAgent({
  name: 'other',
  version: '1',
  async run() {
    return 'ok';
  },
});

interface Seen {
  cursor: string;
  runId: string;
  seq: number;
  type: string;
}

/**
 * Reads GET /v1/events at `url` until `done(seen)` holds or `stopAfter` events came (then hangs up);
 * returns the events and the last cursor the stream gave (its first `id:` included).
 */
async function readStream(
  url: string,
  key: string,
  query: string,
  options: { lastEventId?: string; stopAfter?: number; done: (seen: Seen[]) => boolean },
): Promise<{ events: Seen[]; lastId: string | undefined }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('stream stalled')), STREAM_DEADLINE_MS);
  const res = await fetch(`${url}/v1/events${query}`, {
    headers: {
      authorization: `Bearer ${key}`,
      ...(options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId }),
    },
    signal: abort.signal,
  });
  if (res.status !== 200)
    throw new Error(`GET /v1/events${query}: ${res.status} ${await res.text()}`);
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => pending.push(m) });
  const decoder = new TextDecoder();
  const events: Seen[] = [];
  let lastId: string | undefined;
  try {
    for await (const chunk of res.body!) {
      parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      for (const m of pending.splice(0)) {
        if (m.id !== undefined) lastId = m.id;
        if (m.data === '') continue;
        const view = JSON.parse(m.data);
        assert.equal(m.id, view.cursor, 'the SSE id is the event cursor');
        events.push({ cursor: view.cursor, runId: view.runId, seq: view.seq, type: view.type });
      }
      if (events.length >= (options.stopAfter ?? Infinity) || options.done(events)) break;
    }
  } catch (error) {
    throw new Error(
      `the stream at ${url} stalled after ${events.length} events: ${events.map((e) => `${e.runId.slice(-4)}/${e.seq} ${e.type}`).join(', ')}`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return { events, lastId };
}

const allEnded = (ids: readonly string[]) => (seen: Seen[]) => {
  const ended = new Set(seen.filter((e) => TERMINAL.has(e.type)).map((e) => e.runId));
  return ids.every((id) => ended.has(id));
};

/** Cursor order: (tx, pos) as integers. */
function assertOrdered(events: Seen[]): void {
  const key = (c: string) => c.split('.').map((p) => BigInt(p));
  for (let i = 1; i < events.length; i++) {
    const [t0, p0] = key(events[i - 1]!.cursor);
    const [t1, p1] = key(events[i]!.cursor);
    assert.ok(t0! < t1! || (t0 === t1 && p0! < p1!), `out of order at ${i}`);
  }
}

function assertExactly(events: Seen[], stored: Array<{ runId: string; seq: number }>): void {
  const got = events.map((e) => `${e.runId}/${e.seq}`);
  assert.equal(new Set(got).size, got.length, 'no event twice');
  assert.deepEqual(
    [...got].sort(),
    stored.map((e) => `${e.runId}/${e.seq}`).sort(),
    'every stored event of the runs, and nothing else',
  );
}

test('SQLite: one stream follows a batch of runs, cut and resumed with Last-Event-ID, no loss and no duplicates', async (t) => {
  const keel = await startKeel({ agents: [stepper, other] });
  t.after(() => keel.close());
  const head = await keel.request('GET', '/v1/events?format=json&from=now');
  assert.equal(head.status, 200);
  assert.deepEqual(head.body.events, []);
  const batch = await keel.request('POST', '/v1/runs:batch', {
    runs: [
      ...Array.from({ length: 12 }, (_, n) => ({ agent: 'stepper', input: { n } })),
      { agent: 'other' },
    ],
  });
  assert.equal(batch.status, 200);
  const ids = batch.body.results.map((r: any) => r.run.id as string);
  const stepperIds = ids.slice(0, 12);
  const first = await readStream(
    keel.url,
    keel.apiKey,
    `?agent=stepper&after=${head.body.nextCursor}`,
    {
      stopAfter: 7,
      done: allEnded(stepperIds),
    },
  );
  const rest = await readStream(keel.url, keel.apiKey, '?agent=stepper', {
    lastEventId: first.events.at(-1)!.cursor,
    done: (seen) => allEnded(stepperIds)([...first.events, ...seen]),
  });
  const events = [...first.events, ...rest.events];
  assertOrdered(events);
  const stored: Array<{ runId: string; seq: number }> = [];
  for (const id of stepperIds)
    for (const e of await keel.store.listEvents(id, 0, 1000))
      stored.push({ runId: id, seq: e.seq });
  assertExactly(events, stored);

  // Filters: run ids and types; the JSON page agrees with the stream.
  const typed = await keel.request(
    'GET',
    `/v1/events?format=json&runIds=${ids[0]},${ids[12]}&types=run.succeeded`,
  );
  assert.equal(typed.status, 200);
  assert.deepEqual(
    typed.body.events.map((e: any) => [e.runId, e.type, e.agent]).sort(),
    [
      [ids[0], 'run.succeeded', 'stepper'],
      [ids[12], 'run.succeeded', 'other'],
    ].sort(),
  );
  const page = await keel.request('GET', '/v1/events?format=json&agent=stepper&limit=5');
  assert.equal(page.body.events.length, 5);
  const next = await keel.request(
    'GET',
    `/v1/events?format=json&agent=stepper&limit=500&after=${page.body.nextCursor}`,
  );
  assert.equal(page.body.events.length + next.body.events.length, stored.length);
});

test('GET /v1/events: bad filters and cursors are 400 with codes; another tenant sees nothing', async (t) => {
  const keel = await startKeel({ agents: [other] });
  t.after(() => keel.close());
  const run = await keel.request('POST', '/v1/runs', { agent: 'other' });
  await keel.waitForRun(run.body.id, (r) => r.status === 'succeeded');
  const cases: Array<[string, string, Record<string, string>?]> = [
    ['?after=abc', 'invalid_cursor'],
    ['?after=1.2.3', 'invalid_cursor'],
    ['?format=json', 'invalid_cursor', { 'last-event-id': 'nope' }],
    ['?after=0.1&from=start', 'validation_failed'],
    ['?runIds=a,,b', 'validation_failed'],
    [`?runIds=${Array.from({ length: 101 }, (_, i) => `r${i}`).join(',')}`, 'validation_failed'],
    ['?format=json&limit=0', 'validation_failed'],
    ['?format=json&limit=501', 'validation_failed'],
    ['?from=later', 'validation_failed'],
    ['?bogus=1', 'validation_failed'],
  ];
  for (const [query, code, headers] of cases) {
    const res = await fetch(`${keel.url}/v1/events${query}`, {
      headers: { authorization: `Bearer ${keel.apiKey}`, ...headers },
    });
    const body = (await res.json()) as any;
    assert.equal(res.status, 400, `${query}: ${JSON.stringify(body)}`);
    assert.equal(body.error.code, code, query);
  }
  const noKey = await fetch(`${keel.url}/v1/events`);
  assert.equal(noKey.status, 401);
  // Another tenant's key sees none of this tenant's events.
  const tenant = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'other-tenant' },
    keel.adminKey,
  );
  assert.ok(tenant.status === 201 || tenant.status === 200, JSON.stringify(tenant.body));
  const otherKey = tenant.body.apiKey ?? tenant.body.key ?? tenant.body.secret;
  const theirs = await keel.request('GET', '/v1/events?format=json', undefined, otherKey);
  assert.equal(theirs.status, 200, JSON.stringify(theirs.body));
  assert.deepEqual(theirs.body.events, []);
  const mine = await keel.request('GET', '/v1/events?format=json');
  assert.ok(mine.body.events.length >= 2);
});

test('Postgres: a late commit with a lower position is held back, never skipped', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const db = await createFreshDatabase();
  const store = new PostgresStore({ connectionString: db.url });
  t.after(async () => {
    await store.close();
    await db.drop();
  });
  await store.migrate();
  const tenant = await store.ensureTenant('t', 'hash-t');
  const newRun = (key: string) => ({
    id: newRunId(),
    tenantId: tenant.id,
    agent: 'a',
    agentVersion: '1',
    input: { key },
    priority: 'interactive' as const,
    budget: {},
    metadata: null,
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
  });
  // A transaction in flight in another database of the same server (another application, another
  // test) holds nothing back: it cannot write this database's events.
  const elsewhere = await createFreshDatabase();
  const other = new pg.Client({ connectionString: elsewhere.url });
  other.on('error', () => {});
  await other.connect();
  t.after(async () => {
    await other.end().catch(() => {});
    await elsewhere.drop();
  });
  await other.query('BEGIN');
  await other.query('SELECT pg_current_xact_id()');
  const { run: first } = await store.createRun(newRun('first'));
  const late = new pg.Client({ connectionString: db.url });
  late.on('error', () => {});
  await late.connect();
  await late.query('BEGIN');
  // Takes its position now (lower than the next run's) but commits after it.
  await late.query(
    "INSERT INTO events (run_id, seq, type, at, data) VALUES ($1, 1000, 'test.late', 0, 'null')",
    [first.id],
  );
  const { run: second } = await store.createRun(newRun('second'));
  // A transaction of this database that ended just after a read's snapshot still counts for that
  // read (the horizon errs towards holding back), so read until the event shows.
  const readUntil = async (after: EventCursor, count: number) => {
    for (let i = 0; ; i++) {
      const { events: page } = await store.listTenantEvents(tenant.id, {}, after, 100);
      if (page.length >= count || i === 200) return page;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const before = await readUntil(EVENT_CURSOR_START, 1);
  assert.deepEqual(
    before.map((e) => [e.runId, e.type]),
    [[first.id, 'run.created']],
    'nothing past a transaction in flight',
  );
  await late.query('COMMIT');
  await late.end();
  await other.query('ROLLBACK');
  const after = await readUntil(before.at(-1)!.cursor, 2);
  assert.deepEqual(
    after.map((e) => [e.runId, e.type]),
    [
      [first.id, 'test.late'],
      [second.id, 'run.created'],
    ],
  );
  // The batch: one transaction, per-item answers.
  const results = await store.createRuns([
    newRun('x'),
    { ...newRun('y'), idempotencyKey: 'k', requestHash: 'h1' },
    { ...newRun('y2'), idempotencyKey: 'k', requestHash: 'h2' },
  ]);
  assert.equal((results[0] as any).created, true);
  assert.equal((results[1] as any).created, true);
  assert.equal((results[2] as any).code, 'idempotency_conflict');
});

const AGENTS = fileURLToPath(new URL('./fixtures/distributed-agents.ts', import.meta.url));
const OTHER_AGENTS = fileURLToPath(new URL('./fixtures/dev-agents.ts', import.meta.url));
const KEY = 'tenant-events-key';

test('Postgres, two processes: a stream on A carries the runs B and A execute; resumed on B, nothing lost or repeated', {
  timeout: 180_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'tenant-events');
  const env = { KEEL_TEST_LEDGER: join(dir, 'ledger.txt') };
  // A serves none of the agents (so it runs nothing): every event it streams was committed by B and
  // reached A only through Postgres.
  const start = (name: string, agents: string) =>
    startKeelRole({
      role: 'server',
      name: `keel-events-${name}`,
      agents,
      databaseUrl: db.url,
      apiKey: KEY,
      env,
      // Two servers start one after the other on a shared, busy CI machine.
      startupTimeoutMs: 60_000,
    });
  const a = await start('a', OTHER_AGENTS);
  processes.push(a);
  const b = await start('b', AGENTS);
  processes.push(b);
  const head = await apiClient(a.url, KEY).request('GET', '/v1/events?format=json&from=now');
  assert.equal(head.status, 200);
  const runs = Array.from({ length: 24 }, (_, i) => ({
    agent: 'dist-steps',
    input: { key: `r${i}`, steps: 3, ms: [5] },
    idempotencyKey: `r${i}`,
  }));
  const batch = await apiClient(b.url, KEY).request('POST', '/v1/runs:batch', {
    runs: [...runs, runs[0], { agent: 'missing' }],
  });
  assert.equal(batch.status, 200, JSON.stringify(batch.body));
  const statuses = batch.body.results.map((r: any) => r.error?.code ?? r.status);
  assert.deepEqual(statuses, [...runs.map(() => 'created'), 'existing', 'agent_not_found']);
  const ids: string[] = batch.body.results.slice(0, 24).map((r: any) => r.run.id);
  const query = `?after=${head.body.nextCursor}&agent=dist-steps`;
  const first = await readStream(a.url, KEY, query, { stopAfter: 40, done: allEnded(ids) });
  const rest = await readStream(b.url, KEY, '?agent=dist-steps', {
    lastEventId: first.events.at(-1)!.cursor,
    done: (seen) => allEnded(ids)([...first.events, ...seen]),
  });
  const events = [...first.events, ...rest.events];
  assertOrdered(events);
  const stored = await db.query<{ run_id: string; seq: string }>(
    'SELECT run_id, seq FROM events WHERE run_id = ANY($1)',
    [ids],
  );
  assertExactly(
    events,
    stored.map((r) => ({ runId: r.run_id, seq: Number(r.seq) })),
  );
  const owners = await db.query<{ owner: string }>(
    "SELECT DISTINCT data::jsonb->>'worker' AS owner FROM events WHERE type = 'run.started' AND run_id = ANY($1)",
    [ids],
  );
  assert.deepEqual(
    owners.map((o) => o.owner),
    [b.owner],
    'B ran every run: A streamed only what it heard from Postgres',
  );
});

// A reader whose tenant has nothing among the events it examines (a quiet tenant beside a busy
// one, or a filter that matches rarely) still moves forward: the page's cursor passes what was
// examined, and one read examines a bounded number of events, so a poll costs the same however
// much other tenants wrote before it.
for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: a tenant read passes over other tenants' events, a bounded number at a time`, {
    skip: backend === 'postgres' && !(await postgresAvailable()),
  }, async (t) => {
    let store: SqliteStore | PostgresStore;
    if (backend === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'keel-tenant-events-'));
      store = new SqliteStore({ path: join(dir, 'keel.db') });
      t.after(() => rmSync(dir, { recursive: true, force: true }));
    } else {
      const db = await createFreshDatabase();
      store = new PostgresStore({ connectionString: db.url });
      t.after(() => db.drop());
    }
    t.after(() => store.close());
    await store.migrate();
    const busy = await store.ensureTenant('busy', 'hash-busy');
    const quiet = await store.ensureTenant('quiet', 'hash-quiet');
    const runOf = (tenantId: string) => ({
      id: newRunId(),
      tenantId,
      agent: 'a',
      agentVersion: '1',
      input: null,
      priority: 'batch' as const,
      budget: {},
      metadata: null,
      parentRunId: null,
      idempotencyKey: null,
      requestHash: null,
    });
    // One `run.created` event each, more than one read examines.
    const busyRuns = TENANT_EVENTS_EXAMINED_MAX + 100;
    for (let i = 0; i < busyRuns; i += 1_000)
      await store.createRuns(
        Array.from({ length: Math.min(1_000, busyRuns - i) }, () => runOf(busy.id)),
      );
    const all = async (after: EventCursor) => {
      const pages = [];
      for (let cursor = after; ; ) {
        const page = await store.listTenantEvents(busy.id, {}, cursor, 1_000);
        pages.push(...page.events);
        if (page.events.length === 0 && !page.more) return pages;
        cursor = page.cursor;
      }
    };
    const busyEvents = await all(EVENT_CURSOR_START);
    assert.equal(busyEvents.length, busyRuns, 'the busy tenant reads all its events');
    // The quiet tenant examines the first bound's worth, finds nothing, and is told where to go on.
    const first = await store.listTenantEvents(quiet.id, {}, EVENT_CURSOR_START, 100);
    assert.deepEqual(first.events, []);
    assert.equal(first.more, true);
    assert.deepEqual(first.cursor, busyEvents[TENANT_EVENTS_EXAMINED_MAX - 1]!.cursor);
    const second = await store.listTenantEvents(quiet.id, {}, first.cursor, 100);
    assert.deepEqual(second.events, []);
    assert.equal(second.more, false);
    assert.deepEqual(second.cursor, busyEvents.at(-1)!.cursor);
    // From there, its own next event is the first thing it reads.
    const { run } = await store.createRun(runOf(quiet.id));
    const next = await store.listTenantEvents(quiet.id, {}, second.cursor, 100);
    assert.deepEqual(
      next.events.map((e) => [e.runId, e.type]),
      [[run.id, 'run.created']],
    );
    // A filter that matches nothing moves on the same way.
    const filtered = await store.listTenantEvents(
      busy.id,
      { types: ['run.succeeded'] },
      EVENT_CURSOR_START,
      100,
    );
    assert.deepEqual(filtered.events, []);
    assert.deepEqual(filtered.cursor, busyEvents[TENANT_EVENTS_EXAMINED_MAX - 1]!.cursor);
  });
}
