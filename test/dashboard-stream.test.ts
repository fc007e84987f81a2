// How the dashboard reads a run's SSE stream (web/src/sse.ts, web/src/use-run-live.ts): messages
// are told apart by their SSE fields, so a token delta is never taken for a run event (the crash of
// issue 17) and never moves the resume cursor; streamed text restarts with a new provider attempt.
// The whole path against a real server and browser is test/browser-run-debugging.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyMessage } from '../web/src/sse.ts';
import { addDelta, addToolOutput, type StreamingCall } from '../web/src/use-run-live.ts';

const message = (fields: { id?: string; event?: string; data: unknown }) => ({
  id: fields.id,
  event: fields.event,
  data: JSON.stringify(fields.data),
});

test('a run event needs an id: equal to its seq; a delta needs none; anything else is ignored', () => {
  const event = { seq: 7, type: 'effect.completed', at: '2026-01-01T00:00:00Z', data: {} };
  assert.deepEqual(classifyMessage(message({ id: '7', event: 'effect.completed', data: event })), {
    kind: 'event',
    event,
  });
  const delta = { seq: 4, model: 'gpt', attempt: 1, index: 0, text: 'The s' };
  assert.deepEqual(classifyMessage(message({ event: 'model.delta', data: delta })), {
    kind: 'delta',
    delta,
  });
  // A delta is never a run event, whatever its data holds (it has a `seq`, but no `type`).
  assert.equal(classifyMessage(message({ data: delta })).kind, 'ignored');
  assert.equal(
    classifyMessage(message({ id: '4', event: 'model.delta', data: delta })).kind,
    'ignored',
  );
  assert.equal(classifyMessage(message({ id: '8', event: 'run.x', data: event })).kind, 'ignored');
  assert.equal(classifyMessage(message({ event: 'run.succeeded', data: event })).kind, 'ignored');
  assert.equal(
    classifyMessage({ id: '1', event: 'run.created', data: 'not json' }).kind,
    'ignored',
  );
});

test('streamed text accumulates per call, restarts with a new attempt, and marks a late join', () => {
  let calls: ReadonlyMap<number, StreamingCall> = new Map();
  const delta = (seq: number, attempt: number, index: number, text: string) => ({
    seq,
    model: 'gpt',
    attempt,
    index,
    text,
  });
  calls = addDelta(calls, delta(4, 1, 0, 'The s'));
  calls = addDelta(calls, delta(4, 1, 1, 'um is'));
  calls = addDelta(calls, delta(6, 1, 3, 'tail'));
  assert.equal(calls.get(4)?.text, 'The sum is');
  assert.equal(calls.get(4)?.partial, false);
  assert.deepEqual([calls.get(6)?.text, calls.get(6)?.partial], ['tail', true]);
  calls = addDelta(calls, delta(4, 2, 0, 'Again'));
  assert.deepEqual([calls.get(4)?.text, calls.get(4)?.attempt], ['Again', 2]);
});

test('a tool output piece needs no id: and a stream; pieces of a call join, a new attempt restarts', () => {
  const piece = {
    seq: 5,
    executionId: 'run_1.5',
    tool: 'exec',
    attempt: 1,
    stream: 'stdout',
    text: 'one\n',
  } as const;
  assert.deepEqual(classifyMessage(message({ event: 'tool.output', data: piece })), {
    kind: 'output',
    output: piece,
  });
  assert.equal(
    classifyMessage(message({ id: '5', event: 'tool.output', data: piece })).kind,
    'ignored',
    'an output piece is never a run event',
  );
  assert.equal(
    classifyMessage(message({ event: 'tool.output', data: { ...piece, stream: 'stdin' } })).kind,
    'ignored',
  );
  let calls: ReadonlyMap<number, StreamingCall> = new Map();
  calls = addToolOutput(calls, piece);
  calls = addToolOutput(calls, { ...piece, stream: 'stderr', text: 'two\n' });
  assert.deepEqual(
    [calls.get(5)?.kind, calls.get(5)?.model, calls.get(5)?.text],
    ['tool', 'exec', 'one\ntwo\n'],
  );
  calls = addToolOutput(calls, { ...piece, attempt: 2, text: 'again\n' });
  assert.deepEqual([calls.get(5)?.text, calls.get(5)?.attempt], ['again\n', 2]);
});
