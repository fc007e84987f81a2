// SSE across processes: a client streams GET /v1/runs/:id/events from server A while worker process
// B commits the run's events; it must see every event, in order, without gaps, as B commits them.
//
// Design. A must accept the submission, so A registers the agent (its API resolves agents from its
// own registry), and a process that registers an agent also claims its runs. So A is kept from
// claiming instead: A runs with KEEL_MAX_ACTIVE_RUNS=1 and its one slot is taken by a long blocker
// run that it claims before B starts. Every run of the gated agent is therefore claimed by B (the
// test checks each `run.started` event names B's lease owner). The gated agent parks on
// waitForInput('go') before doing anything, so the streams are opened on parked runs and all the
// step events that follow are committed by B while the clients are connected: A learns of them only
// through Postgres LISTEN/NOTIFY (its SSE loop does not poll). One stream is also cut mid-run and
// resumed with Last-Event-ID.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { apiClient, distributedScene, until } from './support/distributed.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/distributed-agents.ts', import.meta.url));
const KEY = 'distributed-sse-key';
const RUNS = 8;
const STEPS = 20;
const STEP_MS = 30;
const STREAM_DEADLINE_MS = 20_000;

interface Received {
  seq: number;
  type: string;
  data: any;
  at: number;
}

/**
 * Opens one SSE connection (resolved once A answered with the stream's headers: A subscribes to the
 * run's changes before it answers). read() collects events until A ends the stream, or until
 * `stopAfter` events (then hangs up).
 */
async function openStream(
  url: string,
  runId: string,
  lastEventId?: number,
  stopAfter = Number.POSITIVE_INFINITY,
): Promise<{ read(): Promise<Received[]> }> {
  const abort = new AbortController();
  const res = await fetch(`${url}/v1/runs/${runId}/events`, {
    headers: {
      authorization: `Bearer ${KEY}`,
      accept: 'text/event-stream',
      ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}),
    },
    signal: abort.signal,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const read = async () => {
    // A stream that stops delivering (A never hears of B's commits) fails here rather than at the
    // test timeout.
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, STREAM_DEADLINE_MS);
    const pending: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => pending.push(message) });
    const decoder = new TextDecoder();
    const received: Received[] = [];
    try {
      for await (const chunk of res.body!) {
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        for (const m of pending.splice(0)) {
          const view = JSON.parse(m.data);
          assert.equal(Number(m.id), view.seq, 'the SSE id is the event sequence number');
          assert.equal(m.event, view.type);
          received.push({ seq: view.seq, type: view.type, data: view.data, at: Date.now() });
        }
        if (received.length >= stopAfter) {
          abort.abort();
          break;
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    } finally {
      clearTimeout(deadline);
    }
    if (timedOut)
      throw new Error(
        `the stream of run ${runId} from A stalled after ${received.map((e) => `${e.seq} ${e.type}`).join(', ')}`,
      );
    return received;
  };
  return { read };
}

test('a client streaming from server A sees the events worker B commits, in order and without gaps', {
  timeout: 60_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'dist-sse');
  const env = { KEEL_TEST_LEDGER: join(dir, 'ledger.txt') };
  const a = await startKeelRole({
    role: 'server',
    name: 'keel-server-a',
    agents: AGENTS,
    databaseUrl: db.url,
    apiKey: KEY,
    env: { ...env, KEEL_MAX_ACTIVE_RUNS: '1' },
  });
  processes.push(a);
  const api = apiClient(a.url, KEY);
  const blocker = await api.submit('dist-blocker', { ms: 600_000 });
  await until(
    'A to hold the blocker',
    async () => {
      const [row] = await db.query<{ lease_owner: string | null }>(
        'SELECT lease_owner FROM runs WHERE id = $1',
        [blocker],
      );
      return row!.lease_owner === a.owner ? true : undefined;
    },
    10_000,
  );
  const b = await startKeelRole({
    role: 'worker',
    name: 'keel-worker-b',
    agents: AGENTS,
    databaseUrl: db.url,
    env,
  });
  processes.push(b);

  const ids: string[] = [];
  for (let i = 0; i < RUNS; i++)
    ids.push(await api.submit('dist-gated', { steps: STEPS, ms: STEP_MS }));
  await until(
    'every run parked on its input',
    async () => {
      const rows = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'waiting'",
        [ids],
      );
      return rows[0]!.n === RUNS ? true : undefined;
    },
    20_000,
    () => b.output(),
  );

  // Streams open on parked runs; then the input wakes them, and B commits everything that follows.
  const [cut, ...whole] = ids as [string, ...string[]];
  const streams = await Promise.all(whole.map((id) => openStream(a.url, id)));
  const cutStream = await openStream(a.url, cut, undefined, 10);
  const reading = streams.map((s) => s.read());
  const cutFirst = cutStream.read();
  const wokenAt = Date.now();
  for (const id of ids)
    assert.equal(
      (await api.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: id })).status,
      202,
    );
  const firstPart = await cutFirst;
  const resumed = await (await openStream(a.url, cut, firstPart.at(-1)!.seq)).read();
  const results = [[...firstPart, ...resumed], ...(await Promise.all(reading))];

  for (const [i, received] of results.entries()) {
    const id = i === 0 ? cut : whole[i - 1]!;
    const stored = await db.query<{ seq: string; type: string }>(
      'SELECT seq, type FROM events WHERE run_id = $1 ORDER BY seq',
      [id],
    );
    assert.deepEqual(
      received.map((e) => e.seq),
      stored.map((_, n) => n + 1),
      `run ${id}: the stream is gapless and in order`,
    );
    assert.deepEqual(
      received.map((e) => e.type),
      stored.map((e) => e.type),
      `run ${id}: the stream carries exactly the committed events`,
    );
    assert.equal(received.at(-1)!.type, 'run.succeeded');
    assert.deepEqual(received.at(-1)!.data.result, { go: id, total: (STEPS * (STEPS - 1)) / 2 });
    assert.equal(
      received.filter((e) => e.type === 'effect.completed').length,
      STEPS + 1,
      'the input and every step',
    );
    const claims = received.filter((e) => e.type === 'run.started');
    assert.ok(claims.length >= 2, 'claimed before the park and after the input');
    for (const claim of claims)
      assert.equal(claim.data.worker, b.owner, `run ${id} was run by B, not by A`);
    // Delivered live, as B committed them, not in one burst at the end: B's steps take STEPS ×
    // STEP_MS.
    const steps = received.filter((e) => e.type === 'effect.completed' && e.data.kind === 'step');
    if (i > 0)
      assert.ok(
        steps[0]!.at >= wokenAt && steps.at(-1)!.at - steps[0]!.at >= ((STEPS - 1) * STEP_MS) / 2,
        `run ${id}: step events arrived as they were committed`,
      );
  }
  assert.notEqual(firstPart.at(-1)!.type, 'run.succeeded', 'the first stream was cut mid-run');
  assert.equal(
    resumed[0]!.seq,
    firstPart.at(-1)!.seq + 1,
    'the resumed stream starts right after the last event seen',
  );
  const [blockerRow] = await db.query<{ lease_owner: string | null }>(
    'SELECT lease_owner FROM runs WHERE id = $1',
    [blocker],
  );
  assert.equal(blockerRow!.lease_owner, a.owner, 'A kept its one slot busy throughout');
});
