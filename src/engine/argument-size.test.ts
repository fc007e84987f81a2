import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertArgumentsFit, jsonBytesUpTo } from './argument-size.ts';

test('jsonBytesUpTo is the JSON size for ordinary values', () => {
  for (const value of [
    { argv: ['/bin/echo', 'héllo'], env: { A: 'b' } },
    [1, true, null, 'x', { nested: [2.5] }],
    'plain',
  ]) {
    assert.equal(jsonBytesUpTo(value, 1_000_000), Buffer.byteLength(JSON.stringify(value)));
  }
});

test('jsonBytesUpTo stops once past the limit', () => {
  const big = Array.from({ length: 1000 }, () => 'x'.repeat(1000));
  const size = jsonBytesUpTo(big, 10_000);
  assert.ok(size > 10_000 && size < 20_000, String(size));
});

test('assertArgumentsFit refuses with tool_arguments_too_large and the limit', () => {
  assertArgumentsFit('t', { a: 'x'.repeat(100) }, 200);
  assert.throws(
    () => assertArgumentsFit('t', { a: 'x'.repeat(300) }, 200),
    (error: any) => error.code === 'tool_arguments_too_large' && error.details.limitBytes === 200,
  );
});
