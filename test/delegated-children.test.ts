// Children started with a delegated token end with their parent (issue 20), over real HTTP: a tool
// with `delegate: ['runs:child']` starts an `idle` child through POST /v1/runs; when the parent
// succeeds, fails or is cancelled the child ends `cancelled` (its policy `cancel`, the default),
// while a child started with `onParentEnd: 'detach'` runs on; `wait` and a top-level policy are
// 400 on_parent_end_refused. On a real `keel dev` (and `keel server` on Postgres) killed with
// SIGKILL between the child's creation and the parent's end, the restarted process still cancels
// the child: no orphan.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { idle, spawner } from './fixtures/delegated-children-agents.ts';
import { keelScene } from './support/keel-scene.ts';
import { postgresAvailable } from './support/postgres.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/delegated-children-agents.ts', import.meta.url));

describe('delegated children end with their parent', () => {
  let keel: TestKeel;
  before(async () => {
    keel = await startKeel({ agents: [spawner, idle] });
  });
  after(() => keel.close());

  /** Starts `spawner` and waits until its tool has started the child: the parent and child ids. */
  async function parentWithChild(input: Record<string, unknown> = {}, fields = {}) {
    const created = await keel.request('POST', '/v1/runs', { agent: 'spawner', input, ...fields });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const parentId: string = created.body.id;
    await keel.waitForRun(parentId, (r) => r.status === 'waiting');
    const steps = await keel.request('GET', `/v1/runs/${parentId}/steps`);
    const started = steps.body.steps.find((s: any) => s.name === 'start_child').output;
    return { parentId, started };
  }

  async function childStarted(input: Record<string, unknown> = {}, fields = {}) {
    const { parentId, started } = await parentWithChild(input, fields);
    assert.equal(started.status, 201, JSON.stringify(started));
    const child = await keel.waitForRun(started.childId, (r) => r.status === 'waiting');
    assert.equal(child.parentRunId, parentId);
    return { parentId, childId: started.childId as string };
  }

  async function policyInTree(parentId: string, childId: string) {
    const tree = await keel.request('GET', `/v1/runs/${parentId}/tree`);
    return tree.body.runs.find((r: any) => r.id === childId)?.onParentEnd;
  }

  const finish = (runId: string) =>
    keel.request('POST', `/v1/runs/${runId}/input`, { key: 'finish', value: 1 });

  test('a child is narrowed by its parent’s egress list: it inherits it, and cannot widen it', async () => {
    const a = { host: 'a.example', port: 443 };
    const b = { host: 'b.example', port: 443 };
    const inherited = await childStarted({}, { egressAllow: [a] });
    const child = await keel.request('GET', `/v1/runs/${inherited.childId}`);
    assert.deepEqual(child.body.egressAllow, [a]);
    const widened = await childStarted({ childEgressAllow: [a, b] }, { egressAllow: [a] });
    const narrowed = await keel.request('GET', `/v1/runs/${widened.childId}`);
    assert.deepEqual(narrowed.body.egressAllow, [a], 'b is not in the parent’s list');
    for (const id of [inherited.parentId, widened.parentId])
      await keel.request('POST', `/v1/runs/${id}/cancel`);
  });

  for (const [how, input, ended] of [
    ['succeeds', {}, 'succeeded'],
    ['fails', { fail: true }, 'failed'],
  ] as const)
    test(`the parent ${how}: its child (cancel, the default) ends cancelled`, async () => {
      const { parentId, childId } = await childStarted(input);
      assert.equal(await policyInTree(parentId, childId), 'cancel');
      assert.equal((await finish(parentId)).status, 202);
      await keel.waitForRun(parentId, (r) => r.status === ended);
      const child = await keel.waitForRun(childId, (r) => r.status === 'cancelled');
      assert.equal(child.status, 'cancelled');
      const events = await keel.request('GET', `/v1/runs/${childId}/events?format=json`);
      const cancelling = events.body.find((e: any) => e.type === 'run.cancelling');
      assert.equal(cancelling?.data.by, `parent ${parentId}`);
    });

  test('the parent is cancelled while its child runs: the child ends cancelled', async () => {
    const { parentId, childId } = await childStarted({ onParentEnd: 'cancel' });
    assert.equal((await keel.request('POST', `/v1/runs/${parentId}/cancel`)).status, 202);
    await keel.waitForRun(parentId, (r) => r.status === 'cancelled');
    await keel.waitForRun(childId, (r) => r.status === 'cancelled');
  });

  test("onParentEnd: 'detach': the child runs on after its parent ends", async () => {
    const { parentId, childId } = await childStarted({ onParentEnd: 'detach' });
    assert.equal(await policyInTree(parentId, childId), 'detach');
    await finish(parentId);
    await keel.waitForRun(parentId, (r) => r.status === 'succeeded');
    // The parent's end committed with nothing for the child: it is still waiting, untouched.
    const child = (await keel.request('GET', `/v1/runs/${childId}`)).body;
    assert.equal(child.status, 'waiting');
    const events = await keel.request('GET', `/v1/runs/${childId}/events?format=json`);
    assert.equal(
      events.body.some((e: any) => e.type === 'run.cancelling'),
      false,
    );
    assert.equal((await keel.request('POST', `/v1/runs/${childId}/cancel`)).status, 202);
    await keel.waitForRun(childId, (r) => r.status === 'cancelled');
  });

  test("onParentEnd 'wait', or a policy without a delegated token: 400 on_parent_end_refused", async () => {
    const { parentId, started } = await parentWithChild({ onParentEnd: 'wait' });
    assert.deepEqual([started.status, started.code], [400, 'on_parent_end_refused']);
    const bogus = await parentWithChild({ onParentEnd: 'sometimes' });
    assert.deepEqual([bogus.started.status, bogus.started.code], [400, 'validation_failed']);
    const topLevel = await keel.request('POST', '/v1/runs', {
      agent: 'idle',
      onParentEnd: 'cancel',
    });
    assert.equal(topLevel.status, 400);
    assert.equal(topLevel.body.error.code, 'on_parent_end_refused');
    for (const id of [parentId, bogus.parentId]) await finish(id);
  });
});

for (const store of ['sqlite', 'postgres'] as const)
  test(`${store === 'sqlite' ? 'keel dev' : 'keel server on Postgres'} killed with SIGKILL between the child’s creation and the parent’s end: no orphan after restart`, {
    timeout: 120_000,
    skip: store === 'postgres' && !(await postgresAvailable()),
  }, async (t) => {
    const key = 'keel_delegated-children-test-key';
    const scene = await keelScene(t, {
      agents: AGENTS,
      apiKey: key,
      prefix: 'keel-dchildren-',
      store,
    });
    await scene.start();
    const created = await scene.api('POST', '/v1/runs', { agent: 'spawner' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const parentId: string = created.body.id;
    await scene.until(parentId, (r) => r.status === 'waiting');
    const steps = await scene.api('GET', `/v1/runs/${parentId}/steps`);
    const started = steps.body.steps.find((s: any) => s.name === 'start_child').output;
    assert.equal(started.status, 201, JSON.stringify(started));
    await scene.until(started.childId, (r) => r.status === 'waiting');

    await scene.restart(); // kill -9: nothing of the link lives in the killed process
    assert.equal(
      (await scene.api('POST', `/v1/runs/${parentId}/input`, { key: 'finish', value: 1 })).status,
      202,
    );
    await scene.until(parentId, (r) => r.status === 'succeeded');
    await scene.until(started.childId, (r) => r.status === 'cancelled');
    const tree = await scene.api('GET', `/v1/runs/${parentId}/tree`);
    assert.deepEqual(
      tree.body.runs.map((r: any) => [r.id, r.status, r.onParentEnd]),
      [
        [parentId, 'succeeded', null],
        [started.childId, 'cancelled', 'cancel'],
      ],
    );
  });
