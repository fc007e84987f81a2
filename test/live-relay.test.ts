// Live output across processes (issue 18): on one Postgres, a follower connected to `keel server`
// sees the `tool.output` of a run that a `keel worker` executes, before the step completes. The
// server's only slot is held by a blocker, so the worker is the one that runs the talker; the
// attempts say so. Without the relay (src/store/postgres/live-relay.ts) the server's follower
// hears nothing live.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { createKeelClient, type RunEvent, type ToolOutput } from '../src/client/index.ts';
import { apiClient, distributedScene, until } from './support/distributed.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';
import { skipUnless } from './support/sandbox.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/live-relay-agents.ts', import.meta.url));
const KEY = 'live-relay-key';

test('a follower on the server sees live exec output of a run the worker executes', {
  skip: !(await postgresAvailable()) ? 'no Postgres' : skipUnless('process'),
  timeout: 180_000,
}, async (t) => {
  const { db, processes } = await distributedScene(t, 'live-relay');
  const server = await startKeelRole({
    role: 'server',
    name: 'relay-server',
    agents: AGENTS,
    databaseUrl: db.url,
    apiKey: KEY,
    env: { KEEL_MAX_ACTIVE_RUNS: '1' },
  });
  processes.push(server);
  const api = apiClient(server.url, KEY);
  const blocker = await api.submit('dist-blocker', { ms: 600_000 });
  await until(
    'the server to hold the blocker',
    async () => {
      const [row] = await db.query<{ lease_owner: string | null }>(
        "SELECT lease_owner FROM runs WHERE id = $1 AND status = 'running'",
        [blocker],
      );
      return row?.lease_owner === server.owner ? true : undefined;
    },
    60_000,
    () => server.output(),
  );
  const worker = await startKeelRole({
    role: 'worker',
    name: 'relay-worker',
    agents: AGENTS,
    databaseUrl: db.url,
  });
  processes.push(worker);

  const client = createKeelClient({ baseUrl: server.url, apiKey: KEY });
  const { id } = await client.runs.create({ agent: 'relay-talker' });
  await until(
    'the talker to wait for go',
    async () => ((await client.runs.get(id)).waitingReason === 'input' ? true : undefined),
    60_000,
  );
  const pieces: Array<{ output: ToolOutput; eventsBefore: number }> = [];
  const events: RunEvent[] = [];
  let attach: () => void = () => undefined;
  const attached = new Promise<void>((resolve) => (attach = resolve));
  const followed = (async () => {
    for await (const event of client.runs.events(id, {
      onToolOutput: (output) => pieces.push({ output, eventsBefore: events.length }),
    })) {
      events.push(event);
      attach();
    }
  })();
  await attached;
  await client.runs.sendInput(id, 'go', true);
  await followed;

  const run = await client.runs.get(id);
  assert.equal(run.status, 'succeeded');
  const attempts = await client.runs.attempts(id);
  assert.equal(attempts.at(-1)?.worker, worker.owner, 'the worker ran the talker');
  const completedAt = events.findIndex(
    (e) => e.type === 'effect.completed' && (e.data as { name?: string }).name === 'exec',
  );
  assert.ok(completedAt > 0, JSON.stringify(events.map((e) => e.type)));
  const second = pieces.find((p) => p.output.text.includes('relay-line-two'));
  assert.ok(second, `the second line arrived live: ${JSON.stringify(pieces)}`);
  assert.equal(second.output.stream, 'stderr');
  assert.ok(second.eventsBefore <= completedAt, 'before the step completed');
  await api.request('POST', `/v1/runs/${blocker}/cancel`);
});
