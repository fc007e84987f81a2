import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Json } from '../domain/json.ts';
import type { JournalEntry } from '../domain/records.ts';
import { redactStepIo, redactValue } from './redaction.ts';
import { preview, stepIo } from './step-io.ts';

const entry = (fields: Partial<JournalEntry>): JournalEntry => ({
  runId: 'run_1',
  seq: 1,
  kind: 'tool',
  name: 't',
  status: 'succeeded',
  args: null,
  result: null,
  error: null,
  executionId: null,
  effectClass: null,
  attempts: 1,
  leaseToken: 1,
  worker: null,
  queuedAt: null,
  startedAt: null,
  endedAt: null,
  deadlineAt: null,
  ...fields,
});
const size = (value: Json) => Buffer.byteLength(JSON.stringify(value));

test('preview: small values whole; large ones cut below the limit, saying what is left out', () => {
  assert.deepEqual(preview({ a: 1 }, 100), { value: { a: 1 }, truncated: false });
  const messages = Array.from({ length: 300 }, (_, i) => ({
    role: 'user',
    content: `m${i} ${'y'.repeat(100)}`,
  }));
  const cut = preview({ messages }, 8192);
  assert.equal(cut.truncated, true);
  assert.ok(size(cut.value) <= 8192);
  const kept = (cut.value as { messages: Json[] }).messages;
  assert.match(JSON.stringify(kept), /…\[\d+ more items\]/);
  assert.match(JSON.stringify(kept.at(-1)), /m299/, 'the newest message is kept');
  for (const value of [
    'é'.repeat(50_000),
    '\u0001'.repeat(50_000),
    Array.from({ length: 5000 }, (_, i) => ({ [`k${i}`]: i })),
  ] as Json[]) {
    const shown = preview(value, 1024);
    assert.equal(shown.truncated, true);
    assert.ok(size(shown.value) <= 1024, `${size(shown.value)} bytes`);
  }
});

test('stepIo: a parked effect’s wait marker is no input; a failed effect has no output', () => {
  assert.deepEqual(
    stepIo(entry({ status: 'waiting', args: { waitingReason: 'pool_saturated', pool: 'inline' } })),
    {},
  );
  assert.deepEqual(stepIo(entry({ status: 'failed', args: { a: 1 } })), { input: { a: 1 } });
  assert.deepEqual(
    stepIo(
      entry({
        kind: 'model',
        name: 'm',
        args: { attributes: {} },
        result: { text: 'hi', toolCalls: [], usage: { inputTokens: 1 }, model: 'm@1' },
      }),
    ),
    { output: { content: 'hi', usage: { inputTokens: 1 }, model: 'm@1' } },
    'a model entry journaled before requests were has no input',
  );
});

test('redaction: keys anywhere, tool paths with *, indexes and journal names, whole sides', () => {
  const policy = {
    fields: ['Password'],
    tools: { t: ['input.headers.*', 'args.list.1', 'output'] },
  };
  assert.deepEqual(redactValue({ a: [{ password: 'x', PASSWORD: 'y' }] }, policy), {
    a: [{ password: '[redacted]', PASSWORD: '[redacted]' }],
  });
  const io = redactStepIo(
    {
      input: { headers: { a: '1', b: '2' }, list: ['k', 's', 'k'], keep: true },
      output: { all: 1 },
    },
    { kind: 'tool', name: 't' },
    policy,
  );
  assert.deepEqual(io, {
    input: {
      headers: { a: '[redacted]', b: '[redacted]' },
      list: ['k', '[redacted]', 'k'],
      keep: true,
    },
    output: '[redacted]',
  });
  const other = redactStepIo(
    { input: { headers: { a: '1' } } },
    { kind: 'tool', name: 'u' },
    policy,
  );
  assert.deepEqual(
    other,
    { input: { headers: { a: '1' } } },
    'tool rules apply to their tool only',
  );
});
