// The browser pool through the engine: real runs of real agents (an in-process Keel over HTTP on a
// SQLite file) drive a real headless Chromium through the built-in browser tools against pages a
// node:http server serves on 127.0.0.1. Covered: a session kept across steps (the page's DOM and
// cookie seen by later effects), idle reclamation and rebuild from saved storage state, a Chromium
// killed with SIGKILL becoming `browser_crashed` and the session rebuilt with its cookie, a
// per-tenant cap (a tenant's second run waits for a session while another tenant's run proceeds),
// a batch run preempted for an interactive one and a run parking on a timer each releasing its
// session. Skipped, with the reason, only when
// Chromium is missing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { generateApiKey, hashApiKey } from '../src/api/auth.ts';
import { BrowserPool } from '../src/browser/browser-pool.ts';
import type { ReclaimReason } from '../src/browser/session-state.ts';
import { FileArtifactStore } from '../src/sandbox/file-artifact-store.ts';
import { PoolRegistry } from '../src/scheduling/pool-registry.ts';
import { defineAgent, defineTool } from '../src/sdk/define.ts';
import type { ToolContext } from '../src/sdk/types.ts';
import { browserTools } from '../src/tools/browser-tools.ts';
import { chromiumMissing, serveBrowserPages, type BrowserPages } from './support/browser-pages.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';

const RUN_TIMEOUT_MS = 90_000;
/** The idle limit of the idle test's own pool; the others' is long, so no session idles out mid-run. */
const IDLE_MS = 1_500;
const LONG_IDLE_MS = 10 * 60_000;
const POLL_DEADLINE_MS = 30_000;
const browser = browserTools();

async function pollUntil(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + POLL_DEADLINE_MS;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`never reached: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const poolOf = (ctx: ToolContext): BrowserPool => ctx.node.browserPool!()!;

/** Test tool: waits until the run's session has left the pool (reclaimed for idleness). */
const awaitReclaim = defineTool({
  name: 'test_await_reclaim',
  description: 'Waits until the idle session is reclaimed.',
  effect: 'read',
  input: z.object({}),
  timeoutMs: POLL_DEADLINE_MS + 5_000,
  async run(_args, ctx) {
    await pollUntil(
      'the idle session reclaimed',
      () => poolOf(ctx).sessionState(ctx.runId) === undefined,
    );
    return { reclaimed: true };
  },
});

/** Test tool: SIGKILLs the node's Chromium and waits until the pool has seen it die. */
const killChromium = defineTool({
  name: 'test_kill_chromium',
  description: 'SIGKILLs Chromium.',
  effect: 'side-effect',
  input: z.object({}),
  timeoutMs: POLL_DEADLINE_MS + 5_000,
  async run(_args, ctx) {
    const pid = await poolOf(ctx).chromiumPid();
    assert.ok(pid !== undefined, 'Chromium runs');
    process.kill(pid, 'SIGKILL');
    await pollUntil('the crash noticed', () => poolOf(ctx).sessionState(ctx.runId) === undefined);
    return { killed: pid };
  },
});

/** Gates the per-tenant cap test's first run: it holds its session until the test lets it go. */
const gates = new Map<string, () => void>();
const gateOpened = new Map<string, Promise<void>>();
function gate(name: string): void {
  gateOpened.set(name, new Promise<void>((resolve) => gates.set(name, resolve)));
}
const holdSession = defineTool({
  name: 'test_hold_session',
  description: 'Holds the run (and its session) until the test opens the gate.',
  effect: 'read',
  input: z.object({ gate: z.string() }),
  timeoutMs: POLL_DEADLINE_MS + 5_000,
  async run(args) {
    await gateOpened.get(args.gate);
    return { held: true };
  },
});

const pageText = async (ctx: any, selector: string): Promise<string> =>
  (await ctx.tool(browser.browser_extract_text, { selector })).text;

const acrossSteps = defineAgent({
  name: 'browser-across-steps',
  version: '1',
  async run(ctx, input: { base: string }) {
    const opened = await ctx.tool(browser.browser_open, {});
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/login?name=ada` });
    await ctx.tool(browser.browser_type, { selector: '#q', text: 'hello keel' });
    await ctx.tool(browser.browser_click, { selector: '#go' });
    const typed = await pageText(ctx, '#out');
    const shot = await ctx.tool(browser.browser_screenshot, {});
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/whoami` });
    const cookie = await pageText(ctx, '#cookie');
    const storage = await pageText(ctx, '#storage');
    const again = await ctx.tool(browser.browser_open, {});
    return { opened, typed, shot, cookie, storage, again } as any;
  },
});

const idleReclaim = defineAgent({
  name: 'browser-idle',
  version: '1',
  async run(ctx, input: { base: string }) {
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/login?name=idle` });
    await ctx.tool(awaitReclaim, {});
    const reopened = await ctx.tool(browser.browser_open, {});
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/whoami` });
    return {
      reopened,
      cookie: await pageText(ctx, '#cookie'),
      storage: await pageText(ctx, '#storage'),
    } as any;
  },
});

const crash = defineAgent({
  name: 'browser-crash',
  version: '1',
  async run(ctx, input: { base: string }) {
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/login?name=crash` });
    const killed = await ctx.tool(killChromium, {});
    let crashCode = 'none';
    try {
      await pageText(ctx, 'body');
    } catch (error) {
      crashCode = (error as { code: string }).code;
    }
    const rebuilt = await ctx.tool(browser.browser_open, {});
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/whoami` });
    return { killed, crashCode, rebuilt, cookie: await pageText(ctx, '#cookie') } as any;
  },
});

const capped = defineAgent({
  name: 'browser-capped',
  version: '1',
  async run(ctx, input: { base: string; name: string; gate?: string }) {
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/login?name=${input.name}` });
    if (input.gate !== undefined) await ctx.tool(holdSession, { gate: input.gate });
    return { cookie: await pageText(ctx, 'body') } as any;
  },
});

const sleeper = defineAgent({
  name: 'browser-sleeper',
  version: '1',
  async run(ctx, input: { base: string }) {
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/login?name=sleepy` });
    await ctx.sleep(300);
    const reopened = await ctx.tool(browser.browser_open, {});
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/whoami` });
    return { reopened, cookie: await pageText(ctx, '#cookie') } as any;
  },
});

const batchBrowser = defineAgent({
  name: 'browser-batch',
  version: '1',
  async run(ctx, input: { base: string }) {
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/login?name=batch` });
    await ctx.tool(holdSession, { gate: 'batch' });
    const reopened = await ctx.tool(browser.browser_open, {});
    await ctx.tool(browser.browser_navigate, { url: `${input.base}/whoami` });
    return { reopened, cookie: await pageText(ctx, '#cookie') } as any;
  },
});

const quickStep = defineAgent({
  name: 'quick-step',
  version: '1',
  async run(ctx) {
    return ctx.step('s', () => 'ok');
  },
});

describe('the browser pool through real runs', { skip: chromiumMissing() }, () => {
  let keel: TestKeel;
  let pages: BrowserPages;
  let pool: BrowserPool;
  /** The pool the tools see (the idle test swaps in its own). */
  let current: () => BrowserPool = () => pool;
  let artifacts: FileArtifactStore;
  const pools = new PoolRegistry();
  const dir = mkdtempSync(join(tmpdir(), 'keel-browser-pool-'));
  const reclaims: ReclaimReason[] = [];
  const starts: boolean[] = [];
  const otherKey = generateApiKey();

  before(async () => {
    pages = await serveBrowserPages();
    artifacts = new FileArtifactStore(join(dir, 'artifacts'));
    pool = newPool(LONG_IDLE_MS);
    keel = await startKeel({
      agents: [acrossSteps, idleReclaim, crash, capped, sleeper],
      dir: mkdtempSync(join(dir, 'keel-')),
      orchestrator: {
        pools,
        toolNode: { dataDir: dir, sandboxManager: () => undefined, browserPool: () => current() },
        onRunLeft: (runId, status) => {
          void current().release(
            runId,
            status === 'waiting'
              ? 'waiting'
              : status === 'queued'
                ? 'preempted'
                : TERMINAL.has(status)
                  ? 'ended'
                  : 'lost',
          );
        },
      },
    });
    await keel.store.ensureTenant('other', hashApiKey(otherKey));
  });

  after(async () => {
    await keel?.close();
    await pool?.close();
    await pages?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function newPool(idleMs: number): BrowserPool {
    return new BrowserPool({
      pools,
      artifacts,
      executablePath: process.env.KEEL_BROWSER_PATH ?? '/usr/bin/chromium',
      maxSessions: 4,
      idleMs,
      observer: {
        started: (_seconds, restored) => starts.push(restored),
        reclaimed: (reason) => reclaims.push(reason),
      },
    });
  }

  async function submit(agent: string, input: unknown, key?: string): Promise<string> {
    const answer = await keel.request('POST', '/v1/runs', { agent, input }, key);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    return answer.body.id;
  }

  async function finished(id: string, key?: string): Promise<any> {
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    for (;;) {
      const run = (await keel.request('GET', `/v1/runs/${id}`, undefined, key)).body;
      if (TERMINAL.has(run.status)) {
        assert.equal(run.status, 'succeeded', JSON.stringify(run));
        return run.result;
      }
      if (Date.now() > deadline)
        throw new Error(`run ${id} did not finish: ${JSON.stringify(run)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  test('a session lives across steps: the DOM a click changed and the cookie a page set are there in later effects', async () => {
    const id = await submit('browser-across-steps', { base: pages.url });
    const result = await finished(id);
    assert.equal(result.opened.opened, true);
    assert.equal(result.opened.restored, false);
    assert.equal(result.typed, 'typed: hello keel');
    assert.equal(result.cookie, 'cookie: who=ada');
    assert.equal(result.storage, 'storage: ada');
    assert.equal(result.again.opened, false, 'the same session served every step');
    assert.equal(result.again.leaseToken, result.opened.leaseToken);
    // The screenshot is a PNG kept as an artifact.
    const png = await artifacts.get(result.shot.artifact.sha256);
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.equal(png.byteLength, result.shot.artifact.bytes);
    // The run ended: its session was reclaimed and its slot given back.
    await pollUntil('the ended run’s session reclaimed', () => reclaims.includes('ended'));
    assert.equal(pool.sessionState(id), undefined);
    // Each browser action is a journaled effect: a completed one is in the journal once.
    const steps = await keel.request('GET', `/v1/runs/${id}/steps`);
    assert.equal(steps.status, 200, JSON.stringify(steps.body));
    const tools = (steps.body.steps as any[]).map((s: any) => s.name);
    assert.equal(tools.filter((n: string) => n === 'browser_navigate').length, 2);
  });

  test('a session idle past its limit is reclaimed, and rebuilt from its saved storage state', async () => {
    const before = reclaims.filter((r) => r === 'idle').length;
    const idlePool = newPool(IDLE_MS);
    current = () => idlePool;
    let result: any;
    try {
      result = await finished(await submit('browser-idle', { base: pages.url }));
    } finally {
      current = () => pool;
      await idlePool.close();
    }
    assert.equal(reclaims.filter((r) => r === 'idle').length, before + 1);
    assert.equal(result.reopened.opened, true);
    assert.equal(result.reopened.restored, true);
    assert.equal(result.cookie, 'cookie: who=idle');
    assert.equal(result.storage, 'storage: idle');
  });

  test('an idle session is reclaimed even when its idle timer fires before the lease expires by the wall clock', async () => {
    const idlePool = newPool(IDLE_MS);
    const before = reclaims.filter((r) => r === 'idle').length;
    const request = {
      runId: `early-${Date.now()}`,
      tenantId: 'default',
      priority: 'interactive' as const,
    };
    const realNow = Date.now;
    try {
      // The wall clock runs 400 ms ahead of the timers while the action ends, as it does when a
      // busy turn leaves the event loop's cached time (which timers count from) behind it: the
      // idle timer then fires before the lease it checks has expired.
      Date.now = () => realNow() + 400;
      await idlePool.use(request, (page) => page.goto(`${pages.url}/`));
      Date.now = realNow;
      assert.equal(idlePool.sessionState(request.runId), 'idle');
      await pollUntil(
        'the idle session reclaimed',
        () => reclaims.filter((r) => r === 'idle').length === before + 1,
      );
      assert.equal(idlePool.sessionState(request.runId), undefined);
    } finally {
      Date.now = realNow;
      await idlePool.close();
    }
  });

  test('a killed Chromium is browser_crashed, and the session is rebuilt with its cookie', async () => {
    const id = await submit('browser-crash', { base: pages.url });
    const result = await finished(id);
    assert.equal(result.crashCode, 'browser_crashed');
    assert.equal(result.rebuilt.opened, true);
    assert.equal(result.rebuilt.restored, true);
    assert.equal(result.cookie, 'cookie: who=crash');
    assert.ok(reclaims.includes('crashed'));
    assert.notEqual(await pool.chromiumPid(), result.killed.killed, 'a new Chromium serves');
  });

  test("a tenant at its cap waits for a session while another tenant's run proceeds", async () => {
    pools.configure({ pools: { browser: { tenantCaps: { default: 1 } } } });
    try {
      gate('first');
      const first = await submit('browser-capped', {
        base: pages.url,
        name: 'first',
        gate: 'first',
      });
      await pollUntil(
        'the first run holds a session',
        () => pool.sessionState(first) !== undefined,
      );
      const second = await submit('browser-capped', { base: pages.url, name: 'second' });
      await pollUntil('the second run queues for a browser slot', () =>
        pools.snapshot().some((p) => p.name === 'browser' && p.queued === 1),
      );
      const other = await submit('browser-capped', { base: pages.url, name: 'other' }, otherKey);
      const otherResult = await finished(other, otherKey);
      assert.match(otherResult.cookie, /Logged in as other/);
      const waiting = (await keel.request('GET', `/v1/runs/${second}`)).body;
      assert.ok(!TERMINAL.has(waiting.status), `the capped run waits: ${waiting.status}`);
      assert.equal(pool.sessionState(second), undefined, 'no session for the capped run yet');
      gates.get('first')!();
      await finished(first);
      const secondResult = await finished(second);
      assert.match(secondResult.cookie, /Logged in as second/);
    } finally {
      gates.get('first')?.();
      pools.configure({ pools: {} });
    }
  });

  test('a batch run preempted for an interactive one releases its session, and gets it back rebuilt', async () => {
    const logs: string[] = [];
    // A Keel of its own with one run slot and preemption after 100 ms, on the same browser pool.
    const single = await startKeel({
      agents: [batchBrowser, quickStep],
      dir: mkdtempSync(join(dir, 'keel-preempt-')),
      orchestrator: {
        pools,
        maxActiveRuns: 1,
        preemptAfterMs: 100,
        pollIntervalMs: 20,
        log: (_level, message) => logs.push(message),
        toolNode: { dataDir: dir, sandboxManager: () => undefined, browserPool: () => pool },
        onRunLeft: (runId, status) => {
          void pool.release(
            runId,
            status === 'queued' ? 'preempted' : TERMINAL.has(status) ? 'ended' : 'lost',
          );
        },
      },
    });
    gate('batch');
    try {
      const before = reclaims.filter((r) => r === 'preempted').length;
      const batch = await single.request('POST', '/v1/runs', {
        agent: 'browser-batch',
        priority: 'batch',
        input: { base: pages.url },
      });
      assert.equal(batch.status, 201, JSON.stringify(batch.body));
      await pollUntil(
        'the batch run holds a session',
        () => pool.sessionState(batch.body.id) === 'idle',
      );
      const quick = await single.request('POST', '/v1/runs', {
        agent: 'quick-step',
        priority: 'interactive',
      });
      assert.equal(quick.status, 201, JSON.stringify(quick.body));
      await pollUntil('the batch run asked to yield', () =>
        logs.includes('preempting batch runs for interactive runs waiting too long'),
      );
      gates.get('batch')!();
      await pollUntil(
        'the preempted run’s session reclaimed',
        () => reclaims.filter((r) => r === 'preempted').length === before + 1,
      );
      await single.waitForRun(quick.body.id, (r) => r.status === 'succeeded', RUN_TIMEOUT_MS);
      const done = await single.waitForRun(
        batch.body.id,
        (r) => TERMINAL.has(r.status),
        RUN_TIMEOUT_MS,
      );
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      assert.equal(done.result.reopened.opened, true);
      assert.equal(done.result.reopened.restored, true);
      assert.equal(done.result.cookie, 'cookie: who=batch');
    } finally {
      gates.get('batch')?.();
      await single.close();
    }
  });

  test('a run parked on a timer releases its session, and gets it back rebuilt when it wakes', async () => {
    const before = reclaims.filter((r) => r === 'waiting').length;
    const id = await submit('browser-sleeper', { base: pages.url });
    const result = await finished(id);
    assert.equal(reclaims.filter((r) => r === 'waiting').length, before + 1);
    assert.equal(result.reopened.opened, true);
    assert.equal(result.reopened.restored, true);
    assert.equal(result.cookie, 'cookie: who=sleepy');
  });
});
