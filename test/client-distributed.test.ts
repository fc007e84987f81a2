// keel/client across processes on Postgres: the long-poll and the event stream served by server A
// are woken by commits that worker B makes, through Postgres LISTEN/NOTIFY (A's event hub), never by
// A polling the store. A is kept from claiming the run as in distributed-sse.test.ts: its one run
// slot (KEEL_MAX_ACTIVE_RUNS=1) is held by a long blocker, so B runs the gated agent.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createKeelClient, type RunEvent } from '../src/client/index.ts';
import { distributedScene, until } from './support/distributed.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/distributed-agents.ts', import.meta.url));
const KEY = 'client-distributed-key';
const STEPS = 10;
const LONG_POLL_MS = 50_000;

test('server A answers a long-poll and streams events as worker B finishes the run', {
  timeout: 90_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'client-dist');
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
  const { runs } = createKeelClient({ baseUrl: a.url, apiKey: KEY });
  const blocker = await runs.create({ agent: 'dist-blocker', input: { ms: 600_000 } });
  await until(
    'A to hold the blocker',
    async () => {
      const [row] = await db.query<{ lease_owner: string | null }>(
        'SELECT lease_owner FROM runs WHERE id = $1',
        [blocker.id],
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

  const run = await runs.create({
    agent: 'dist-gated',
    input: { steps: STEPS, ms: 20 },
    idempotencyKey: 'gated-1',
  });
  assert.equal(
    (
      await runs.create({
        agent: 'dist-gated',
        input: { steps: STEPS, ms: 20 },
        idempotencyKey: 'gated-1',
      })
    ).id,
    run.id,
  );
  await until(
    'the run to park on its input',
    async () => ((await runs.get(run.id)).status === 'waiting' ? true : undefined),
    20_000,
    () => b.output(),
  );
  const parked = await runs.result(run.id, { waitMs: 200 });
  assert.equal(parked.done, false, 'still waiting: 202 with the run');

  const startedAt = Date.now();
  const outcome = runs.result(run.id, { waitMs: LONG_POLL_MS });
  const seen: RunEvent[] = [];
  const following = (async () => {
    for await (const event of runs.events(run.id)) seen.push(event);
  })();
  await runs.sendInput(run.id, 'go', 'now');
  const ended = await outcome;
  assert.equal(ended.done, true);
  assert.equal(ended.run.status, 'succeeded');
  assert.deepEqual(ended.run.result, { go: 'now', total: (STEPS * (STEPS - 1)) / 2 });
  assert.ok(Date.now() - startedAt < LONG_POLL_MS, 'answered when B finished, not at the wait');
  await following;
  const stored = await runs.listEvents(run.id);
  assert.deepEqual(
    seen.map((e) => e.seq),
    stored.map((e) => e.seq),
  );
  const claims = seen.filter((e) => e.type === 'run.started');
  for (const claim of claims)
    assert.equal((claim.data as { worker: string }).worker, b.owner, 'B ran it, not A');
  assert.ok(claims.length >= 1);
});
