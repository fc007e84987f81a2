// Deadline-aware admission over real HTTP (issue 27): a run submitted with a deadline gets the
// expected finish its agent's measured completion rate and the runs due before it give
// (`expectedFinishAt`); `whenLate: refuse` answers 429 deadline_unmeetable and creates nothing,
// `whenLate: batch` admits it as batch, the default accepts it and shows the estimate; a run that
// can make its deadline, or has none, is admitted as asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { assertError } from './support/assert-error.ts';
import { startKeel } from './support/keel-server.ts';

let gate = Promise.withResolvers<void>();

/** Runs until the test opens the gate: counts as running (ahead of later runs) meanwhile. */
const gated = defineAgent({
  name: 'gated',
  version: '1',
  async run(ctx) {
    await ctx.step('gate', () => gate.promise.then(() => 1));
    return 'done';
  },
});

const COMPLETED = 4;
const HELD = 20;

test('a run expected after its deadline is refused, admitted as batch or accepted as asked', async (t) => {
  const keel = await startKeel({ agents: [gated] });
  t.after(async () => {
    gate.resolve();
    await keel.close();
  });
  const submit = (body: Record<string, unknown>) =>
    keel.request('POST', '/v1/runs', { agent: 'gated', ...body });

  // Nothing measured yet: no estimate, nothing refused.
  const cold = await submit({ budget: { deadlineMs: 60_000 }, whenLate: 'refuse' });
  assert.equal(cold.status, 201, JSON.stringify(cold.body));
  assert.equal(cold.body.expectedFinishAt, null);
  const first = [cold.body.id];
  for (let i = 1; i < COMPLETED; i++) first.push((await submit({})).body.id);
  gate.resolve();
  for (const id of first) await keel.waitForRun(id, (r) => r.status === 'succeeded');

  // COMPLETED runs in the last minute; HELD runs due within 60 s, running until the gate opens.
  gate = Promise.withResolvers<void>();
  const held: string[] = [];
  for (let i = 0; i < HELD; i++)
    held.push((await submit({ budget: { deadlineMs: 60_000 } })).body.id);
  for (const id of held) await keel.waitForRun(id, (r) => r.status === 'running');
  const listed = async () => (await keel.request('GET', '/v1/runs?limit=100')).body.runs.length;
  const before = await listed();

  // Due in 120 s behind HELD runs draining at COMPLETED per minute: expected in ~300 s.
  const refused = await submit({ budget: { deadlineMs: 120_000 }, whenLate: 'refuse' });
  assertError(refused, 429, 'deadline_unmeetable');
  assert.equal(refused.body.error.details.runsAhead, HELD);
  const expected = Date.parse(refused.body.error.details.expectedFinishAt);
  assert.ok(expected > Date.parse(refused.body.error.details.deadlineAt));
  assert.equal(await listed(), before, 'a refused run is not created');

  const accepted = await submit({ budget: { deadlineMs: 120_000 } });
  assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
  assert.equal(accepted.body.priority, 'interactive');
  assert.ok(Date.parse(accepted.body.expectedFinishAt) > Date.parse(accepted.body.deadlineAt));

  const demoted = await submit({ budget: { deadlineMs: 120_000 }, whenLate: 'batch' });
  assert.equal(demoted.status, 201, JSON.stringify(demoted.body));
  assert.equal(demoted.body.priority, 'batch');
  assert.ok(Date.parse(demoted.body.expectedFinishAt) > Date.parse(demoted.body.deadlineAt));
  const shown = await keel.request('GET', `/v1/runs/${demoted.body.id}`);
  assert.equal(shown.body.expectedFinishAt, demoted.body.expectedFinishAt);

  // An hour is enough: admitted as asked, with its estimate; no deadline, no estimate.
  const onTime = await submit({ budget: { deadlineMs: 3_600_000 }, whenLate: 'refuse' });
  assert.equal(onTime.status, 201, JSON.stringify(onTime.body));
  assert.equal(onTime.body.priority, 'interactive');
  assert.ok(Date.parse(onTime.body.expectedFinishAt) <= Date.parse(onTime.body.deadlineAt));
  const undated = await submit({ whenLate: 'refuse' });
  assert.equal(undated.status, 201);
  assert.equal(undated.body.expectedFinishAt, null);

  const bad = await submit({ budget: { deadlineMs: 1_000 }, whenLate: 'sometimes' });
  assertError(bad, 400, 'validation_failed');
});
