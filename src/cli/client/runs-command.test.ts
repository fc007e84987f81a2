// `keel runs …` against a small real HTTP server that speaks the documented API (routes, error
// bodies, cursors, SSE with Last-Event-ID). Every test closes its server and then checks that no
// socket, server or timer outlived it: a leaked handle fails the test.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { runRunsCommand } from './runs-command.ts';
import { KeelHttpClient, StreamError } from './http-client.ts';

const KEY = 'test-key';
const DEADLINE_MS = 5_000;
const POLL_MS = 5;
const TRACKED_HANDLES = ['TCPSocketWrap', 'TCPServerWrap', 'Timeout'];

interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

type Handler = (
  req: Recorded,
  res: http.ServerResponse,
  raw: http.IncomingMessage,
) => void | Promise<void>;

function countHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of process.getActiveResourcesInfo())
    counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

function leakedHandles(baseline: Map<string, number>): string[] {
  const now = countHandles();
  return TRACKED_HANDLES.filter((name) => (now.get(name) ?? 0) > (baseline.get(name) ?? 0)).map(
    (name) => `${name}×${(now.get(name) ?? 0) - (baseline.get(name) ?? 0)}`,
  );
}

async function pollUntil(condition: () => boolean): Promise<boolean> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await delay(POLL_MS);
  }
  return true;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function sendError(res: http.ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message } });
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text === '' ? undefined : JSON.parse(text);
}

/**
 * A stand-in for Keel's API: records every request, checks the bearer key, hands the rest to
 * `handler`.
 */
async function startApi(handler: Handler) {
  const baseline = countHandles();
  const requests: Recorded[] = [];
  const server = http.createServer((raw, res) => {
    void (async () => {
      const url = new URL(raw.url ?? '/', 'http://localhost');
      const req: Recorded = {
        method: raw.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: raw.headers,
        body: await readBody(raw),
      };
      requests.push(req);
      if (raw.headers.authorization !== `Bearer ${KEY}`)
        return sendError(res, 401, 'unauthorized', 'The API key is missing or not recognised.');
      await handler(req, res, raw);
      if (!res.headersSent) sendError(res, 404, 'not_found', `no route ${req.method} ${req.path}`);
    })().catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'internal', String(error));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => closeAndCheck(server, baseline),
  };
}

async function closeAndCheck(server: http.Server, baseline: Map<string, number>): Promise<void> {
  let closed = false;
  server.close(() => (closed = true));
  if (!(await pollUntil(() => closed))) {
    server.closeAllConnections();
    assert.fail(
      'the server still had an open connection after the command returned: a response was left unread',
    );
  }
  if (!(await pollUntil(() => leakedHandles(baseline).length === 0)))
    assert.fail(`leaked handles: ${leakedHandles(baseline).join(', ')}`);
}

function captureIo(env: NodeJS.ProcessEnv, options: { tty?: boolean } = {}) {
  const text = { stdout: '', stderr: '' };
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk, _encoding, callback) {
        text[name] += String(chunk);
        for (const waiter of waiters.filter((w) => w.pattern.test(text.stdout))) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
        callback();
      },
    });
  const stdout = sink('stdout');
  const stderr = Object.assign(sink('stderr'), options.tty ? { isTTY: true, columns: 100 } : {});
  /**
   * Resolves once stdout matches: lets the server act only after the client has shown what it
   * received.
   */
  const untilStdout = (pattern: RegExp): Promise<void> =>
    pattern.test(text.stdout)
      ? Promise.resolve()
      : new Promise((resolve) => waiters.push({ pattern, resolve }));
  return { io: { stdout, stderr, env }, text, untilStdout };
}

function makeRun(id: string, fields: Record<string, unknown> = {}) {
  const at = '2025-01-01T12:00:00.000Z';
  return {
    id,
    tenantId: 't1',
    agent: 'echo',
    agentVersion: 'v1',
    status: 'queued',
    stateVersion: 1,
    priority: 'interactive',
    input: {},
    createdAt: at,
    updatedAt: at,
    ...fields,
  };
}

function makeEvents(types: string[]) {
  return types.map((type, i) => ({
    seq: i + 1,
    type,
    at: new Date(Date.UTC(2025, 0, 1, 12, 0, i)).toISOString(),
    data: { n: i + 1 },
  }));
}

function sseFrame(event: { seq: number; type: string }): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

function openSse(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

function printedSeqs(stdout: string): number[] {
  return [...stdout.matchAll(/ #(\d+) /g)].map((m) => Number(m[1]));
}

const SIX = makeEvents([
  'run.started',
  'step.started',
  'step.completed',
  'model.completed',
  'tool.completed',
  'run.succeeded',
]);

test('submit sends the documented body and prints the new id', async () => {
  const api = await startApi((req, res) => {
    if (req.method === 'POST' && req.path === '/v1/runs') sendJson(res, 201, makeRun('run_1'));
  });
  try {
    const { io, text } = captureIo({ KEEL_API_KEY: KEY });
    const argv = [
      'submit',
      'echo',
      '--url',
      api.url,
      '--input',
      '{"name":"ann"}',
      '--idempotency-key',
      'k-1',
      '--priority',
      'batch',
    ];
    argv.push(
      '--max-steps',
      '5',
      '--max-tokens',
      '1000',
      '--max-cost-usd',
      '0.25',
      '--deadline-ms',
      '60000',
    );
    assert.equal(await runRunsCommand(argv, io), 0, text.stderr);
    assert.equal(text.stdout, 'run_1\n');
    assert.equal(api.requests.length, 1);
    assert.equal(api.requests[0]?.headers['content-type'], 'application/json');
    assert.deepEqual(api.requests[0]?.body, {
      agent: 'echo',
      input: { name: 'ann' },
      idempotencyKey: 'k-1',
      priority: 'batch',
      budget: { maxSteps: 5, maxTokens: 1000, maxCostUsd: 0.25, deadlineMs: 60000 },
    });
  } finally {
    await api.close();
  }
});

test('submit --input-file reads the input and leaves out options not given; --json prints the run', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'keel-runs-'));
  const api = await startApi((req, res) => {
    if (req.method === 'POST' && req.path === '/v1/runs')
      sendJson(res, 201, makeRun('run_2', { input: req.body }));
  });
  try {
    const file = join(dir, 'input.json');
    await writeFile(file, '{"items":[1,2,3]}');
    const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
    assert.equal(
      await runRunsCommand(['submit', 'summarize', '--input-file', file, '--json'], io),
      0,
      text.stderr,
    );
    assert.deepEqual(api.requests[0]?.body, { agent: 'summarize', input: { items: [1, 2, 3] } });
    assert.equal((JSON.parse(text.stdout) as { id: string }).id, 'run_2');
  } finally {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }
});

function waitApi(outcome: 'succeeded' | 'failed') {
  const events = makeEvents(['run.started', 'step.completed', `run.${outcome}`]);
  const final =
    outcome === 'succeeded'
      ? { status: 'succeeded', result: { answer: 42 } }
      : { status: 'failed', error: { code: 'agent_error', message: 'boom' } };
  return startApi((req, res) => {
    if (req.method === 'POST' && req.path === '/v1/runs')
      return sendJson(res, 201, makeRun('run_w'));
    if (req.path === '/v1/runs/run_w/events') {
      openSse(res);
      for (const event of events) res.write(sseFrame(event));
      return void res.end();
    }
    if (req.path === '/v1/runs/run_w')
      sendJson(res, 200, makeRun('run_w', { ...final, endedAt: '2025-01-01T12:00:03.000Z' }));
  });
}

test('submit --wait follows the run and exits 0 only when it succeeded', async () => {
  for (const [outcome, code, shown] of [
    ['succeeded', 0, '"answer": 42'],
    ['failed', 1, 'agent_error: boom'],
  ] as const) {
    const api = await waitApi(outcome);
    try {
      const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
      assert.equal(await runRunsCommand(['submit', 'echo', '--wait'], io), code, text.stderr);
      assert.equal(text.stdout.split('\n')[0], 'run_w');
      assert.deepEqual(printedSeqs(text.stdout), [1, 2, 3]);
      assert.match(text.stdout, new RegExp(`run run_w ${outcome}`));
      assert.ok(text.stdout.includes(shown), text.stdout);
    } finally {
      await api.close();
    }
  }
});

test('list --all follows nextCursor to the end, keeping the filters on every page', async () => {
  const pages: Record<string, { runs: unknown[]; nextCursor: string | null }> = {
    '': { runs: [makeRun('r1'), makeRun('r2')], nextCursor: 'c1' },
    c1: { runs: [makeRun('r3'), makeRun('r4')], nextCursor: 'c2' },
    c2: { runs: [makeRun('r5')], nextCursor: null },
  };
  const api = await startApi((req, res) => {
    const page =
      req.method === 'GET' && req.path === '/v1/runs'
        ? pages[req.query.get('cursor') ?? '']
        : undefined;
    if (page) sendJson(res, 200, page);
  });
  try {
    const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
    assert.equal(
      await runRunsCommand(
        ['list', '--all', '--status', 'queued', '--agent', 'echo', '--limit', '2'],
        io,
      ),
      0,
      text.stderr,
    );
    assert.deepEqual(
      api.requests.map((r) => r.query.get('cursor')),
      [null, 'c1', 'c2'],
    );
    for (const r of api.requests)
      assert.deepEqual(
        [r.query.get('status'), r.query.get('agent'), r.query.get('limit')],
        ['queued', 'echo', '2'],
      );
    const lines = text.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^ID\s+STATUS\s+AGENT/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(/\s+/)[0]),
      ['r1', 'r2', 'r3', 'r4', 'r5'],
    );

    const json = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
    assert.equal(await runRunsCommand(['list', '--all', '--json'], json.io), 0);
    const parsed = JSON.parse(json.text.stdout) as { runs: { id: string }[]; nextCursor: unknown };
    assert.deepEqual(
      parsed.runs.map((r) => r.id),
      ['r1', 'r2', 'r3', 'r4', 'r5'],
    );
    assert.equal(parsed.nextCursor, null);
  } finally {
    await api.close();
  }
});

test('an API error exits 1 and prints the error code', async () => {
  const api = await startApi((req, res) => {
    if (req.path === '/v1/runs/nope')
      sendError(res, 404, 'run_not_found', 'No run with this id belongs to the caller’s tenant.');
  });
  try {
    const missing = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
    assert.equal(await runRunsCommand(['get', 'nope'], missing.io), 1);
    assert.equal(missing.text.stdout, '');
    assert.match(missing.text.stderr, /run_not_found/);
    assert.match(missing.text.stderr, /HTTP 404/);

    const badKey = captureIo({ KEEL_API_KEY: 'wrong', KEEL_URL: api.url });
    assert.equal(await runRunsCommand(['list'], badKey.io), 1);
    assert.match(badKey.text.stderr, /unauthorized/);
  } finally {
    await api.close();
  }
});

test('a missing API key exits 2 before any request and says how to provide one', async () => {
  const api = await startApi(() => undefined);
  try {
    const { io, text } = captureIo({ KEEL_URL: api.url });
    assert.equal(await runRunsCommand(['get', 'run_1'], io), 2);
    assert.match(text.stderr, /KEEL_API_KEY/);
    assert.match(text.stderr, /--key/);
    assert.equal(api.requests.length, 0);
  } finally {
    await api.close();
  }
});

test('events follows the stream to the terminal event and resumes with Last-Event-ID after a dropped connection', async () => {
  const lastEventIds: (string | undefined)[] = [];
  const { io, text, untilStdout } = captureIo({ KEEL_API_KEY: KEY });
  const api = await startApi(async (req, res, raw) => {
    if (req.path !== '/v1/runs/run_e/events') return;
    const lastId = req.headers['last-event-id'] as string | undefined;
    lastEventIds.push(lastId);
    assert.equal(req.headers.accept, 'text/event-stream');
    openSse(res);
    if (lastEventIds.length === 1) {
      for (const event of SIX.slice(0, 3)) res.write(sseFrame(event));
      await untilStdout(/ #3 /); // the client has shown event 3: now cut the connection mid-stream
      raw.socket.destroy();
      return;
    }
    for (const event of SIX.filter((e) => e.seq > Number(lastId ?? 0))) res.write(sseFrame(event));
    res.end();
  });
  try {
    io.env.KEEL_URL = api.url;
    assert.equal(await runRunsCommand(['events', 'run_e'], io), 0, text.stderr);
    assert.deepEqual(lastEventIds, [undefined, '3']);
    assert.deepEqual(printedSeqs(text.stdout), [1, 2, 3, 4, 5, 6]);
    assert.match(text.stdout, /run\.succeeded/);
    assert.match(text.stderr, /resuming after event 3/);
  } finally {
    await api.close();
  }
});

test('events resumes after a clean early end, tolerates CRLF and comments, and never prints an event twice', async () => {
  const lastEventIds: (string | undefined)[] = [];
  const api = await startApi((req, res) => {
    if (req.path !== '/v1/runs/run_c/events') return;
    lastEventIds.push(req.headers['last-event-id'] as string | undefined);
    openSse(res);
    if (lastEventIds.length === 1) {
      res.write(': keep-alive\r\n\r\n');
      for (const event of SIX.slice(0, 2)) res.write(sseFrame(event).replaceAll('\n', '\r\n'));
      return void res.end(); // ends before the run did: the client must come back
    }
    for (const event of SIX.slice(1)) res.write(sseFrame(event)); // overlaps: event 2 again
    res.end();
  });
  try {
    const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
    assert.equal(await runRunsCommand(['events', 'run_c'], io), 0, text.stderr);
    assert.deepEqual(lastEventIds, [undefined, '2']);
    assert.deepEqual(printedSeqs(text.stdout), [1, 2, 3, 4, 5, 6]);
  } finally {
    await api.close();
  }
});

test('events --after past the end of a finished run stops instead of reconnecting', async () => {
  let streams = 0;
  const api = await startApi((req, res) => {
    if (req.path === '/v1/runs/run_d/events' && req.query.get('format') === 'json')
      return sendJson(res, 200, []); // what a finished stream left behind: nothing
    if (req.path === '/v1/runs/run_d/events') {
      streams += 1;
      openSse(res);
      return void res.end();
    }
    if (req.path === '/v1/runs/run_d')
      sendJson(res, 200, makeRun('run_d', { status: 'succeeded' }));
  });
  try {
    const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
    assert.equal(await runRunsCommand(['events', 'run_d', '--after', '6'], io), 0, text.stderr);
    assert.equal(api.requests[0]?.headers['last-event-id'], '6');
    assert.equal(streams, 1);
    assert.equal(text.stdout, '');
  } finally {
    await api.close();
  }
});

test('events on an unknown run fails at once with the API code, without retrying', async () => {
  const api = await startApi((req, res) => {
    if (req.path === '/v1/runs/ghost/events') sendError(res, 404, 'run_not_found', 'no such run');
  });
  try {
    const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url });
    assert.equal(await runRunsCommand(['events', 'ghost'], io), 1);
    assert.match(text.stderr, /run_not_found/);
    assert.equal(api.requests.length, 1);
  } finally {
    await api.close();
  }
});

test('events on a terminal draws a status line, clears it, and closes a stream the server left open', async () => {
  const api = await startApi((req, res) => {
    if (req.path !== '/v1/runs/run_t/events') return;
    openSse(res);
    for (const event of SIX) res.write(sseFrame(event)); // and never ends: the client must hang up itself
  });
  try {
    const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: api.url }, { tty: true });
    assert.equal(await runRunsCommand(['events', 'run_t'], io), 0, text.stderr);
    assert.deepEqual(printedSeqs(text.stdout), [1, 2, 3, 4, 5, 6]);
    assert.match(text.stderr, /run_t/);
    assert.ok(text.stderr.endsWith('\r\x1b[2K'), 'the status line is erased at the end');
  } finally {
    await api.close();
  }
});

test('--json output parses for get, events (live and --no-follow) and steps', async () => {
  const steps = [
    {
      seq: 1,
      kind: 'model',
      name: 'gpt',
      status: 'succeeded',
      attempts: 1,
      queuedAt: '2025-01-01T12:00:00.000Z',
      startedAt: '2025-01-01T12:00:00.250Z',
      endedAt: '2025-01-01T12:00:01.500Z',
    },
    {
      seq: 2,
      kind: 'tool',
      name: 'search',
      status: 'failed',
      attempts: 3,
      executionId: 'x1',
      error: { code: 'tool_failed', message: 'nope' },
    },
  ];
  const api = await startApi((req, res) => {
    if (req.path === '/v1/runs/run_j')
      return sendJson(res, 200, makeRun('run_j', { status: 'running' }));
    if (req.path === '/v1/runs/run_j/steps') return sendJson(res, 200, { steps });
    if (req.path !== '/v1/runs/run_j/events') return;
    if (req.query.get('format') === 'json')
      return sendJson(
        res,
        200,
        SIX.filter((e) => e.seq > Number(req.query.get('after'))),
      );
    openSse(res);
    for (const event of SIX) res.write(sseFrame(event));
    res.end();
  });
  try {
    const env = { KEEL_API_KEY: KEY, KEEL_URL: api.url };
    const run = captureIo(env);
    assert.equal(await runRunsCommand(['get', 'run_j', '--json'], run.io), 0);
    assert.deepEqual(JSON.parse(run.text.stdout), makeRun('run_j', { status: 'running' }));

    const live = captureIo(env);
    assert.equal(await runRunsCommand(['events', 'run_j', '--json'], live.io), 0);
    assert.deepEqual(
      live.text.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
      SIX,
    );

    const once = captureIo(env);
    assert.equal(
      await runRunsCommand(['events', 'run_j', '--no-follow', '--after', '4', '--json'], once.io),
      0,
    );
    assert.deepEqual(JSON.parse(once.text.stdout), SIX.slice(4));

    const stepsJson = captureIo(env);
    assert.equal(await runRunsCommand(['steps', 'run_j', '--json'], stepsJson.io), 0);
    assert.deepEqual(JSON.parse(stepsJson.text.stdout), { steps });

    const table = captureIo(env);
    assert.equal(await runRunsCommand(['steps', 'run_j'], table.io), 0);
    assert.match(table.text.stdout, /^SEQ\s+KIND\s+NAME/);
    assert.match(table.text.stdout, /gpt\s+succeeded\s+1\s+\+0ms\s+250ms\s+1\.3s/);
    assert.match(table.text.stdout, /tool_failed: nope/);
  } finally {
    await api.close();
  }
});

test('cancel and input post to their routes', async () => {
  const api = await startApi((req, res) => {
    if (req.method === 'POST' && req.path === '/v1/runs/run_x/cancel')
      return sendJson(res, 202, makeRun('run_x', { status: 'cancelling' }));
    if (req.method === 'POST' && req.path === '/v1/runs/run_x/input')
      sendJson(res, 200, makeRun('run_x', { status: 'running' }));
  });
  try {
    const env = { KEEL_API_KEY: KEY, KEEL_URL: api.url };
    const cancelled = captureIo(env);
    assert.equal(await runRunsCommand(['cancel', 'run_x'], cancelled.io), 0, cancelled.text.stderr);
    assert.match(cancelled.text.stdout, /cancel requested for run_x \(status: cancelling\)/);
    assert.deepEqual(api.requests[0]?.body, {}, 'no grace: the default applies');
    const graced = captureIo(env);
    assert.equal(
      await runRunsCommand(['cancel', 'run_x', '--grace', '250'], graced.io),
      0,
      graced.text.stderr,
    );
    assert.deepEqual(api.requests[1]?.body, { graceMs: 250 }, '--grace is the request’s graceMs');
    const bad = captureIo(env);
    assert.equal(await runRunsCommand(['cancel', 'run_x', '--grace', '3600001'], bad.io), 2);
    assert.match(bad.text.stderr, /--grace must be an integer from 0 to 3600000/);
    const answered = captureIo(env);
    assert.equal(
      await runRunsCommand(['input', 'run_x', 'approve', '{"ok":true}'], answered.io),
      0,
      answered.text.stderr,
    );
    assert.deepEqual(api.requests[2]?.body, { key: 'approve', value: { ok: true } });
  } finally {
    await api.close();
  }
});

test('an unreachable server exits 1 with a message naming the URL', async () => {
  const api = await startApi(() => undefined);
  const url = api.url;
  await api.close();
  const { io, text } = captureIo({ KEEL_API_KEY: KEY, KEEL_URL: url });
  assert.equal(await runRunsCommand(['get', 'run_1'], io), 1);
  assert.ok(text.stderr.includes(`${url}/v1/runs/run_1`), text.stderr);
  assert.match(text.stderr, /ECONNREFUSED/);
});

test('usage errors exit 2: no or unknown commands, bad flags and bad JSON; help exits 0', async () => {
  const api = await startApi(() => undefined);
  try {
    const env = { KEEL_API_KEY: KEY, KEEL_URL: api.url };
    for (const argv of [['help'], ['--help'], ['get', '--help']]) {
      const { io, text } = captureIo(env);
      assert.equal(await runRunsCommand(argv, io), 0, argv.join(' '));
      assert.match(text.stdout, /usage: keel runs/);
    }
    const cases: [string[], RegExp][] = [
      [[], /usage: keel runs/],
      [['explode'], /unknown command 'explode'/],
      [['get'], /expected <id>/],
      [['get', 'r1', '--bogus'], /unknown flag --bogus; the flags here are --url, --key, --json/],
      [['list', '--limit'], /--limit needs a value/],
      [['submit', 'echo', '--input', '{nope'], /--input is not valid JSON/],
      [['submit', 'echo', '--priority', 'urgent'], /--priority must be one of interactive, batch/],
      [['submit', 'echo', '--max-steps', '1.5'], /--max-steps must be an integer/],
      [['input', 'r1', 'approve', 'yes'], /a string needs quotes/],
      [['list', '--url', 'ftp://x'], /http/],
    ];
    for (const [argv, message] of cases) {
      const { io, text } = captureIo(env);
      assert.equal(await runRunsCommand(argv, io), 2, argv.join(' '));
      assert.match(text.stdout + text.stderr, message, argv.join(' '));
    }
    assert.equal(api.requests.length, 0);
  } finally {
    await api.close();
  }
});

test('events gives up after its bounded reconnections when the server keeps failing', async () => {
  const api = await startApi((_req, res) => sendError(res, 503, 'store_busy', 'try later'));
  const attempts: number[] = [];
  try {
    const client = new KeelHttpClient({ baseUrl: api.url, apiKey: KEY });
    const events = client.runs.events('run_f', {
      maxReconnects: 2,
      onReconnect: (info) => attempts.push(info.attempt),
    });
    await assert.rejects(async () => {
      for await (const event of events) assert.fail(`unexpected ${event.type}`);
    }, StreamError);
    assert.deepEqual(attempts, [1, 2]);
    assert.equal(api.requests.length, 3);
  } finally {
    await api.close();
  }
});
