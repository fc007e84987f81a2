// defineAgent's contracts: the schemas are kept on the definition, a non-schema is refused at load
// time, and `run`'s input is typed by the input schema (the @ts-expect-error lines fail the
// typecheck if that inference breaks).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { defineAgent, defineTool } from './define.ts';

test('defineAgent keeps input and output schemas and types run from them', async () => {
  const input = z.object({ city: z.string(), days: z.number().default(3) });
  const output = z.object({ forecast: z.string() });
  const agent = defineAgent({
    name: 'typed',
    version: '1',
    input,
    output,
    async run(_ctx, value) {
      const days: number = value.days;
      // @ts-expect-error: not in the schema
      value.country;
      return { forecast: `${value.city} ${days}` };
    },
  });
  assert.equal(agent.input, input);
  assert.equal(agent.output, output);
  defineAgent({
    name: 'wrong-output',
    version: '1',
    output,
    // @ts-expect-error: the result breaks the output schema's type
    async run() {
      return { forecast: 1 };
    },
  });
  const plain = defineAgent({ name: 'plain', version: '1', run: async () => null });
  assert.equal(plain.input, undefined);
  assert.equal('output' in plain, false);
});

test('defineAgent refuses an input or output that is not a zod schema', () => {
  assert.throws(
    () =>
      defineAgent({
        name: 'bad',
        version: '1',
        input: { type: 'object' } as never,
        run: async () => null,
      }),
    /Agent bad: input must be a zod schema/,
  );
});

test('a policy, a risk or a cost that cannot apply fails when the module loads, not mid-run', () => {
  const run = async () => null;
  assert.throws(
    () => defineAgent({ name: 'p', version: '1', run, policy: { maxRisk: 'extreme' } as never }),
    /Agent p: policy is invalid at maxRisk/,
  );
  const kept = defineAgent({ name: 'p', version: '1', run, policy: { deny: ['exec'] } });
  assert.deepEqual(kept.policy, { deny: ['exec'] });
  const tool = (extra: object) =>
    defineTool({
      name: 't',
      description: 't',
      input: z.object({}),
      effect: 'read',
      run: () => null,
      ...extra,
    });
  assert.throws(() => tool({ risk: 'huge' }), /risk must be one of low, medium, high, critical/);
  assert.throws(() => tool({ cost: -1 }), /cost must be a non-negative number or a function/);
  assert.equal(tool({ risk: 'high', cost: 0.5 }).risk, 'high');
  assert.throws(
    () => tool({ delegate: ['admin'] }),
    /delegate must list scopes among runs:read-self/,
  );
  assert.deepEqual(tool({ delegate: ['runs:child'] }).delegate, ['runs:child']);
});
