// `keel runs …` against the real API: submit --wait, events following a live run to its end, input,
// cancel, list across pages, steps, and a typed API error surfacing as a non-zero exit with its
// code.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { runRunsCommand } from '../src/cli/client/runs-command.ts';
import { defineAgent } from '../src/index.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return { stream, text: () => text };
}

const asker = defineAgent({
  name: 'asker',
  version: '1',
  async run(ctx, input: { q: string }) {
    const a = await ctx.waitForInput<string>('answer');
    return { q: input.q, a };
  },
});
const echo = defineAgent({
  name: 'echo',
  version: '1',
  async run(ctx, input: unknown) {
    return ctx.step('echo', () => input as never);
  },
});

test('keel runs drives the real API end to end', async (t) => {
  const keel = await startKeel({ agents: [asker, echo] });
  t.after(() => keel.close());
  const cli = async (...argv: string[]) => {
    const out = sink();
    const err = sink();
    const code = await runRunsCommand(argv, {
      stdout: out.stream,
      stderr: err.stream,
      env: { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey },
    });
    return { code, out: out.text(), err: err.text() };
  };

  const waited = await cli('submit', 'echo', '--input', '{"x":1}', '--wait', '--json');
  assert.equal(waited.code, 0, waited.err);
  assert.deepEqual(JSON.parse(waited.out).result, { x: 1 });

  const submitted = await cli('submit', 'asker', '--input', '{"q":"why"}');
  assert.equal(submitted.code, 0, submitted.err);
  const id = submitted.out.trim();
  assert.match(id, /^run_/);
  await keel.waitForRun(id, (r) => r.status === 'waiting');
  const following = cli('events', id, '--json');
  assert.equal((await cli('input', id, 'answer', '"because"')).code, 0);
  const events = await following;
  assert.equal(events.code, 0, events.err);
  const types = events.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).type);
  assert.equal(types.at(-1), 'run.succeeded');
  assert.deepEqual(
    events.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).seq),
    types.map((_, i) => i + 1),
  );

  const got = await cli('get', id, '--json');
  assert.deepEqual(JSON.parse(got.out).result, { q: 'why', a: 'because' });
  const steps = await cli('steps', id);
  assert.match(steps.out, /input/);

  const other = (await cli('submit', 'asker', '--input', '{"q":"later"}')).out.trim();
  await keel.waitForRun(other, (r) => r.status === 'waiting');
  assert.equal((await cli('cancel', other)).code, 0);
  assert.equal((await keel.waitForRun(other, (r) => TERMINAL.has(r.status))).status, 'cancelled');

  const listed = await cli('list', '--limit', '1', '--all', '--json');
  assert.equal(listed.code, 0, listed.err);
  const ids = JSON.parse(listed.out).runs.map((r: { id: string }) => r.id);
  assert.equal(ids.length, 3);
  assert.equal(new Set(ids).size, 3);

  const missing = await cli('get', 'run_missing');
  assert.notEqual(missing.code, 0);
  assert.match(missing.err, /run_not_found/);
});
