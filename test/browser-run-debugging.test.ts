// The dashboard's debugging loop in a real browser (Debian's Chromium via playwright-core) against
// a real `keel dev` whose model is a fake OpenAI-compatible server streaming real SSE chunks:
// a run page that watches a model stream (no crash, the live text, then the committed step; after
// a dropped connection the stream resumes from the last *run event*, never from a delta), the step
// drawer (a model call as a conversation, a tool's arguments and result, loading a value cut
// short), and the rerun, reset and fork actions with their lineage. The page is served through a
// real proxy that can cut its event stream. Every route it drives must be served: none is skipped.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import {
  artifact,
  browserUnavailable,
  launchBrowser,
  type Browser,
  tenantApi,
  pollFor,
  UI_TIMEOUT_MS,
} from './support/browser.ts';
import { startFakeOpenAi, type FakeProviderServer } from './support/fake-openai-server.ts';
import { startKeelProcess, type KeelProcess } from './support/keel-process.ts';
import {
  startStreamCuttingProxy,
  type StreamCuttingProxy,
} from './support/stream-cutting-proxy.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/stream-agents.ts', import.meta.url));
const API_KEY = 'keel_debug_browser_key';
const PROVIDER_KEY = 'sk-fake-provider-key-0123456789';
const ANSWER = 'The sum is 5, computed with care.';
/** The answer streams in 5-character pieces and stops after two ("The sum is") until released. */
const HELD_TEXT = 'The sum is';
const skip = browserUnavailable();

describe('run debugging in the dashboard (browser)', { skip, timeout: 180_000 }, () => {
  let dir: string;
  let keel: KeelProcess;
  let fake: FakeProviderServer;
  let proxy: StreamCuttingProxy;
  let browser: Browser;
  let page: Page;
  let release: () => void = () => {};
  /** The run the streaming test watched (the drawer test reads it). */
  let streamedRunId: string | undefined;
  const pageErrors: string[] = [];

  const api = tenantApi(() => keel.url, API_KEY);
  const until = pollFor;
  const runWhen = (id: string, predicate: (run: any) => boolean) =>
    until(`run ${id} in the expected state`, async () => {
      const { body } = await api('GET', `/v1/runs/${id}`);
      return predicate(body) ? body : undefined;
    });
  /** Skips `t` when this server has no such route (it answers 404 `not_found`, not `run_not_found`). */
  const needsRoute = async (t: TestContext, method: string, path: string, why: string) => {
    const probe = await api(
      method,
      path.replace(':id', 'run_00000000-0000-0000-0000-000000000000'),
      {},
    );
    // Every route this file drives is served: a missing one fails, it is never skipped.
    assert.notEqual(
      probe.body?.error?.code,
      'not_found',
      `${method} ${path} is not served: ${why}`,
    );
    void t;
    return true;
  };
  const runStatus = () => page.getByTestId('run-status').locator('.stat-value');
  const newRunId = async (previous: string) => {
    await page.waitForURL(
      (url) => /\/runs\/run_/.test(url.pathname) && !url.pathname.endsWith(previous),
    );
    return new URL(page.url()).pathname.split('/runs/')[1]!;
  };

  before(async () => {
    let hold = new Promise<void>((resolve) => (release = resolve));
    fake = await startFakeOpenAi((body) => {
      const tool = body.messages.find((m: any) => m.role === 'tool');
      if (tool === undefined)
        return {
          kind: 'reply',
          text: 'Let me add.',
          toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }],
        };
      const reply = {
        kind: 'reply' as const,
        text: ANSWER,
        chunkChars: 5,
        hold: { afterPieces: 2, until: hold },
      };
      hold = Promise.resolve();
      return reply;
    });
    dir = mkdtempSync(join(tmpdir(), 'keel-browser-debug-'));
    // The process-tier sandbox runs its command as another user, which must reach its workspace.
    chmodSync(dir, 0o755);
    const modelsFile = join(dir, 'keel.models.json');
    writeFileSync(
      modelsFile,
      JSON.stringify({
        models: [
          {
            name: 'gpt',
            provider: 'openai',
            providerModel: 'gpt-test',
            baseUrl: `${fake.url}/v1`,
            apiKeyEnv: 'KEEL_TEST_PROVIDER_KEY',
          },
        ],
      }),
    );
    keel = await startKeelProcess({
      agents: AGENTS,
      dataDir: join(dir, 'data'),
      apiKey: API_KEY,
      env: {
        KEEL_MODELS_FILE: modelsFile,
        KEEL_TEST_PROVIDER_KEY: PROVIDER_KEY,
        KEEL_TEST_CHANGED_FILE: join(dir, 'changed'),
      },
    });
    proxy = await startStreamCuttingProxy(keel.url);
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // A render error is caught by the router's error page and reported on the console, not thrown.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${proxy.url}/`);
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  });

  after(async () => {
    release();
    await browser?.close();
    await proxy?.close();
    await keel?.kill('SIGKILL');
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Opens the page of a run parked on its 'go' input, waits until the page follows it live, then
   * lets it go: nothing it streams after can be missed.
   */
  async function followThenGo(runId: string): Promise<void> {
    await runWhen(runId, (r) => r.status === 'waiting');
    await page.goto(`${proxy.url}/runs/${runId}`);
    await page.getByTestId('live-state').and(page.locator('[data-state="live"]')).waitFor();
    assert.equal(
      (await api('POST', `/v1/runs/${runId}/input`, { key: 'go', value: true })).status,
      202,
    );
  }

  test('a streaming model: the page shows the text as it arrives, resumes a dropped stream from the last run event (not a delta), then shows the committed step', async () => {
    const { body: created } = await api('POST', '/v1/runs', {
      agent: 'adder',
      input: 'What is 2 + 3?',
    });
    streamedRunId = created.id;
    await followThenGo(created.id);

    // The second model call streams its first pieces and is held there: the page shows them live
    // (and has not crashed on the deltas).
    const live = page.getByTestId('live-text');
    await live.getByText(HELD_TEXT).waitFor();
    assert.deepEqual(pageErrors, []);
    // The first call's streamed text ("Let me add.") gave way to its committed step.
    await until('one streaming call left', async () =>
      (await live.count()) === 1 ? true : undefined,
    );
    const deltaSeq = Number(await live.getAttribute('data-seq'));
    const { body: held } = await api('GET', `/v1/runs/${created.id}/steps`);
    const streamingStep = held.steps.find((s: any) => s.seq === deltaSeq);
    assert.ok(
      streamingStep === undefined || streamingStep.status === 'running',
      `the text shown is not yet committed: ${JSON.stringify(streamingStep)}`,
    );

    // Every run event so far has reached the page; then the connection drops.
    const { body: events } = await api('GET', `/v1/runs/${created.id}/events?format=json`);
    const lastEventSeq = events.at(-1).seq as number;
    await page
      .getByTestId('events')
      .locator(`li:has(.event-seq:text-is("${lastEventSeq}"))`)
      .waitFor();
    assert.notEqual(
      lastEventSeq,
      deltaSeq,
      'a delta’s seq (a journal position) differs from the event cursor',
    );
    const before = proxy.eventRequests.length;
    assert.equal(proxy.cutEventStreams(), 1);
    const resumed = await until('the page reconnects', async () => proxy.eventRequests[before]);
    assert.equal(
      resumed['last-event-id'],
      String(lastEventSeq),
      'resumed after the last run event',
    );
    await page.getByTestId('live-state').and(page.locator('[data-state="live"]')).waitFor();
    await live.getByText(HELD_TEXT).waitFor();
    await page.screenshot({ path: artifact('run-streaming.png'), fullPage: true });

    release();
    await runStatus().getByText('succeeded').waitFor();
    await live.waitFor({ state: 'detached' });
    await page
      .getByTestId('timeline')
      .locator(`.timeline-row[data-seq="${deltaSeq}"][data-status="succeeded"]`)
      .waitFor();
    const run = await runWhen(created.id, (r) => r.status === 'succeeded');
    assert.deepEqual(run.result, { text: ANSWER, steps: 2 });
    assert.ok(
      fake.requests.every((r) => r.body.stream === true),
      'the model streamed',
    );
    // The events shown are the run's events, each once, in order: no delta among them.
    const seqs = await page
      .getByTestId('events')
      .locator('li')
      .evaluateAll((items) =>
        items.map((li) => Number(li.querySelector('.event-seq')?.textContent)),
      );
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
    );
    assert.deepEqual(pageErrors, []);
  });

  test("a sandboxed exec: the page shows the program's output while it runs, then the committed step", async () => {
    const { body: created } = await api('POST', '/v1/runs', { agent: 'talker', input: {} });
    await followThenGo(created.id);
    const live = page.getByTestId('live-text');
    await live.getByText('live-line-one').waitFor();
    assert.match((await live.textContent()) ?? '', /tool exec/);
    const liveSeq = Number(await live.getAttribute('data-seq'));
    const { body: during } = await api('GET', `/v1/runs/${created.id}/steps`);
    const execStep = during.steps.find((s: any) => s.seq === liveSeq);
    assert.equal(execStep?.status ?? 'running', 'running', 'the output shown is not committed yet');
    const done = await runWhen(created.id, (r) => r.status === 'succeeded');
    assert.deepEqual(done.result, { stdout: 'live-line-one\n', stderr: 'live-line-two\n' });
    // The committed step replaces the live text.
    await until('the live output gave way to the step', async () =>
      (await live.count()) === 0 ? true : undefined,
    );
    assert.deepEqual(pageErrors, []);
  });

  test("ctx.progress: the run page shows the run's latest progress, and it follows the run", async () => {
    const { body: created } = await api('POST', '/v1/runs', { agent: 'reporter', input: {} });
    await runWhen(created.id, (r) => r.status === 'waiting');
    await page.goto(`${proxy.url}/runs/${created.id}`);
    const progress = page.getByTestId('run-progress');
    await progress.getByText('collecting').waitFor();
    assert.equal(
      (await api('POST', `/v1/runs/${created.id}/input`, { key: 'go', value: true })).status,
      202,
    );
    await runWhen(created.id, (r) => r.status === 'succeeded');
    await progress.getByText('finished').waitFor();
    assert.deepEqual(pageErrors, []);
  });

  test('the step drawer shows a model call as a conversation and a tool call with its arguments and result', async (_t) => {
    assert.ok(streamedRunId !== undefined, 'needs the streamed run of the previous test');
    await page.goto(`${proxy.url}/runs/${streamedRunId}`);
    const timeline = page.getByTestId('timeline');
    const drawer = page.getByTestId('step-detail');
    const models = timeline.locator('.timeline-row[data-kind="model"]');
    await models.nth(1).click();
    await drawer.waitFor();
    const { body } = await api('GET', `/v1/runs/${streamedRunId}/steps`);
    assert.ok('inputTruncated' in body.steps[0], 'steps carry their inputs and outputs');
    const conversation = drawer.getByTestId('model-conversation');
    await conversation.waitFor();
    const roles = await conversation
      .locator('.conversation > li')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-role')));
    assert.deepEqual(roles, ['system', 'user', 'assistant', 'tool', 'response']);
    await conversation.locator('li[data-role="user"]').getByText('What is 2 + 3?').waitFor();
    await conversation.locator('li[data-role="assistant"] [data-tool="add"]').waitFor();
    await conversation.locator('li[data-role="response"]').getByText(ANSWER).waitFor();
    await conversation.getByTestId('model-usage').waitFor();
    await page.screenshot({ path: artifact('step-drawer-model.png') });

    await timeline.locator('.timeline-row[data-kind="tool"]', { hasText: 'add' }).click();
    await drawer.getByTestId('tool-io').waitFor();
    const args = await drawer.getByTestId('io-arguments').textContent();
    const result = await drawer.getByTestId('io-result').textContent();
    assert.match(args ?? '', /"a": 2.*"b": 3/s);
    assert.match(result ?? '', /"sum": 5/);
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });

    // A sandboxed exec: exit code, stdout and stderr.
    const { body: shell } = await api('POST', '/v1/runs', { agent: 'shell', input: {} });
    const shellRun = await runWhen(
      shell.id,
      (r) => r.status === 'succeeded' || r.status === 'failed',
    );
    assert.deepEqual(shellRun.result, { exitCode: 3 }, JSON.stringify(shellRun.error));
    await page.goto(`${proxy.url}/runs/${shell.id}`);
    await timeline.locator('.timeline-row', { hasText: 'exec' }).click();
    const exec = drawer.getByTestId('exec-output');
    assert.equal(await exec.getByTestId('exec-exit-code').textContent(), '3');
    assert.equal((await exec.getByTestId('exec-stdout').textContent())?.trim(), 'out-line');
    assert.equal((await exec.getByTestId('exec-stderr').textContent())?.trim(), 'err-line');
    await page.screenshot({ path: artifact('step-drawer-exec.png') });
    await page.keyboard.press('Escape');

    // A value cut short in the list loads whole on request.
    const { body: bulky } = await api('POST', '/v1/runs', { agent: 'bulky', input: {} });
    await runWhen(bulky.id, (r) => r.status === 'succeeded');
    const listed = (await api('GET', `/v1/runs/${bulky.id}/steps`)).body.steps[0];
    assert.equal(listed.outputTruncated, true, 'the list cuts a 300 kB value short');
    await page.goto(`${proxy.url}/runs/${bulky.id}`);
    await timeline.locator('.timeline-row', { hasText: 'big' }).click();
    await drawer.getByRole('button', { name: 'Load full value' }).click();
    await drawer.getByTestId('truncated').waitFor({ state: 'detached' });
    assert.ok(
      ((await drawer.getByTestId('io-output').textContent()) ?? '').includes('x'.repeat(300_000)),
    );
  });

  test('Rerun starts the same run again and links it to its source, on the run page and in the list', async (t) => {
    if (
      !(await needsRoute(
        t,
        'POST',
        '/v1/runs/:id/rerun',
        'needs POST /v1/runs/:id/rerun (issue 17 reset helper)',
      ))
    )
      return;
    const { body: source } = await api('POST', '/v1/runs', {
      agent: 'counter',
      input: { fail: true },
    });
    await runWhen(source.id, (r) => r.status === 'failed');
    await page.goto(`${proxy.url}/runs/${source.id}`);
    await page.getByTestId('rerun-run').click();
    const id = await newRunId(source.id);
    const rerun = await runWhen(id, (r) => r.status === 'failed');
    assert.equal(rerun.rerunOf, source.id);
    assert.deepEqual(rerun.input, source.input);
    await page.getByTestId('lineage-rerun').getByRole('link').click();
    await page.waitForURL((url) => url.pathname.endsWith(source.id));
    await page.goto(`${proxy.url}/runs`);
    await page.locator(`tr[data-run-id="${id}"]`).getByTestId('lineage-tag').waitFor();
  });

  test('Reset from a step in the drawer starts a run that keeps the journal through it', async (t) => {
    if (
      !(await needsRoute(
        t,
        'POST',
        '/v1/runs/:id/reset',
        'needs POST /v1/runs/:id/reset (issue 17 reset helper)',
      ))
    )
      return;
    const { body: source } = await api('POST', '/v1/runs', {
      agent: 'counter',
      input: { fail: true },
    });
    await runWhen(source.id, (r) => r.status === 'failed');
    await page.goto(`${proxy.url}/runs/${source.id}`);
    await page.getByTestId('timeline').locator('.timeline-row', { hasText: 'count-2' }).click();
    await page.getByTestId('reset-through-step').click();
    const form = page.getByTestId('reset-form');
    assert.equal(await form.getByLabel(/Keep the journal through position/).inputValue(), '2');
    await form.getByRole('button', { name: 'Start reset' }).click();
    const id = await newRunId(source.id);
    const reset = await runWhen(id, (r) => r.status === 'failed');
    assert.deepEqual(reset.resetFrom, { runId: source.id, position: 2 });
    await page.getByTestId('lineage-reset').getByText('after #2').waitFor();
  });

  test('Fork starts a run with an edited input and links it to its source', async (t) => {
    if (
      !(await needsRoute(
        t,
        'POST',
        '/v1/runs/:id/fork',
        'needs POST /v1/runs/:id/fork (issue 17 reset helper)',
      ))
    )
      return;
    const { body: source } = await api('POST', '/v1/runs', {
      agent: 'counter',
      input: { fail: true },
    });
    await runWhen(source.id, (r) => r.status === 'failed');
    await page.goto(`${proxy.url}/runs/${source.id}`);
    await page.getByTestId('fork-run').click();
    const form = page.getByTestId('fork-form');
    await form.getByLabel('Input (JSON)').fill('{"fail": false, "label": "forked"}');
    await form.getByLabel(/Keep the journal through position/).fill('1');
    await form.getByRole('button', { name: 'Start fork' }).click();
    const id = await newRunId(source.id);
    const fork = await runWhen(id, (r) => r.status === 'succeeded');
    assert.deepEqual(fork.input, { fail: false, label: 'forked' });
    assert.deepEqual(fork.resetFrom, { runId: source.id, position: 1 });
    assert.deepEqual(fork.result, { total: 6, label: 'forked' });
    await page.getByTestId('lineage-reset').waitFor();
    await runStatus().getByText('succeeded').waitFor();
  });

  test('a run that failed on non-determinism offers a reset from the last matching position', async (_t) => {
    const { body: source } = await api('POST', '/v1/runs', { agent: 'fickle', input: null });
    await runWhen(source.id, (r) => r.status === 'waiting');
    writeFileSync(join(dir, 'changed'), 'the code changed under the parked run');
    await api('POST', `/v1/runs/${source.id}/input`, { key: 'go', value: 1 });
    const failed = await runWhen(source.id, (r) => r.status === 'failed');
    assert.equal(failed.error.code, 'non_determinism');
    await page.goto(`${proxy.url}/runs/${source.id}`);
    await runStatus().getByText('failed').waitFor();
    assert.equal(
      typeof failed.error.details?.resetFrom,
      'number',
      'non_determinism offers resetFrom',
    );
    await page
      .getByTestId('reset-diverged')
      .getByText(`Reset from position ${failed.error.details.resetFrom}`)
      .click();
    const form = page.getByTestId('reset-form');
    assert.equal(
      await form.getByLabel(/Keep the journal through position/).inputValue(),
      String(failed.error.details.resetFrom),
    );
    await page.screenshot({ path: artifact('run-reset-diverged.png'), fullPage: true });
    await form.getByRole('button', { name: 'Start reset' }).click();
    const id = await newRunId(source.id);
    const reset = await runWhen(id, (r) => r.status === 'waiting');
    assert.deepEqual(reset.resetFrom, {
      runId: source.id,
      position: failed.error.details.resetFrom,
    });
  });

  test('no page threw', () => {
    assert.deepEqual(pageErrors, []);
  });
});
