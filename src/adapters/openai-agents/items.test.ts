import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelRequest } from '@openai/agents';
import { isKeelError } from '../../domain/keel-error.ts';
import { toChatMessages, toOutputItems, toToolSpecs } from './items.ts';

const request = (
  input: ModelRequest['input'],
  extra: Partial<ModelRequest> = {},
): ModelRequest => ({
  systemInstructions: 'You route.',
  input,
  modelSettings: {},
  tools: [],
  outputType: 'text',
  handoffs: [],
  tracing: false,
  ...extra,
});

test('Agents SDK items become Keel chat messages: function calls grouped on one assistant turn', () => {
  const messages = toChatMessages(
    request([
      { role: 'user', content: 'Forecast for Oslo?' },
      { type: 'reasoning', content: [] },
      { type: 'function_call', callId: 'c1', name: 'lookup', arguments: '{"city":"Oslo"}' },
      { type: 'function_call', callId: 'c2', name: 'transfer_to_Mailer', arguments: '' },
      {
        type: 'function_call_result',
        callId: 'c1',
        name: 'lookup',
        status: 'completed',
        output: { type: 'text', text: 'snow' },
      },
      {
        type: 'function_call_result',
        callId: 'c2',
        name: 'transfer_to_Mailer',
        status: 'completed',
        output: '{"assistant":"Mailer"}',
      },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.' }] },
    ]),
  );
  assert.deepEqual(messages, [
    { role: 'system', content: 'You route.' },
    { role: 'user', content: 'Forecast for Oslo?' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'c1', name: 'lookup', args: { city: 'Oslo' } },
        { id: 'c2', name: 'transfer_to_Mailer', args: {} },
      ],
    },
    { role: 'tool', toolCallId: 'c1', name: 'lookup', content: 'snow' },
    {
      role: 'tool',
      toolCallId: 'c2',
      name: 'transfer_to_Mailer',
      content: '{"assistant":"Mailer"}',
    },
    { role: 'assistant', content: 'Done.' },
  ]);
});

test('an image in the input is refused with model_content_unsupported', () => {
  assert.throws(
    () =>
      toChatMessages(
        request([{ role: 'user', content: [{ type: 'input_image', image: 'https://x/y.png' }] }]),
      ),
    (error) => isKeelError(error) && error.code === 'model_content_unsupported',
  );
});

test('handoffs are offered as function tools; answers become a message and function calls', () => {
  const specs = toToolSpecs(
    request('hi', {
      tools: [
        {
          type: 'function',
          name: 'lookup',
          description: 'Looks up',
          parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
          strict: true,
        },
      ],
      handoffs: [
        {
          toolName: 'transfer_to_Mailer',
          toolDescription: 'Hand off',
          inputJsonSchema: {
            type: 'object',
            properties: {},
            required: [],
            additionalProperties: false,
          },
          strictJsonSchema: true,
        },
      ],
    }),
  );
  assert.deepEqual(
    specs.map((s) => s.name),
    ['lookup', 'transfer_to_Mailer'],
  );
  const items = toOutputItems({
    text: '',
    toolCalls: [{ id: 'c9', name: 'transfer_to_Mailer', args: {} }],
    usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
    model: 'm@1',
  });
  assert.deepEqual(items, [
    {
      type: 'function_call',
      callId: 'c9',
      name: 'transfer_to_Mailer',
      arguments: '{}',
      status: 'completed',
    },
  ]);
});
