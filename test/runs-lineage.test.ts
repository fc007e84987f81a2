// Rerun, reset and fork of runs, end to end over real HTTP on a real SQLite store: a run that fails
// after three model calls (a fake OpenAI-compatible provider) and three side effects (a ledger file
// outside Keel) is fixed and reset — no model call is repeated and each side effect happens once;
// a non-determinism failure offers the position to reset from; reruns and forks carry their lineage
// in GET and lists; bad positions, unknown versions and live runs are clear 4xx answers; the CLI.
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { runRunsCommand } from '../src/cli/client/runs-command.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent, defineModel, defineTool } from '../src/sdk/define.ts';
import { captureCli } from './support/cli-capture.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';

const OPENAI_KEY = 'sk-fake-openai-key-lineage-0123456789';

/** The downstream system the side-effect tool writes to: one line per executed effect. */
const ledgerDir = mkdtempSync(join(tmpdir(), 'keel-ledger-'));
const LEDGER = join(ledgerDir, 'ledger.txt');
const ledger = (): Array<{ part: string; executionId: string }> => {
  try {
    return readFileSync(LEDGER, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};

const record = defineTool({
  name: 'record',
  description: 'Writes a part to the ledger (not safe to run twice)',
  input: z.object({ part: z.string(), text: z.string() }),
  effect: 'side-effect',
  run: ({ part }, t) => {
    appendFileSync(LEDGER, `${JSON.stringify({ part, executionId: t.executionId })}\n`);
    return { recorded: part };
  },
});

/** The bug: flipped by the "code fix" below. */
let fixed = false;

function writer(version: string, isFixed: () => boolean) {
  return defineAgent({
    name: 'writer',
    version,
    async run(ctx, input: { topic: string }) {
      for (const part of ['1', '2', '3']) {
        const reply = await ctx.model({
          model: 'openai',
          messages: [{ role: 'user', content: `${input.topic}: part ${part}` }],
        });
        await ctx.tool(record, { part, text: reply.text });
      }
      if (!isFixed()) throw new Error('bug after the third part');
      const final = await ctx.model({
        model: 'openai',
        messages: [{ role: 'user', content: `${input.topic}: final` }],
      });
      await ctx.tool(record, { part: 'final', text: final.text });
      return { text: final.text, version };
    },
  });
}

let firstStepRuns = 0;
let diverge = false;
const fickle = defineAgent({
  name: 'fickle',
  version: '1',
  async run(ctx) {
    await ctx.step('first', () => ++firstStepRuns);
    if (diverge) await ctx.step('inserted', () => 'new code'); // replay asks for another effect at 2
    await ctx.waitForInput('go');
    return 'ok';
  },
});

const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx, input: { n: number }) {
    const first = await ctx.step('first', () => input.n);
    const answer = await ctx.waitForInput('go');
    return { first, answer };
  },
});

async function startWithFake(t: import('node:test').TestContext) {
  const fake = await startFakeOpenAi((body) => {
    const last = body.messages.at(-1)?.content ?? '';
    return { kind: 'reply', text: `answer to ${last}` };
  });
  t.after(() => fake.close());
  const model = defineModel({
    name: 'openai',
    provider: 'openai',
    providerModel: 'fake-model',
    version: '2026-01',
    baseUrl: `${fake.url}/v1`,
    apiKeyEnv: 'FAKE_OPENAI_KEY',
    price: { inputPerMTok: 1, outputPerMTok: 1 },
  });
  const gateway = new ModelGateway([model], {
    secret: (name) => (name === 'FAKE_OPENAI_KEY' ? OPENAI_KEY : undefined),
  });
  const keel = await startKeel({
    agents: [writer('1', () => fixed), writer('2', () => true), fickle, waiter],
    gateway,
  });
  t.after(() => keel.close());
  return { fake, keel };
}

const prompts = (fake: { requests: Array<{ body: any }> }) =>
  fake.requests.map((r) => r.body.messages.at(-1).content as string);

async function failedWriterRun(keel: TestKeel, topic: string): Promise<string> {
  // The newest served version is 2 (fixed): pin version 1 to reproduce the bug.
  const created = await keel.request('POST', '/v1/runs', { agent: 'writer@1', input: { topic } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const failed = await keel.waitForRun(created.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error.code, 'agent_error');
  return created.body.id;
}

test.after(() => rmSync(ledgerDir, { recursive: true, force: true }));

test('a run failing after 3 model calls and 3 side effects, fixed and reset from its last position, repeats no call and no effect', async (t) => {
  const { fake, keel } = await startWithFake(t);
  fixed = false;
  const sourceId = await failedWriterRun(keel, 'reset');
  assert.deepEqual(prompts(fake), ['reset: part 1', 'reset: part 2', 'reset: part 3']);
  assert.deepEqual(
    ledger()
      .filter((e) => e.executionId.startsWith(sourceId))
      .map((e) => e.part),
    ['1', '2', '3'],
  );
  const steps = (await keel.request('GET', `/v1/runs/${sourceId}/steps`)).body.steps;
  const last = steps.at(-1).seq;
  assert.equal(last, 6, 'model, tool three times');

  fixed = true; // the code is fixed (same version: the prefix replays unchanged)
  const reset = await keel.request('POST', `/v1/runs/${sourceId}/reset`, { position: last });
  assert.equal(reset.status, 201, JSON.stringify(reset.body));
  assert.deepEqual(reset.body.resetFrom, { runId: sourceId, position: last });
  assert.equal(reset.body.rerunOf, null);
  assert.equal(reset.body.agentVersion, '1', 'the source’s version, still served');
  assert.deepEqual(reset.body.input, { topic: 'reset' });
  const done = await keel.waitForRun(reset.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.deepEqual(done.result, { text: 'answer to reset: final', version: '1' });

  // The provider saw each call once: the three before the position were replayed, not repeated.
  assert.deepEqual(prompts(fake), [
    'reset: part 1',
    'reset: part 2',
    'reset: part 3',
    'reset: final',
  ]);
  // Each side effect once: the first three under the source's execution ids, the new one under
  // the new run's.
  const entries = ledger().filter(
    (e) => e.executionId.startsWith(sourceId) || e.executionId.startsWith(reset.body.id),
  );
  assert.deepEqual(
    entries.map((e) => [e.part, e.executionId]),
    [
      ['1', `${sourceId}.2`],
      ['2', `${sourceId}.4`],
      ['3', `${sourceId}.6`],
      ['final', `${reset.body.id}.8`],
    ],
  );
  const newSteps = (await keel.request('GET', `/v1/runs/${reset.body.id}/steps`)).body.steps;
  assert.deepEqual(
    newSteps.map((s: any) => [s.seq, s.kind, s.status, s.fencingToken === 0]),
    [
      [1, 'model', 'succeeded', true],
      [2, 'tool', 'succeeded', true],
      [3, 'model', 'succeeded', true],
      [4, 'tool', 'succeeded', true],
      [5, 'model', 'succeeded', true],
      [6, 'tool', 'succeeded', true],
      [7, 'model', 'succeeded', false],
      [8, 'tool', 'succeeded', false],
    ],
  );
  assert.equal(done.counters.steps, 2, 'the reset run counts only what it executed');

  // Lineage in lists, and the source untouched.
  const list = (await keel.request('GET', '/v1/runs?agent=writer')).body.runs;
  assert.deepEqual(list.find((r: any) => r.id === reset.body.id)?.resetFrom, {
    runId: sourceId,
    position: last,
  });
  const source = (await keel.request('GET', `/v1/runs/${sourceId}`)).body;
  assert.deepEqual([source.status, source.rerunOf, source.resetFrom], ['failed', null, null]);
});

test('a fork to a fixed agent version from the last position, and an unknown version refused', async (t) => {
  const { fake, keel } = await startWithFake(t);
  fixed = false;
  const sourceId = await failedWriterRun(keel, 'fork');
  const unknown = await keel.request('POST', `/v1/runs/${sourceId}/fork`, {
    position: 6,
    agentVersion: '9',
  });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'agent_not_found');
  const forked = await keel.request('POST', `/v1/runs/${sourceId}/fork`, {
    position: 6,
    agentVersion: '2',
  });
  assert.equal(forked.status, 201, JSON.stringify(forked.body));
  assert.equal(forked.body.agentVersion, '2');
  assert.deepEqual(forked.body.resetFrom, { runId: sourceId, position: 6 });
  const done = await keel.waitForRun(forked.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.result.version, '2');
  assert.deepEqual(prompts(fake), ['fork: part 1', 'fork: part 2', 'fork: part 3', 'fork: final']);
  assert.deepEqual(
    ledger()
      .filter((e) => e.executionId.startsWith(forked.body.id))
      .map((e) => e.part),
    ['final'],
  );

  // A fork without a position is a rerun with changes: a new input, nothing copied.
  const changed = await keel.request('POST', `/v1/runs/${sourceId}/fork`, {
    input: { topic: 'other' },
    agentVersion: '2',
  });
  assert.equal(changed.status, 201);
  assert.deepEqual(
    [changed.body.rerunOf, changed.body.resetFrom, changed.body.input],
    [sourceId, null, { topic: 'other' }],
  );
  const rerunDone = await keel.waitForRun(changed.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(rerunDone.status, 'succeeded');
  assert.equal(prompts(fake).filter((p) => p.startsWith('other:')).length, 4);
});

test('rerun: same agent and input, lineage in GET and in lists filtered by rerunOf; idempotent with a key', async (t) => {
  const { keel } = await startWithFake(t);
  const created = await keel.request('POST', '/v1/runs', {
    agent: 'waiter',
    input: { n: 7 },
    priority: 'batch',
    metadata: { ticket: 'T-1' },
  });
  await keel.waitForRun(created.body.id, (r) => r.status === 'waiting');
  await keel.request('POST', `/v1/runs/${created.body.id}/input`, { key: 'go', value: 'yes' });
  await keel.waitForRun(created.body.id, (r) => r.status === 'succeeded');

  const first = await keel.request('POST', `/v1/runs/${created.body.id}/rerun`, {
    idempotencyKey: 'rerun-1',
  });
  assert.equal(first.status, 201, JSON.stringify(first.body));
  assert.deepEqual(
    [first.body.rerunOf, first.body.resetFrom, first.body.agent, first.body.agentVersion],
    [created.body.id, null, 'waiter', '1'],
  );
  assert.deepEqual(
    [first.body.input, first.body.priority, first.body.metadata],
    [{ n: 7 }, 'batch', { ticket: 'T-1' }],
  );
  const again = await keel.request('POST', `/v1/runs/${created.body.id}/rerun`, {
    idempotencyKey: 'rerun-1',
  });
  assert.deepEqual([again.status, again.body.id], [200, first.body.id]);
  const second = await keel.request('POST', `/v1/runs/${created.body.id}/rerun`);
  assert.equal(second.status, 201, JSON.stringify(second.body));
  // A rerun executes everything again: it waits for its own input.
  await keel.waitForRun(first.body.id, (r) => r.status === 'waiting');
  assert.equal(
    (await keel.request('GET', `/v1/runs/${first.body.id}`)).body.rerunOf,
    created.body.id,
  );
  const reruns = (await keel.request('GET', `/v1/runs?rerunOf=${created.body.id}`)).body.runs;
  assert.deepEqual(
    reruns.map((r: any) => r.id),
    [second.body.id, first.body.id],
  );
  assert.ok(reruns.every((r: any) => r.rerunOf === created.body.id));
});

test('a non-determinism failure names the position and the reset position; the reset runs the new code on', async (t) => {
  const { keel } = await startWithFake(t);
  diverge = false;
  firstStepRuns = 0;
  const id = (await keel.request('POST', '/v1/runs', { agent: 'fickle', input: null })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  diverge = true; // the code changed under a parked run
  await keel.request('POST', `/v1/runs/${id}/input`, { key: 'go', value: 1 });
  const failed = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(failed.error.code, 'non_determinism');
  assert.equal(failed.error.details.position, 2);
  assert.equal(failed.error.details.resetFrom, 1);
  assert.match(failed.error.message, /keel runs reset run_[^ ]+ --position 1\)/);

  const reset = await keel.request('POST', `/v1/runs/${id}/reset`, {
    position: failed.error.details.resetFrom,
  });
  assert.equal(reset.status, 201, JSON.stringify(reset.body));
  await keel.waitForRun(reset.body.id, (r) => r.status === 'waiting');
  await keel.request('POST', `/v1/runs/${reset.body.id}/input`, { key: 'go', value: 2 });
  const done = await keel.waitForRun(reset.body.id, (r) => TERMINAL.has(r.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(firstStepRuns, 1, 'the step before the position ran once, in the source run');
  const kinds = (await keel.request('GET', `/v1/runs/${reset.body.id}/steps`)).body.steps.map(
    (s: any) => `${s.seq}:${s.name}`,
  );
  assert.deepEqual(kinds, ['1:first', '2:inserted', '3:go']);
});

test('refusals: a live run, a position past the journal or through an unsettled effect, a bad body', async (t) => {
  const { keel } = await startWithFake(t);
  const id = (await keel.request('POST', '/v1/runs', { agent: 'waiter', input: { n: 1 } })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  const live = await keel.request('POST', `/v1/runs/${id}/reset`, { position: 1 });
  assert.deepEqual([live.status, live.body.error.code], [409, 'run_not_terminal']);
  const liveFork = await keel.request('POST', `/v1/runs/${id}/fork`, { position: 1 });
  assert.deepEqual([liveFork.status, liveFork.body.error.code], [409, 'run_not_terminal']);

  await keel.request('POST', `/v1/runs/${id}/cancel`);
  await keel.waitForRun(id, (r) => r.status === 'cancelled');
  const past = await keel.request('POST', `/v1/runs/${id}/reset`, { position: 3 });
  assert.deepEqual([past.status, past.body.error.code], [400, 'reset_position_out_of_range']);
  assert.equal(past.body.error.details.lastPosition, 2);
  // Position 2 is the input wait the run was cancelled in: it has no result to reuse.
  const unsettled = await keel.request('POST', `/v1/runs/${id}/reset`, { position: 2 });
  assert.deepEqual(
    [unsettled.status, unsettled.body.error.code],
    [409, 'reset_position_unsettled'],
  );
  assert.deepEqual(
    [unsettled.body.error.details.seq, unsettled.body.error.details.resetFrom],
    [2, 1],
  );
  for (const body of [{}, { position: -1 }, { position: 1.5 }, { position: 1, extra: true }]) {
    const bad = await keel.request('POST', `/v1/runs/${id}/reset`, body);
    assert.deepEqual(
      [bad.status, bad.body.error.code],
      [400, 'validation_failed'],
      JSON.stringify(body),
    );
  }
  const missing = await keel.request('POST', '/v1/runs/run_nope/rerun', {});
  assert.deepEqual([missing.status, missing.body.error.code], [404, 'run_not_found']);
  const ok = await keel.request('POST', `/v1/runs/${id}/reset`, { position: 1 });
  assert.equal(ok.status, 201);
  const resumed = await keel.waitForRun(ok.body.id, (r) => r.status === 'waiting');
  assert.equal(resumed.resetFrom.position, 1);
});

test('keel runs rerun | reset | fork print the new run and its lineage; get shows it', async (t) => {
  const { keel } = await startWithFake(t);
  const id = (await keel.request('POST', '/v1/runs', { agent: 'waiter', input: { n: 3 } })).body.id;
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  await keel.request('POST', `/v1/runs/${id}/cancel`);
  await keel.waitForRun(id, (r) => r.status === 'cancelled');
  const env = { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey };
  const cli = (argv: string[]) => captureCli(runRunsCommand, env, argv);

  const rerun = await cli(['rerun', id]);
  assert.equal(rerun.code, 0, rerun.err);
  assert.match(rerun.out, new RegExp(`^run_\\S+\\twaiter@1\\trerun of ${id}\\n$`));
  const reruns = await cli(['list', '--rerun-of', id, '--json']);
  assert.deepEqual(
    JSON.parse(reruns.out).runs.map((r: any) => r.id),
    [rerun.out.split('\t')[0]],
  );
  const reset = await cli(['reset', id, '--position', '1']);
  assert.equal(reset.code, 0, reset.err);
  assert.match(reset.out, new RegExp(`reset from ${id} at position 1`));
  const resetId = reset.out.split('\t')[0]!;
  const fork = await cli(['fork', id, '--position', '1', '--input', '{"n":4}', '--json']);
  assert.equal(fork.code, 0, fork.err);
  const forked = JSON.parse(fork.out);
  assert.deepEqual([forked.input, forked.resetFrom], [{ n: 4 }, { runId: id, position: 1 }]);

  const shown = await cli(['get', resetId]);
  assert.match(shown.out, new RegExp(`lineage: +reset from ${id} at position 1`));
  const noPosition = await cli(['reset', id]);
  assert.equal(noPosition.code, 2);
  assert.match(noPosition.err, /--position/);
  const refused = await cli(['reset', id, '--position', '2']);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /reset_position_unsettled/);
});
