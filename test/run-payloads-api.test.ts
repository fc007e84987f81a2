// Large payloads over real HTTP (issue 22), embedded Keel on SQLite with a 1 KiB inline threshold: a
// large run input and tool result come back inline in the run and step views, and stream from
// GET /v1/runs/:id/payloads/:sha256 byte for byte as their JSON; a payload the run does not
// reference is a 404 payload_not_found, a malformed hash a 400; an input above the largest stored
// payload is a 413 result_too_large, never a 500.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { startKeel } from '../src/embedded/index.ts';
import { defineAgent, defineTool } from '../src/index.ts';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its text, repeated',
  input: z.object({ text: z.string(), times: z.number().int() }),
  effect: 'read',
  run: ({ text, times }) => ({ echoed: text.repeat(times) }),
});

const agent = defineAgent({
  name: 'big-io',
  version: '1',
  async run(ctx, input: { text: string }) {
    const out = (await ctx.tool(echo, { text: 'ü', times: 4000 })) as { echoed: string };
    return { inputLength: input.text.length, echoedLength: out.echoed.length };
  },
});

test('large input and tool result: inline in the views, streamed from the payload route', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-payload-api-'));
  const keel = await startKeel({
    agents: [agent],
    tools: [echo],
    dataDir: dir,
    http: { port: 0 },
    config: {
      leaseTtlMs: 5_000,
      payloadInlineMaxBytes: 1024,
      payloadStoredMaxBytes: 200_000,
    },
  });
  const headers = { authorization: `Bearer ${keel.apiKey}`, 'content-type': 'application/json' };
  const get = (path: string) => fetch(`${keel.url}${path}`, { headers });
  try {
    const input = { text: 'é'.repeat(30_000) };
    const created = await fetch(`${keel.url}/v1/runs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ agent: 'big-io', input }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { id } = (await created.json()) as { id: string };
    const done = await keel.runs.wait(id);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.result, { inputLength: 30_000, echoedLength: 4000 });

    const view = (await (await get(`/v1/runs/${id}`)).json()) as { input: unknown };
    assert.deepEqual(view.input, input, 'the run view inlines the input');
    const step = (await (await get(`/v1/runs/${id}/steps/1`)).json()) as {
      step: { output: unknown };
    };
    assert.deepEqual(step.step.output, { echoed: 'ü'.repeat(4000) });

    for (const value of [input, { echoed: 'ü'.repeat(4000) }]) {
      const text = JSON.stringify(value);
      const sha256 = createHash('sha256').update(text).digest('hex');
      const res = await get(`/v1/runs/${id}/payloads/${sha256}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json');
      assert.equal(await res.text(), text);
    }
    const missing = await get(`/v1/runs/${id}/payloads/${'0'.repeat(64)}`);
    assert.equal(missing.status, 404);
    assert.equal(
      ((await missing.json()) as { error: { code: string } }).error.code,
      'payload_not_found',
    );
    assert.equal((await get(`/v1/runs/${id}/payloads/nothex`)).status, 400);
    const elsewhere = await get(`/v1/runs/run_nope/payloads/${'0'.repeat(64)}`);
    assert.equal(elsewhere.status, 404);

    const tooLarge = await fetch(`${keel.url}/v1/runs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ agent: 'big-io', input: { text: 'x'.repeat(300_000) } }),
    });
    assert.equal(tooLarge.status, 413);
    assert.equal(
      ((await tooLarge.json()) as { error: { code: string } }).error.code,
      'result_too_large',
    );
  } finally {
    await keel.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
