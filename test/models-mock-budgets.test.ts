// The mock model under a run's budgets, through the real engine and gateway: it stops at the output
// cap the gateway sends (the request's maxOutputTokens, or the tokens the run has left), so a run
// asked for 300 output tokens is billed at most 300, and a cost budget the capped call fits in is
// not overspent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent, defineModel } from '../src/sdk/define.ts';
import { TERMINAL, startKeel } from './support/keel-server.ts';

/** 1,600 characters: 400 input tokens, and an echo of 400 output tokens when nothing caps it. */
const PROMPT = 'x'.repeat(1_600);

const echo = defineAgent({
  name: 'echo',
  version: '1',
  async run(ctx, input: { maxOutputTokens?: number }) {
    const reply = await ctx.model({
      model: 'priced-mock',
      messages: [{ role: 'user', content: PROMPT }],
      ...input,
    });
    return {
      chars: reply.text.length,
      outputTokens: reply.usage.outputTokens,
      costUsd: reply.usage.costUsd,
    };
  },
});

test('the mock honours the output cap: maxOutputTokens, a token budget and a cost budget hold', async (t) => {
  // $100 per million input tokens, $300 per million output tokens: 400 in = $0.04; 300 out = $0.09,
  // 400 out = $0.12.
  const mock = defineModel({
    name: 'priced-mock',
    provider: 'mock',
    price: { inputPerMTok: 100, outputPerMTok: 300 },
  });
  const keel = await startKeel({ agents: [echo], gateway: new ModelGateway([mock]) });
  t.after(() => keel.close());
  const finish = async (input: object, budget?: object) => {
    const id = (
      await keel.request('POST', '/v1/runs', {
        agent: 'echo',
        input,
        ...(budget === undefined ? {} : { budget }),
      })
    ).body.id;
    return keel.waitForRun(id, (r) => TERMINAL.has(r.status));
  };

  const uncapped = await finish({});
  assert.equal(uncapped.result.outputTokens, 400, 'nothing caps it: the whole echo');

  const asked = await finish({ maxOutputTokens: 300 });
  assert.equal(asked.status, 'succeeded');
  assert.deepEqual([asked.result.outputTokens, asked.result.chars], [300, 1_200]);
  assert.equal(asked.counters.outputTokens, 300);

  // A token budget: 600 tokens, 400 of them input, so the gateway caps the output at the 200 left.
  // The run spends them all (and then ends budget_exceeded, the budget being used up), never more:
  // uncapped it would use 800.
  const tokens = await finish({}, { maxTokens: 600 });
  assert.deepEqual(
    [tokens.counters.inputTokens, tokens.counters.outputTokens],
    [400, 200],
    JSON.stringify(tokens),
  );

  // A cost budget of $0.15: the capped call costs $0.13 and fits; the uncapped echo would have cost
  // $0.16.
  const cost = await finish({ maxOutputTokens: 300 }, { maxCostUsd: 0.15 });
  assert.equal(cost.status, 'succeeded', JSON.stringify(cost.error));
  assert.ok(cost.counters.costUsd <= 0.15, `spent $${cost.counters.costUsd} of $0.15`);
  assert.ok(Math.abs(cost.counters.costUsd - 0.13) < 1e-9, `$${cost.counters.costUsd}`);
});
