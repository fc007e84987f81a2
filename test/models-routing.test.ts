// Done-when (routing, end to end): two replicas are real fake servers that emulate a prompt cache
// (uncached tokens delay the first byte; cached tokens are reported). The gateway measures them and
// routes: a follow-up turn of a conversation goes to the warm replica even though it has a queue,
// because the formula says the cached prefill saves more than the wait; a new short conversation
// goes to the idle replica. The decision and its estimates are recorded on the committed effect.
// The formula itself is covered exhaustively in src/models/replica-router.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent, defineModel } from '../src/sdk/define.ts';
import type { ChatMessage } from '../src/sdk/types.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { TERMINAL, startKeel } from './support/keel-server.ts';

const PREFILL_MS_PER_KTOK = 200;
const never = new AbortController().signal;

async function replicatedModel(t: { after(fn: () => unknown): void }) {
  const a = await startFakeOpenAi(undefined, { prefillMsPerKTok: PREFILL_MS_PER_KTOK });
  const b = await startFakeOpenAi(undefined, { prefillMsPerKTok: PREFILL_MS_PER_KTOK });
  t.after(() => a.close());
  t.after(() => b.close());
  const estimates = { prefillMsPerKTok: PREFILL_MS_PER_KTOK, cachedPrefillMsPerKTok: 10 };
  const model = defineModel({
    name: 'replicated',
    provider: 'openai',
    stream: false,
    maxConcurrency: 1,
    replicas: [
      { name: 'a', baseUrl: `${a.url}/v1`, estimates: { ...estimates, networkMs: 5 } },
      { name: 'b', baseUrl: `${b.url}/v1`, estimates: { ...estimates, networkMs: 50 } },
    ],
  });
  return { a, b, model };
}

test('a warm replica with a queue beats an idle cold one when the cached prefill saves more; not for a new conversation', async (t) => {
  const { a, b, model } = await replicatedModel(t);
  const gateway = new ModelGateway([model]);
  const system: ChatMessage = {
    role: 'system',
    content: 'Long shared instructions. '.repeat(1_540),
  }; // ≈ 10k tokens
  const turn = (question: string): ChatMessage[] => [system, { role: 'user', content: question }];

  const first = await gateway.call(
    { model: 'replicated', messages: turn('first question') },
    { signal: never },
  );
  assert.equal(first.attributes.route?.chosen, 'a', 'both cold: the cheaper network wins');

  // Keep replica a busy with another turn of the same conversation (affinity sends it there too).
  a.enqueue({ kind: 'reply', text: 'slow answer', delayMs: 1_500 });
  const busy = gateway.call(
    { model: 'replicated', messages: turn('busy question') },
    { signal: never },
  );
  while (a.requests.length < 2) await new Promise((r) => setTimeout(r, 5));

  const warm = gateway.call(
    { model: 'replicated', messages: turn('second question') },
    { signal: never },
  );
  await new Promise((r) => setImmediate(r));
  const fresh = gateway.call(
    { model: 'replicated', messages: [{ role: 'user', content: 'a short new conversation' }] },
    { signal: never },
  );
  const [, warmResult, freshResult] = await Promise.all([busy, warm, fresh]);

  const estimatesOf = (result: typeof warmResult) =>
    Object.fromEntries(result.attributes.route!.candidates.map((c) => [c.replica, c]));
  const w = estimatesOf(warmResult);
  t.diagnostic(`warm turn: ${JSON.stringify(warmResult.attributes.route)}`);
  assert.equal(warmResult.attributes.route?.chosen, 'a');
  assert.ok(w.a!.queueMs > w.b!.queueMs, 'the warm replica had the slower queue');
  assert.ok(w.a!.cachedTokens > 9_000 && w.b!.cachedTokens === 0);
  assert.ok(w.a!.totalMs < w.b!.totalMs);
  assert.ok(
    (warmResult.response.usage.cachedInputTokens ?? 0) > 0,
    'the provider served it from its cache',
  );

  const f = estimatesOf(freshResult);
  t.diagnostic(`fresh conversation: ${JSON.stringify(freshResult.attributes.route)}`);
  assert.equal(
    freshResult.attributes.route?.chosen,
    'b',
    'nothing cached anywhere: the faster queue wins',
  );
  assert.ok(f.a!.queueMs > 0 && f.b!.queueMs === 0);
  assert.equal(b.requests.length, 1);
});

test('the routing decision and its estimates are recorded on the committed model effect', async (t) => {
  const { model } = await replicatedModel(t);
  const asker = defineAgent({
    name: 'asker',
    version: '1',
    async run(ctx) {
      return (
        await ctx.model({ model: 'replicated', messages: [{ role: 'user', content: 'hello' }] })
      ).text;
    },
  });
  const keel = await startKeel({ agents: [asker], gateway: new ModelGateway([model]) });
  t.after(() => keel.close());
  const id = (await keel.request('POST', '/v1/runs', { agent: 'asker', input: null })).body.id;
  const run = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  assert.equal(run.status, 'succeeded');
  const events = (await keel.request('GET', `/v1/runs/${id}/events?format=json`)).body as any[];
  const completed = events.find((e) => e.type === 'effect.completed' && e.data.kind === 'model');
  const route = completed.data.attributes.route;
  assert.equal(route.chosen, 'a');
  assert.deepEqual(
    route.candidates.map((c: any) => c.replica),
    ['a', 'b'],
  );
  for (const c of route.candidates)
    for (const key of ['queueMs', 'cachedTokens', 'prefillMs', 'networkMs', 'totalMs'])
      assert.equal(typeof c[key], 'number');
  assert.equal(completed.data.attributes.model, 'replicated@1');
});
