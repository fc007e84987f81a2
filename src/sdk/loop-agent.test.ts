import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import { ModelGateway } from '../models/gateway.ts';
import { defineModel, defineTool } from './define.ts';
import { defineLoopAgent, LOOP_CHECKPOINT_EVERY_TURNS } from './loop-agent.ts';
import type {
  AgentContext,
  Json,
  MockModelOptions,
  ModelRequest,
  ToolDefinition,
} from './types.ts';

/**
 * Just enough of an AgentContext to drive the loop: models go through the real gateway, tools run
 * directly (validated, failures wrapped as `tool_failed` the way the engine reports them). No
 * journal.
 */
function fakeContext(
  script: MockModelOptions['script'],
): AgentContext & { modelRequests: ModelRequest[]; toolCalls: string[] } {
  const gateway = new ModelGateway([
    defineModel({
      name: 'scripted',
      provider: 'mock',
      ...(script === undefined ? {} : { options: { script } }),
    }),
  ]);
  const signal = new AbortController().signal;
  const modelRequests: ModelRequest[] = [];
  const toolCalls: string[] = [];
  const unsupported = (): never => {
    throw new Error('not used by the loop agent');
  };
  return {
    runId: 'run_1',
    tenantId: 'tenant_1',
    modelRequests,
    toolCalls,
    async model(request) {
      modelRequests.push(
        structuredClone({
          ...request,
          tools: request.tools?.map((tool) => tool.name),
        }) as ModelRequest,
      );
      return (await gateway.call(request, { signal })).response;
    },
    async tool<I, O extends Json | void>(tool: ToolDefinition<I, O>, args: I): Promise<O> {
      toolCalls.push(tool.name);
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) throw new KeelError('tool_input_invalid', parsed.error.message);
      const executionId = `exec_${toolCalls.length}`;
      try {
        return await tool.run(parsed.data, {
          executionId,
          runId: 'run_1',
          tenantId: 'ten_1',
          attempt: 1,
          signal,
          node: { dataDir: undefined, sandboxManager: () => undefined },
        });
      } catch (error) {
        if (isKeelError(error)) throw error;
        throw new KeelError('tool_failed', error instanceof Error ? error.message : String(error));
      }
    },
    step: unsupported,
    checkpoint: unsupported,
    resumedFrom: undefined,
    waitForInput: unsupported,
    sleep: unsupported,
    child: unsupported,
    send: unsupported,
    receive: unsupported,
    all: unsupported,
    any: unsupported,
    race: unsupported,
    shared: { read: unsupported, write: unsupported, list: unsupported },
    now: unsupported,
    random: unsupported,
    uuid: unsupported,
    progress: () => {},
  };
}

let inFlight = 0;
let maxInFlight = 0;
const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  effect: 'read',
  input: z.object({ a: z.number(), b: z.number() }),
  async run({ a, b }) {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight -= 1;
    return { sum: a + b };
  },
});
const explode = defineTool({
  name: 'explode',
  description: 'Always fails',
  effect: 'read',
  input: z.object({}),
  run: () => {
    throw new Error('kaboom');
  },
});

describe('defineLoopAgent', () => {
  it('checkpoints the conversation every LOOP_CHECKPOINT_EVERY_TURNS turns, and a resume goes on from it', async () => {
    const turn = { text: 'more', toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] };
    const script = [
      ...Array.from({ length: LOOP_CHECKPOINT_EVERY_TURNS + 1 }, () => turn),
      { text: 'done' },
    ];
    const agent = defineLoopAgent({
      name: 'long',
      version: '1',
      model: 'scripted',
      system: 'sys',
      tools: [add],
      maxSteps: 50,
    });
    const checkpoints: Array<{ state: Json; optional: boolean | undefined }> = [];
    const ctx = fakeContext(script);
    ctx.checkpoint = async (state, options) => {
      checkpoints.push({ state: structuredClone(state), optional: options?.optional });
    };
    assert.deepEqual(await agent.run(ctx, 'go'), {
      text: 'done',
      steps: LOOP_CHECKPOINT_EVERY_TURNS + 2,
    });
    assert.equal(checkpoints.length, 1, 'one checkpoint after turn 10');
    const saved = checkpoints[0]!.state as { messages: unknown[]; nextStep: number };
    assert.equal(
      checkpoints[0]!.optional,
      true,
      'runs in flight before the loop checkpointed replay as they ran',
    );
    assert.equal(saved.nextStep, LOOP_CHECKPOINT_EVERY_TURNS + 1);
    assert.equal(saved.messages.length, 2 + 2 * LOOP_CHECKPOINT_EVERY_TURNS);

    // Re-entered from the checkpoint: the next model call sees the saved conversation, and the
    // turn count goes on from it.
    const resumed = fakeContext(script); // the mock answers by assistant turn: turn 11 on
    Object.assign(resumed, { resumedFrom: { position: 99, state: saved } });
    resumed.checkpoint = async () => {};
    assert.deepEqual(await agent.run(resumed, 'go'), {
      text: 'done',
      steps: LOOP_CHECKPOINT_EVERY_TURNS + 2,
    });
    assert.deepEqual(resumed.modelRequests[0]?.messages, saved.messages);
    assert.equal(resumed.modelRequests.length, 2);
  });

  it('sends the input as the user message and returns a tool-free answer', async () => {
    const agent = defineLoopAgent({ name: 'echo', version: '1', model: 'scripted', system: 'sys' });
    for (const [input, expected] of [
      ['plain text', 'plain text'],
      [{ prompt: 'from prompt' }, 'from prompt'],
      [{ question: 42 }, '{"question":42}'],
    ] as const) {
      const ctx = fakeContext(undefined);
      assert.deepEqual(await agent.run(ctx, input), { text: expected, steps: 1 });
      assert.deepEqual(ctx.modelRequests[0]?.messages, [
        { role: 'system', content: 'sys' },
        { role: 'user', content: expected },
      ]);
    }
  });

  it('runs requested tools concurrently, feeds results and errors back, and finishes', async () => {
    maxInFlight = 0;
    const ctx = fakeContext([
      {
        text: 'working',
        toolCalls: [
          { name: 'add', args: { a: 1, b: 2 } },
          { name: 'add', args: { a: 3, b: 4 } },
          { name: 'add', args: { a: 5, b: 6 } },
          { name: 'explode', args: {} },
          { name: 'add', args: { a: 'not a number' } },
          { name: 'teleport', args: {} },
        ],
      },
      { text: 'the sums are 3, 7 and 11' },
    ]);
    const agent = defineLoopAgent({
      name: 'calc',
      version: '1',
      model: 'scripted',
      system: 'sys',
      tools: [add, explode],
    });
    assert.deepEqual(await agent.run(ctx, 'add things'), {
      text: 'the sums are 3, 7 and 11',
      steps: 2,
    });
    assert.equal(maxInFlight, 3);
    assert.deepEqual(ctx.toolCalls, ['add', 'add', 'add', 'explode', 'add']);
    assert.deepEqual(ctx.modelRequests[0]?.tools, ['add', 'explode']);

    const second = ctx.modelRequests[1]?.messages ?? [];
    assert.equal(second.length, 2 + 1 + 6);
    assert.equal(second[2]?.role, 'assistant');
    assert.deepEqual(
      second[2]?.toolCalls?.map((call) => call.id),
      ['call_0_0', 'call_0_1', 'call_0_2', 'call_0_3', 'call_0_4', 'call_0_5'],
    );
    const toolMessages = second.slice(3);
    assert.deepEqual(
      toolMessages.map((message) => [message.role, message.toolCallId, message.name]),
      [
        ['tool', 'call_0_0', 'add'],
        ['tool', 'call_0_1', 'add'],
        ['tool', 'call_0_2', 'add'],
        ['tool', 'call_0_3', 'explode'],
        ['tool', 'call_0_4', 'add'],
        ['tool', 'call_0_5', 'teleport'],
      ],
    );
    const contents = toolMessages.map((message) => JSON.parse(message.content));
    assert.deepEqual(contents.slice(0, 3), [{ sum: 3 }, { sum: 7 }, { sum: 11 }]);
    assert.deepEqual(contents[3], { error: { code: 'tool_failed', message: 'kaboom' } });
    assert.equal(contents[4].error.code, 'tool_input_invalid');
    assert.match(contents[5].error.message, /teleport.*does not exist/);
  });

  it('fails with budget_exceeded after maxSteps model calls without an answer', async () => {
    const loop = { toolCalls: [{ name: 'add', args: { a: 1, b: 1 } }] };
    const ctx = fakeContext([loop, loop, loop, loop, loop]);
    const agent = defineLoopAgent({
      name: 'stuck',
      version: '1',
      model: 'scripted',
      system: 'sys',
      tools: [add],
      maxSteps: 3,
    });
    await assert.rejects(agent.run(ctx, 'go'), (error) => {
      assert.ok(isKeelError(error));
      assert.equal(error.code, 'budget_exceeded');
      assert.equal(error.details?.budget, 'maxSteps');
      return true;
    });
    assert.equal(ctx.modelRequests.length, 3);
    assert.equal(ctx.toolCalls.length, 2, 'tools asked for in the last step are not run');
  });

  it('lets run-level errors from a tool end the run instead of feeding them back', async () => {
    const cancelled = new KeelError('cancelled', 'run cancelled');
    const halt = defineTool({
      name: 'halt',
      description: 'Stands in for a cancelled run',
      effect: 'read',
      input: z.object({}),
      run: () => {
        throw cancelled;
      },
    });
    const ctx = fakeContext([{ toolCalls: [{ name: 'halt', args: {} }] }, { text: 'unreachable' }]);
    const agent = defineLoopAgent({
      name: 'halting',
      version: '1',
      model: 'scripted',
      system: 'sys',
      tools: [halt],
    });
    await assert.rejects(agent.run(ctx, 'go'), (error) => error === cancelled);
    assert.equal(ctx.modelRequests.length, 1);
  });

  it('rejects bad definitions at load time', () => {
    assert.throws(
      () => defineLoopAgent({ name: 'a', version: '1', model: 'm', system: 's', maxSteps: 0 }),
      TypeError,
    );
    assert.throws(
      () =>
        defineLoopAgent({ name: 'a', version: '1', model: 'm', system: 's', tools: [add, add] }),
      TypeError,
    );
  });
});
