// The live relay between two processes' worth of relays on one real Postgres database: events go
// only to a run someone follows elsewhere, a tool output too large for one notification arrives
// whole in consecutive pieces, a relay never hears its own events, and a follow that ended lapses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LiveEvent } from '../src/domain/live-events.ts';
import { PostgresLiveRelay } from '../src/store/postgres/live-relay.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';

async function until(what: string, probe: () => boolean, detail = () => ''): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} ${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('relays on one database: followed runs only, large output in pieces, never an echo', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const db = await createFreshDatabase();
  const follower = new PostgresLiveRelay(db.url);
  const executor = new PostgresLiveRelay(db.url);
  t.after(async () => {
    await follower.close();
    await executor.close();
    await db.drop();
  });
  await Promise.all([follower.start(), executor.start()]);
  const heard: Array<{ runId: string; event: LiveEvent }> = [];
  const echoed: LiveEvent[] = [];
  follower.onEvent((runId, event) => heard.push({ runId, event }));
  executor.onEvent((_runId, event) => echoed.push(event));

  assert.equal(executor.followedElsewhere('run-a'), false);
  const unfollow = follower.follow('run-a');
  await until('the executor to hear the follow', () => executor.followedElsewhere('run-a'));
  assert.equal(follower.followedElsewhere('run-a'), false, 'its own follow is not "elsewhere"');
  assert.equal(executor.followedElsewhere('run-b'), false);

  const big = Array.from({ length: 3_000 }, (_, i) => `line ${i} "quoted" é\n`).join('');
  executor.send('run-a', { type: 'model.delta', data: { seq: 1, index: 0, text: 'Hel' } });
  executor.send('run-a', {
    type: 'tool.output',
    data: { seq: 2, executionId: 'x.2', tool: 'exec', attempt: 1, stream: 'stdout', text: big },
  });
  executor.send('run-a', { type: 'model.delta', data: { seq: 1, index: 1, text: 'lo' } });
  await until(
    'the whole output',
    () =>
      heard
        .filter((h) => h.event.type === 'tool.output')
        .map((h) => h.event.data.text)
        .join('') === big,
    () => JSON.stringify(heard.map((h) => [h.event.type, String(h.event.data.text).length])),
  );
  await until(
    'both deltas',
    () => heard.filter((h) => h.event.type === 'model.delta').length === 2,
  );
  assert.ok(heard.every((h) => h.runId === 'run-a'));
  const pieces = heard.filter((h) => h.event.type === 'tool.output');
  assert.ok(pieces.length > 1, 'cut in pieces to fit notifications');
  assert.ok(pieces.every((p) => p.event.data.stream === 'stdout' && p.event.data.seq === 2));
  assert.deepEqual(
    heard.filter((h) => h.event.type === 'model.delta').map((h) => h.event.data.text),
    ['Hel', 'lo'],
    'in the order sent',
  );
  assert.deepEqual(echoed, [], 'the executor never hears its own events');
  unfollow();
  assert.equal(executor.followedElsewhere('run-a'), true, 'an ended follow lapses, later');
});
