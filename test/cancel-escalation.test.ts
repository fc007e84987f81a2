// A cancel escalates from graceful to forced (issue 21), on both stores and on every sandbox tier:
// tool calls in flight first get the graceful signal (`stopping`; a sandboxed program gets SIGTERM)
// and may wrap up, and what they return then is kept; what is still in flight when the grace runs
// out (the cancel request's `graceMs`, else the agent's `cancelGraceMs`) is aborted (its sandbox
// killed). The `run.cancelled` event records who was signalled and who was forced. No timing is
// asserted: only what happened, and in which order.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { z } from 'zod';
import type { RunEvent, ToolOutput } from '../src/client/index.ts';
import { startKeel, type EmbeddedKeel } from '../src/embedded/index.ts';
import { defineAgent, defineTool } from '../src/index.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import type { Tier } from '../src/sandbox/tiers.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';
import { skipUnless } from './support/sandbox.ts';

/** What the in-process tools saw, in order, per run. */
const seen = new Map<string, string[]>();
const note = (runId: string, what: string) => seen.set(runId, [...(seen.get(runId) ?? []), what]);

/** Hears the graceful signal and wraps up: returns what it saved. */
const tidy = defineTool({
  name: 'tidy',
  description: 'Waits for the graceful signal, then returns what it saved',
  effect: 'side-effect',
  input: z.object({}),
  run: async (_args, t) => {
    note(t.runId, 'started');
    await stoppingAsked(t.stopping);
    note(t.runId, t.signal.aborted ? 'stopping after signal' : 'stopping');
    return { saved: 'partial work' };
  },
});

/** Resolves once `stopping` is aborted, at once if it already is (a call may start already lost). */
function stoppingAsked(stopping: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    if (stopping?.aborted) resolve();
    else stopping?.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * Fails its first attempt; its retry starts after the fan-in it is in was decided, and must hear
 * the decision at once (the engine's signal is already aborted when it starts).
 */
const lateTidy = defineTool({
  name: 'late-tidy',
  description: 'Fails once; the retry waits for the graceful signal',
  effect: 'side-effect',
  input: z.object({}),
  retry: { maxAttempts: 2, initialDelayMs: 500 },
  run: async (_args, t) => {
    if (t.attempt === 1) throw new Error('the first attempt fails');
    note(
      t.runId,
      `attempt ${t.attempt} started${t.stopping?.aborted ? ', already asked to stop' : ''}`,
    );
    await stoppingAsked(t.stopping);
    return { saved: 'retried work' };
  },
});

/** Ignores the graceful signal (notes it) and gives up only when aborted. */
const stubborn = defineTool({
  name: 'stubborn',
  description: 'Ignores the graceful signal; ends only when aborted',
  effect: 'idempotent',
  input: z.object({}),
  run: async (_args, t) => {
    note(t.runId, 'started');
    t.stopping?.addEventListener('abort', () => note(t.runId, 'stopping'));
    await new Promise<void>((_, reject) =>
      t.signal.addEventListener('abort', () => {
        note(t.runId, 'signal');
        reject(t.signal.reason);
      }),
    );
  },
});

const quick = defineTool({
  name: 'quick',
  description: 'Answers at once',
  effect: 'read',
  input: z.object({}),
  run: () => 'quick answer',
});

/** An agent racing `slow` against `quick` in a fan-in: `slow` loses. */
const racerOf = (name: string, slow: typeof tidy | typeof lateTidy) =>
  defineAgent({
    name,
    version: '1',
    async run(ctx) {
      const winner = await ctx.any([ctx.tool(slow, {}), ctx.tool(quick, {})]);
      return { winner };
    },
  });
/** The loser is a tool still in flight: it is asked to wrap up, not left running. */
const racer = racerOf('racer', tidy);
/** The fan-in is decided while the loser waits to retry: the retry starts already asked to wrap up. */
const lateRacer = racerOf('late-racer', lateTidy);

/** An agent that makes one call of `tool` and gives a cancel `cancelGraceMs`. */
const oneCall = (name: string, tool: typeof tidy | typeof stubborn, cancelGraceMs: number) =>
  defineAgent({
    name,
    version: '1',
    cancelGraceMs,
    async run(ctx) {
      return ctx.tool(tool as typeof tidy, {});
    },
  });
const tidyAgent = oneCall('tidy-agent', tidy, 60_000);
const stubbornAgent = oneCall('stubborn-agent', stubborn, 300);
const abruptAgent = oneCall('abrupt-agent', stubborn, 0);
/** Gives a cancel a minute by default: a request's own `graceMs` replaces it. */
const patientAgent = oneCall('patient-agent', stubborn, 60_000);

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function cancelledEvent(keel: EmbeddedKeel, id: string): Promise<RunEvent> {
  const run = await keel.runs.wait(id, { timeoutMs: 60_000 });
  assert.equal(run.status, 'cancelled');
  const events = await keel.runs.listEvents(id);
  const ended = events.find((e) => e.type === 'run.cancelled');
  assert.ok(ended, 'a run.cancelled event');
  return ended;
}

for (const store of ['sqlite', 'postgres'] as const) {
  describe(`cancel escalation (${store})`, {
    skip: store === 'postgres' && !(await postgresAvailable()),
  }, () => {
    async function start(t: TestContext): Promise<EmbeddedKeel> {
      const dir = mkdtempSync(join(tmpdir(), 'keel-cancel-grace-'));
      const db = store === 'postgres' ? await createFreshDatabase() : undefined;
      const keel = await startKeel({
        agents: [tidyAgent, stubbornAgent, abruptAgent, patientAgent, racer, lateRacer],
        tools: [tidy, stubborn, quick, lateTidy],
        dataDir: dir,
        ...(db === undefined ? {} : { databaseUrl: db.url }),
      });
      t.after(async () => {
        await keel.close();
        await db?.drop();
        rmSync(dir, { recursive: true, force: true });
      });
      return keel;
    }

    test('a tool that hears the graceful signal wraps up; what it returns is kept, nothing is forced', async (t) => {
      const keel = await start(t);
      const { id } = await keel.runs.create({ agent: 'tidy-agent' });
      await until('the tool to start', () =>
        seen.get(id)?.includes('started') ? true : undefined,
      );
      await keel.runs.cancel(id);
      const ended = await cancelledEvent(keel, id);
      assert.deepEqual(seen.get(id), ['started', 'stopping'], 'signalled, never aborted');
      const termination = (ended.data as any).termination;
      assert.equal(termination.graceMs, 60_000);
      assert.deepEqual(
        termination.signalled.map((s: any) => s.tool),
        ['tidy'],
      );
      assert.deepEqual(termination.forced, []);
      const [step] = await keel.runs.steps(id, { io: true });
      assert.equal(step!.status, 'succeeded', 'the side effect’s outcome is known, not lost');
      assert.deepEqual(step!.output, { saved: 'partial work' });
    });

    test('a tool that ignores it is aborted once the grace runs out, after the graceful signal', async (t) => {
      const keel = await start(t);
      const { id } = await keel.runs.create({ agent: 'stubborn-agent' });
      await until('the tool to start', () =>
        seen.get(id)?.includes('started') ? true : undefined,
      );
      await keel.runs.cancel(id);
      const ended = await cancelledEvent(keel, id);
      assert.deepEqual(seen.get(id), ['started', 'stopping', 'signal']);
      const termination = (ended.data as any).termination;
      assert.equal(termination.graceMs, 300);
      assert.deepEqual(
        termination.forced.map((s: any) => s.tool),
        ['stubborn'],
      );
    });

    test('a cancel request’s own graceMs replaces the agent’s: a deaf tool is aborted after it, not a minute', async (t) => {
      const keel = await start(t);
      const { id } = await keel.runs.create({ agent: 'patient-agent' });
      await until('the tool to start', () =>
        seen.get(id)?.includes('started') ? true : undefined,
      );
      const cancelling = await keel.runs.cancel(id, { graceMs: 200 });
      assert.ok(['cancelling', 'cancelled'].includes(cancelling.status), cancelling.status);
      const ended = await cancelledEvent(keel, id);
      assert.deepEqual(seen.get(id), ['started', 'stopping', 'signal']);
      const termination = (ended.data as any).termination;
      assert.equal(termination.graceMs, 200, 'the request’s grace, not the agent’s 60 s');
      assert.deepEqual(
        termination.forced.map((s: any) => s.tool),
        ['stubborn'],
      );
      await assert.rejects(keel.runs.cancel(id, { graceMs: -5 }), { code: 'validation_failed' });
    });

    test('a fan-in’s losing tool call in flight gets the graceful signal; its result is journaled and ignored', async (t) => {
      const keel = await start(t);
      const { id } = await keel.runs.create({ agent: 'racer' });
      const run = await keel.runs.wait(id, { timeoutMs: 60_000 });
      assert.equal(run.status, 'succeeded');
      assert.deepEqual(run.result, { winner: 'quick answer' });
      assert.deepEqual(seen.get(id), ['started', 'stopping'], 'asked to wrap up, never aborted');
      const steps = await keel.runs.steps(id, { io: true });
      const loser = steps.find((step) => step.name === 'tidy')!;
      assert.equal(loser.status, 'succeeded');
      assert.deepEqual(loser.output, { saved: 'partial work' });
    });

    test('a losing call whose retry starts after the fan-in was decided starts already asked to wrap up', async (t) => {
      const keel = await start(t);
      const { id } = await keel.runs.create({ agent: 'late-racer' });
      const run = await keel.runs.wait(id, { timeoutMs: 60_000 });
      assert.equal(run.status, 'succeeded');
      assert.deepEqual(run.result, { winner: 'quick answer' });
      assert.deepEqual(seen.get(id), ['attempt 2 started, already asked to stop']);
      const steps = await keel.runs.steps(id, { io: true });
      const loser = steps.find((step) => step.name === 'late-tidy')!;
      assert.equal(loser.status, 'succeeded');
      assert.deepEqual(loser.output, { saved: 'retried work' });
    });

    test('with no grace, both signals go at once and nothing is recorded as escalated', async (t) => {
      const keel = await start(t);
      const { id } = await keel.runs.create({ agent: 'abrupt-agent' });
      await until('the tool to start', () =>
        seen.get(id)?.includes('started') ? true : undefined,
      );
      await keel.runs.cancel(id);
      const ended = await cancelledEvent(keel, id);
      assert.deepEqual([...seen.get(id)!].sort(), ['signal', 'started', 'stopping']);
      assert.equal((ended.data as any).termination, undefined);
    });
  });
}

/**
 * A sandboxed program that stops cleanly on SIGTERM (`trap`), and one that ignores it, on each
 * tier: the first's output after the signal is in the step's result; the second is killed.
 */
for (const tier of ['namespace', 'gvisor', 'process'] as const satisfies readonly Tier[]) {
  test(`${tier}: a cancelled exec gets SIGTERM first, then is killed if it is still running when the grace runs out`, {
    skip: skipUnless(tier),
    timeout: 180_000,
  }, async (t) => {
    const tools = sandboxTools({
      profile: defineSandboxProfile({ name: `grace-${tier}`, tier, policy: 'rebuild' }),
    });
    const loop = 'echo ready; while :; do sleep 0.05; done';
    const graceful = defineAgent({
      name: 'graceful-program',
      version: '1',
      cancelGraceMs: 60_000,
      async run(ctx) {
        return ctx.tool(tools.exec, {
          argv: ['/bin/sh', '-c', `trap 'echo got-term; exit 0' TERM; ${loop}`],
        });
      },
    });
    const deaf = defineAgent({
      name: 'deaf-program',
      version: '1',
      cancelGraceMs: 500,
      async run(ctx) {
        return ctx.tool(tools.exec, { argv: ['/bin/sh', '-c', `trap '' TERM; ${loop}`] });
      },
    });
    const dir = mkdtempSync(join(tmpdir(), `keel-cancel-${tier}-`));
    const keel = await startKeel({
      agents: [graceful, deaf],
      tools: [tools.exec],
      dataDir: dir,
    });
    t.after(async () => {
      await keel.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Starts the agent, cancels once its program printed `ready`, returns the ended run's exec. */
    async function cancelWhenReady(agent: string) {
      const { id } = await keel.runs.create({ agent });
      const ready = new Promise<void>((resolve, reject) => {
        void (async () => {
          for await (const _ of keel.runs.events(id, {
            onToolOutput: (piece: ToolOutput) => {
              if (piece.text.includes('ready')) resolve();
            },
          }));
          reject(new Error(`run ${id} ended before its program was ready`));
        })();
      });
      await ready;
      await keel.runs.cancel(id);
      const ended = await cancelledEvent(keel, id);
      const steps = await keel.runs.steps(id, { io: true });
      return { termination: (ended.data as any).termination, exec: steps[0]! };
    }

    const stopped = await cancelWhenReady('graceful-program');
    assert.deepEqual(stopped.termination.forced, [], 'it stopped within the grace');
    assert.equal(stopped.exec.status, 'succeeded');
    const result = stopped.exec.output as any;
    assert.equal(result.exitCode, 0, 'its trap ran and exited 0');
    assert.match(result.stdout, /got-term/);

    const killed = await cancelWhenReady('deaf-program');
    assert.deepEqual(
      killed.termination.forced.map((f: any) => f.tool),
      [killed.termination.signalled[0].tool],
      'still running when the grace ran out: aborted',
    );
    assert.notEqual(killed.exec.status, 'succeeded');
  });
}
