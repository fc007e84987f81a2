// The build display of `keel images build`: plain lines per phase off a terminal, a redrawn bar on one.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { buildDisplay } from './images-progress.ts';

function captured() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

test('off a terminal: one line per phase, a repeated phase once', () => {
  const out = captured();
  const display = buildDisplay(out.stream, 'python', false);
  display.progress({ stage: 1, stages: 7, label: 'apt-get update' });
  display.progress({ stage: 1, stages: 7, label: 'apt-get update' });
  display.progress({ stage: 2, stages: 7, label: 'downloading packages' });
  display.stop();
  assert.deepEqual(
    out
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/\(\d+ s\)$/, '(t)')),
    ['python: [1/7] apt-get update (t)', 'python: [2/7] downloading packages (t)'],
  );
  assert.ok(!out.text().includes('\r') && !out.text().includes('\x1b'), 'no terminal control');
});

test('on a terminal: a bar redrawn in place, cleared at the end', () => {
  const out = captured();
  const display = buildDisplay(out.stream, 'python', true);
  display.progress({ stage: 7, stages: 7, label: 'cleaning up' });
  display.stop();
  const ESC = String.fromCharCode(27);
  assert.match(out.text(), new RegExp(`\r${ESC}\\[2Kpython \\[#{20}\\] 7/7 cleaning up {2}\\d+ s`));
  assert.ok(out.text().endsWith('\r\x1b[2K'));
});
