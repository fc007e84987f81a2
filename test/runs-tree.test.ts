// GET /v1/runs/:id/tree and `keel runs tree` over real HTTP on a real SQLite store (the store's
// walk is in the conformance suite on both stores): a family of three generations with each
// child's parent-end policy; the limit and `truncated`; another tenant's run and bad limits are
// 4xx; the CLI prints the tree indented by depth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateApiKey, hashApiKey } from '../src/api/auth.ts';
import { runRunsCommand } from '../src/cli/client/runs-command.ts';
import { defineAgent } from '../src/index.ts';
import { captureCli } from './support/cli-capture.ts';
import { startKeelOn } from './support/schedules-keel.ts';

const leaf = defineAgent({
  name: 'leaf',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('go');
  },
});

const mid = defineAgent({
  name: 'mid',
  version: '1',
  async run(ctx) {
    void ctx.child('leaf', { at: 'grandchild' }, { onParentEnd: 'wait' }).catch(() => undefined);
    return ctx.waitForInput('go');
  },
});

const top = defineAgent({
  name: 'top',
  version: '1',
  async run(ctx) {
    void ctx.child('mid', {}, { onParentEnd: 'detach' }).catch(() => undefined);
    void ctx.child('leaf', { at: 'child' }).catch(() => undefined);
    return ctx.waitForInput('go');
  },
});

test('run tree: three generations with their policies, limited, tenant-scoped; keel runs tree', async (t) => {
  const keel = await startKeelOn(t, 'sqlite', [leaf, mid, top]);
  const id = (await keel.request('POST', '/v1/runs', { agent: 'top' })).body.id as string;
  const tree = async (query = '') => keel.request('GET', `/v1/runs/${id}/tree${query}`);
  let body: any;
  const deadline = Date.now() + 60_000;
  for (;;) {
    body = (await tree()).body;
    if (body.runs.length === 4 && body.runs.every((r: any) => r.status === 'waiting')) break;
    if (Date.now() > deadline) throw new Error(`the family never settled: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(body.rootId, id);
  assert.equal(body.truncated, false);
  const [root, ...rest] = body.runs;
  assert.deepEqual(
    [root.id, root.agent, root.depth, root.parentRunId, root.onParentEnd],
    [id, 'top', 0, null, null],
  );
  const byAgent = new Map(rest.map((r: any) => [`${r.agent}@${r.depth}`, r]));
  const midRun = byAgent.get('mid@1') as any;
  assert.deepEqual([midRun.parentRunId, midRun.onParentEnd], [id, 'detach']);
  assert.deepEqual(
    [(byAgent.get('leaf@1') as any).parentRunId, (byAgent.get('leaf@1') as any).onParentEnd],
    [id, 'cancel'],
  );
  const grandchild = byAgent.get('leaf@2') as any;
  assert.deepEqual(
    [grandchild.parentRunId, grandchild.onParentEnd, grandchild.waitingReason],
    [midRun.id, 'wait', 'input'],
  );
  // A subtree: the child is its root, with its own policy.
  const sub = (await keel.request('GET', `/v1/runs/${midRun.id}/tree`)).body;
  assert.deepEqual(
    sub.runs.map((r: any) => [r.id, r.depth, r.onParentEnd]),
    [
      [midRun.id, 0, 'detach'],
      [grandchild.id, 1, 'wait'],
    ],
  );

  const cut = (await tree('?limit=2')).body;
  assert.deepEqual([cut.runs.length, cut.truncated, cut.runs[0].id], [2, true, id]);
  for (const bad of ['?limit=0', '?limit=1001', '?limit=two', '?depth=1'])
    assert.equal((await tree(bad)).status, 400, bad);
  const missing = await keel.request('GET', '/v1/runs/run_nope/tree');
  assert.deepEqual([missing.status, missing.body.error.code], [404, 'run_not_found']);
  const otherKey = generateApiKey();
  await keel.store.ensureTenant('other', hashApiKey(otherKey));
  const foreign = await keel.request('GET', `/v1/runs/${id}/tree`, undefined, otherKey);
  assert.deepEqual([foreign.status, foreign.body.error.code], [404, 'run_not_found']);

  const env = { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey };
  const printed = await captureCli(runRunsCommand, env, ['tree', id]);
  assert.equal(printed.code, 0, printed.err);
  const lines = printed.out.trim().split('\n');
  assert.match(lines[0]!, /^ID\s+STATUS\s+AGENT\s+ON PARENT END/);
  assert.match(lines[1]!, new RegExp(`^${id}\\s+waiting \\(input\\)\\s+top@1\\s+-`));
  assert.ok(
    lines.some((l) =>
      new RegExp(`^    ${grandchild.id}\\s+waiting \\(input\\)\\s+leaf@1\\s+wait`).test(l),
    ),
    printed.out,
  );
  const json = await captureCli(runRunsCommand, env, ['tree', id, '--limit', '2', '--json']);
  assert.deepEqual(JSON.parse(json.out).truncated, true);
  const usage = await captureCli(runRunsCommand, env, ['tree', id, '--limit', '0']);
  assert.equal(usage.code, 2);
});
