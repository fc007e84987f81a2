import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { OutputCapture } from './output-capture.ts';

test('keeps at most maxBytes over both streams and reports the overflow once', () => {
  let overflows = 0;
  const capture = new OutputCapture(10, () => overflows++);
  const out = new PassThrough();
  const err = new PassThrough();
  capture.attach(out, 'stdout');
  capture.attach(err, 'stderr');
  out.write('abcdef');
  err.write('123');
  out.write('ghijkl');
  out.write('more');
  assert.equal(capture.text('stdout'), 'abcdefg');
  assert.equal(capture.text('stderr'), '123');
  assert.equal(capture.truncated, true);
  assert.equal(overflows, 1);
});
