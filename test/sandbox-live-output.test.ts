// Live `exec` output (issue 18): a sandboxed program's stdout and stderr reach the run's followers
// while it runs — over HTTP (SSE through keel/client) and in-process (keel/embedded), the same
// interface — as ephemeral `tool.output` pieces: the first line arrives before the tool's step
// completes, stdout and stderr are told apart, the step's result still holds the whole output, and
// nothing of it is stored among the run's events.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  createKeelClient,
  type KeelRuns,
  type RunEvent,
  type ToolOutput,
} from '../src/client/index.ts';
import { startKeel } from '../src/embedded/index.ts';
import { defineAgent } from '../src/index.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { skipUnless } from './support/sandbox.ts';

const tools = sandboxTools({
  profile: defineSandboxProfile({ name: 'live-output', tier: 'namespace' }),
});

/** Waits for `go` (so both followers are attached), then runs a program that prints slowly. */
const talker = defineAgent({
  name: 'talker',
  version: '1',
  async run(ctx) {
    await ctx.waitForInput('go');
    const result = await ctx.tool(tools.exec, {
      argv: ['/bin/sh', '-c', 'echo one; sleep 1; echo two >&2; sleep 1; echo three'],
    });
    return { stdout: result.stdout, stderr: result.stderr };
  },
});

interface Followed {
  /** Each piece with the number of run events seen before it. */
  pieces: Array<{ output: ToolOutput; eventsBefore: number }>;
  events: RunEvent[];
}

/** Follows the run to its end; `attached` settles with its first event (the follower is live). */
function follow(runs: KeelRuns, id: string): { attached: Promise<void>; done: Promise<Followed> } {
  let attach: () => void = () => undefined;
  const attached = new Promise<void>((resolve) => (attach = resolve));
  return { attached, done: collect(runs, id, attach) };
}

async function collect(runs: KeelRuns, id: string, attach: () => void): Promise<Followed> {
  const followed: Followed = { pieces: [], events: [] };
  for await (const event of runs.events(id, {
    onToolOutput: (output) =>
      followed.pieces.push({ output, eventsBefore: followed.events.length }),
  })) {
    followed.events.push(event);
    attach();
  }
  return followed;
}

test('exec output streams live to HTTP and embedded followers, before its step completes; never stored', {
  skip: skipUnless('namespace'),
  timeout: 60_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-live-output-'));
  const keel = await startKeel({
    agents: [talker],
    tools: [tools.exec],
    dataDir: dir,
    http: { port: 0 },
  });
  t.after(async () => {
    await keel.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const client = createKeelClient({ baseUrl: keel.url!, apiKey: keel.apiKey });
  const run = await keel.runs.create({ agent: 'talker', input: {} });
  while ((await keel.runs.get(run.id)).status !== 'waiting')
    await new Promise((resolve) => setTimeout(resolve, 20));
  const followers = [follow(client.runs, run.id), follow(keel.runs, run.id)];
  // Both followers are live once each has the run's events so far (it is parked until `go`).
  await Promise.all(followers.map((f) => f.attached));
  await keel.runs.sendInput(run.id, 'go', true);
  const [overHttp, embedded] = await Promise.all(followers.map((f) => f.done));

  const done = await keel.runs.get(run.id);
  assert.equal(done.status, 'succeeded');
  assert.deepEqual(done.result, { stdout: 'one\nthree\n', stderr: 'two\n' });
  for (const [name, followed] of [
    ['http', overHttp!],
    ['embedded', embedded!],
  ] as const) {
    const text = (stream: 'stdout' | 'stderr') =>
      followed.pieces
        .filter((p) => p.output.stream === stream)
        .map((p) => p.output.text)
        .join('');
    assert.equal(text('stdout'), 'one\nthree\n', `${name}: stdout as printed`);
    assert.equal(text('stderr'), 'two\n', `${name}: stderr as printed`);
    const completed = followed.events.findIndex(
      (e) => e.type === 'effect.completed' && (e.data as { kind?: string }).kind === 'tool',
    );
    assert.ok(completed >= 0, `${name}: the tool's step completed`);
    const first = followed.pieces[0]!;
    assert.ok(
      first.eventsBefore <= completed,
      `${name}: the first line came while the tool ran (before event ${completed}), not after`,
    );
    assert.equal(first.output.tool, 'exec');
    assert.equal(first.output.attempt, 1);
    assert.equal(first.output.executionId, `${run.id}.${first.output.seq}`);
  }
  const stored = await keel.runs.listEvents(run.id);
  assert.ok(
    stored.every((e) => e.type !== 'tool.output'),
    'live output is never stored among the events',
  );
});
