import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKeelError } from '../../domain/keel-error.ts';
import { toChatMessages, toContent, toToolSpecs, warningsFor } from './prompt.ts';

test('an AI SDK prompt becomes Keel chat messages: tool calls on the assistant turn, one message per tool result', () => {
  const messages = toChatMessages([
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Weather' },
        { type: 'text', text: 'in Paris?' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'I should look it up.' },
        { type: 'text', text: 'Looking.' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'ping', input: '{}' },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'get_weather',
          output: { type: 'json', value: { sky: 'sunny' } },
        },
        {
          type: 'tool-result',
          toolCallId: 'c2',
          toolName: 'ping',
          output: { type: 'error-text', value: 'down' },
        },
        {
          type: 'tool-result',
          toolCallId: 'c3',
          toolName: 'mail',
          output: { type: 'execution-denied', reason: 'no' },
        },
      ],
    },
  ]);
  assert.deepEqual(messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather\nin Paris?' },
    {
      role: 'assistant',
      content: 'Looking.',
      toolCalls: [
        { id: 'c1', name: 'get_weather', args: { city: 'Paris' } },
        { id: 'c2', name: 'ping', args: {} },
      ],
    },
    { role: 'tool', toolCallId: 'c1', name: 'get_weather', content: '{"sky":"sunny"}' },
    { role: 'tool', toolCallId: 'c2', name: 'ping', content: 'down' },
    { role: 'tool', toolCallId: 'c3', name: 'mail', content: 'Tool execution denied: no' },
  ]);
});

test('a file in the prompt is refused with model_content_unsupported', () => {
  assert.throws(
    () =>
      toChatMessages([
        { role: 'user', content: [{ type: 'file', data: 'aGk=', mediaType: 'image/png' }] },
      ]),
    (error) => isKeelError(error) && error.code === 'model_content_unsupported',
  );
});

test('tools, tool choice and settings the gateway cannot carry', () => {
  const tools = [
    {
      type: 'function' as const,
      name: 'add',
      inputSchema: { type: 'object' as const, properties: {} },
    },
  ];
  assert.deepEqual(toToolSpecs(tools, undefined), [
    { name: 'add', description: '', parameters: { type: 'object', properties: {} } },
  ]);
  assert.deepEqual(toToolSpecs(tools, { type: 'none' }), []);
  const warnings = warningsFor({ prompt: [], topP: 0.5, toolChoice: { type: 'required' } });
  assert.deepEqual(
    warnings.map((w) => (w.type === 'other' ? w.message : w.feature)),
    ['topP', 'toolChoice'],
  );
});

test('a Keel answer becomes text then tool calls with JSON-encoded input', () => {
  const content = toContent({
    text: 'ok',
    toolCalls: [{ id: 'c1', name: 'add', args: { a: 1 } }],
    usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
    model: 'mock@1',
  });
  assert.deepEqual(content, [
    { type: 'text', text: 'ok' },
    { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":1}' },
  ]);
});
