// `keel plan --live` against a real Keel over HTTP: runs of an agent that makes 2 model calls (a
// mock model with 30 ms of latency) and 1 tool call (20 ms), then the measured workload and the
// plan computed from it. Durations are checked only against lower bounds the configured latencies
// imply.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { z } from 'zod';
import { runPlanCommand } from '../src/cli/plan-command.ts';
import { defineAgent, defineModel, defineTool } from '../src/index.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

const MODEL_LATENCY_MS = 30;
const TOOL_MS = 20;
const RUNS = 4;

const lookup = defineTool({
  name: 'lookup',
  description: 'Waits, then answers',
  input: z.object({ q: z.string() }),
  effect: 'read',
  run: async ({ q }) => {
    await delay(TOOL_MS); // the tool's own work, not a wait for some state
    return { answer: q.length };
  },
});

const twoRounds = defineAgent({
  name: 'two-rounds',
  version: '1',
  async run(ctx, input: { q: string }) {
    const first = await ctx.model({
      model: 'slow-mock',
      messages: [{ role: 'user', content: input.q }],
    });
    const found = await ctx.tool(lookup, { q: input.q });
    const second = await ctx.model({
      model: 'slow-mock',
      messages: [{ role: 'user', content: `${first.text} ${found.answer}` }],
    });
    return second.text;
  },
});

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

const scenario = {
  workload: {
    arrivalPerSec: 1,
    roundsPerTask: 8,
    modelSecondsPerRound: 5,
    toolSecondsPerRound: 2,
    env: {
      memoryGiB: 1,
      policy: 'resident',
      prepSeconds: 10,
      prepCpuSeconds: 5,
      pauseSecondsPerGiB: 0.5,
      resumeSecondsPerGiB: 0.5,
    },
  },
  capacity: { cpuCores: 16, memoryGiB: 32, modelSlots: 64 },
};

test('keel plan --live measures rounds, model and tool seconds and arrivals from a running Keel', async (t) => {
  const keel = await startKeel({
    agents: [twoRounds],
    models: [
      defineModel({
        name: 'slow-mock',
        provider: 'mock',
        options: { latencyMs: MODEL_LATENCY_MS },
      }),
    ],
  });
  t.after(() => keel.close());
  const scenarioPath = join(keel.dir, 'scenario.json');
  await writeFile(scenarioPath, JSON.stringify(scenario));

  const ids: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const created = await keel.request('POST', '/v1/runs', {
      agent: 'two-rounds',
      input: { q: `question ${i}` },
    });
    assert.equal(created.status, 201);
    ids.push(created.body.id);
  }
  for (const id of ids) {
    const done = await keel.waitForRun(id, (r) => TERMINAL.has(r.status));
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  }

  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runPlanCommand(
    ['--live', scenarioPath, '--url', keel.url, '--key', keel.apiKey, '--json'],
    { stdout, stderr, env: {} },
  );
  assert.equal(code, 0, stderr.text);
  const out = JSON.parse(stdout.text);
  const m = out.measured;
  assert.equal(m.runsSampled, RUNS);
  assert.equal(m.finishedRunsSampled, RUNS);
  assert.equal(m.roundsPerTask, 2);
  assert.ok(
    m.modelSecondsPerRound >= MODEL_LATENCY_MS / 1000,
    `modelSecondsPerRound ${m.modelSecondsPerRound}`,
  );
  // one tool call of ≥ 20 ms per run, over 2 rounds
  assert.ok(
    m.toolSecondsPerRound >= TOOL_MS / 1000 / 2,
    `toolSecondsPerRound ${m.toolSecondsPerRound}`,
  );
  assert.equal(m.arrivalPerSec, RUNS / 300);
  assert.deepEqual(out.planned, scenario.workload);
  assert.equal(out.plan.sections.capacity.resources.modelSlots.capacity.value, 64);

  // The readable form: the side-by-side table, then the report from the measured workload.
  const text = new Capture();
  assert.equal(
    await runPlanCommand(['--live', scenarioPath, '--window-seconds', '60'], {
      stdout: text,
      stderr,
      env: { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey },
    }),
    0,
    stderr.text,
  );
  assert.match(text.text, /== Measured vs planned: .* \(60 s\) ==/);
  assert.match(
    text.text,
    /roundsPerTask\s+2 calls\s+8 calls\s+modelCallsInFinishedRuns ÷ finishedRuns = 8 ÷ 4/,
  );
  assert.match(text.text, /only the API key's tenant is visible/);
  assert.match(text.text, /Keel capacity plan: .*workload measured at/);

  // A wrong key is a failed measurement (exit 1), not a crash.
  const denied = new Capture();
  assert.equal(
    await runPlanCommand(['--live', scenarioPath, '--url', keel.url, '--key', 'wrong'], {
      stdout: new Capture(),
      stderr: denied,
      env: {},
    }),
    1,
  );
  assert.match(denied.text, /cannot measure Keel at .*check the API key/);
});
