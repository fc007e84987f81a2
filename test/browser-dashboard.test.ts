// The web dashboard in a real browser (Debian's Chromium, headless, via playwright-core) against a
// real `keel dev` process: sign in, start a run and watch it complete live while answering its
// input, cancel a run, watch the runs list update, resolve a tool execution left unknown by a
// kill -9, and the tenant, pools and nodes pages. Screenshots go to test-artifacts/browser/.
// Nothing may be loaded from outside Keel and no page may throw.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import {
  artifact,
  browserUnavailable,
  launchBrowser,
  type Browser,
  tenantApi,
  UI_TIMEOUT_MS,
} from './support/browser.ts';
import { freePort, startKeelProcess, type KeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/dashboard-agents.ts', import.meta.url));
const API_KEY = 'keel_browser_test_key';
const ADMIN_KEY = 'admin_browser_test_key_0123456789';
const skip = browserUnavailable();

describe('web dashboard (browser)', { skip, timeout: 180_000 }, () => {
  let dir: string;
  let port: number;
  let keel: KeelProcess;
  let browser: Browser;
  let page: Page;
  const external: string[] = [];
  const pageErrors: string[] = [];

  const api = tenantApi(() => keel.url, API_KEY);
  const waitForApi = async (id: string, predicate: (run: any) => boolean) => {
    const deadline = Date.now() + UI_TIMEOUT_MS;
    for (;;) {
      const { body } = await api('GET', `/v1/runs/${id}`);
      if (predicate(body)) return body;
      if (Date.now() > deadline)
        throw new Error(`run ${id} never reached the expected state: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /**
   * Polls `condition` until it holds (UI_TIMEOUT_MS at most); `describe` says what was seen when it
   * did not.
   */
  const until = async (condition: () => Promise<boolean>, describe: () => Promise<unknown>) => {
    const deadline = Date.now() + UI_TIMEOUT_MS;
    while (!(await condition())) {
      if (Date.now() > deadline)
        throw new Error(`condition not reached; last seen: ${JSON.stringify(await describe())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const runStatus = () => page.getByTestId('run-status').locator('.stat-value');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-browser-'));
    port = await freePort();
    keel = await startKeelProcess({
      agents: AGENTS,
      dataDir: dir,
      port,
      apiKey: API_KEY,
      env: { KEEL_ADMIN_KEY: ADMIN_KEY },
    });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    page.on('request', (request) => {
      if (!request.url().startsWith(keel.url) && !request.url().startsWith('data:'))
        external.push(request.url());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
  });

  after(async () => {
    await browser?.close();
    await keel?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('sign in: the app is served at / with a strict CSP; a wrong key is refused, the tenant key is accepted', async () => {
    const response = await page.goto(`${keel.url}/`);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-security-policy'] ?? '', /default-src 'self'/);
    await page.getByLabel('API key').fill('keel_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('This API key is not recognised.').waitFor();
    await page.screenshot({ path: artifact('sign-in.png') });
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/runs');
    await page.getByTestId('tenant-name').getByText('dev').waitFor();
  });

  test('a run started from the list completes live on its page: timeline, events, and an input answered in the form', async () => {
    await page.goto(`${keel.url}/runs`);
    await page.evaluate(() => ((window as any).__samePage = true));
    await page.getByRole('button', { name: 'New run' }).click();
    await page.getByTestId('new-run-agent').selectOption('research');
    await page.getByLabel('Input (JSON)').fill('{"topic": "durable agents"}');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/runs\/run_/);
    const runId = page.url().split('/runs/')[1]!;

    // The run reaches its input wait while the page watches: the form appears without a reload.
    const form = page.getByTestId('input-form');
    await form.waitFor();
    assert.equal(await form.getAttribute('data-key'), 'approve');
    await runStatus().getByText('waiting').waitFor();
    const timeline = page.getByTestId('timeline');
    // Two model calls share one slot: the second one's bar has a queued part. The flaky tool is
    // marked as retried.
    const models = timeline.locator('.timeline-row[data-kind="model"]');
    assert.equal(await models.count(), 2);
    assert.equal(
      (await models.locator('[data-segment="queued"]').count()) >= 1,
      true,
      'a model call waited for the slot',
    );
    await timeline
      .locator('.timeline-row[data-kind="tool"]', { hasText: 'fetch-page' })
      .locator('.marker-retry')
      .getByText('↻ 2')
      .waitFor();
    await timeline
      .locator('.timeline-row[data-kind="input"][data-status="waiting"] [data-segment="waiting"]')
      .waitFor();

    await form.getByRole('textbox').fill('true');
    await form.getByRole('button', { name: 'Send input' }).click();
    await page.getByTestId('live-state').and(page.locator('[data-state="ended"]')).waitFor();
    await runStatus().getByText('succeeded').waitFor();
    await page.getByTestId('run-result').waitFor();
    assert.deepEqual(
      JSON.parse((await page.getByTestId('run-result').textContent()) ?? ''),
      (await api('GET', `/v1/runs/${runId}`)).body.result,
    );
    const types = await page
      .getByTestId('events')
      .locator('li')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-type')));
    assert.ok(
      types.includes('input.received') && types.at(-1) === 'run.succeeded',
      types.join(','),
    );
    assert.equal(
      await page.evaluate(() => (window as any).__samePage),
      true,
      'the page updated live, without a reload',
    );
    await timeline.locator('.timeline-row[data-kind="input"][data-status="succeeded"]').waitFor();
    await timeline
      .locator('.timeline-row', { hasText: 'publish' })
      .and(page.locator('[data-status="succeeded"]'))
      .waitFor();
    assert.equal(
      await timeline.locator('.timeline-rows .timeline-row:not([data-status="succeeded"])').count(),
      0,
    );
    // Above the effects, a lane of the run's attempts: it parked for the input, then completed.
    const lane = timeline.getByTestId('timeline-attempts');
    await lane.locator('[data-ending="completed"]').waitFor();
    assert.equal((await lane.locator('[data-ending="parked"]').count()) >= 1, true);

    // Keyboard: a timeline row is a button; Enter opens its details.
    await timeline.locator('.timeline-row', { hasText: 'fetch-page' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('step-detail').getByText('idempotent').waitFor();
    await page.keyboard.press('Enter');
    await page.getByTestId('step-detail').waitFor({ state: 'detached' });
    await timeline.locator('.timeline-row', { hasText: 'fetch-page' }).blur();
    await page.mouse.move(1, 1);
    await page.locator('#timeline').screenshot({ path: artifact('run-timeline.png') });
    await page.screenshot({ path: artifact('run-page.png'), fullPage: true });
  });

  test('cancel from the run page (opened by a deep link) stops a running run', async () => {
    const { body: run } = await api('POST', '/v1/runs', {
      agent: 'long-task',
      input: { steps: 300 },
    });
    const response = await page.goto(`${keel.url}/runs/${run.id}`);
    assert.equal(
      response?.status(),
      200,
      'a deep link to a page of the app is answered with the app',
    );
    await page.getByTestId('timeline').locator('.timeline-row').nth(2).waitFor();
    await page.getByTestId('cancel-run').click();
    await runStatus().getByText('cancelled').waitFor();
    assert.equal(await page.getByTestId('cancel-run').isDisabled(), true);
    const ended = await waitForApi(run.id, (r) => r.status === 'cancelled');
    assert.equal(ended.outcome, 'after_partial_work');
    await page.screenshot({ path: artifact('run-cancelled.png'), fullPage: true });
  });

  test('the runs list updates live and filters by status and agent', async () => {
    await page.goto(`${keel.url}/runs`);
    const table = page.getByTestId('runs-table');
    await table.locator('tbody tr[data-run-id]').first().waitFor();
    const { body: run } = await api('POST', '/v1/runs', {
      agent: 'long-task',
      input: { steps: 2 },
    });
    await table.locator(`tr[data-run-id="${run.id}"][data-status="succeeded"]`).waitFor();
    // A filter change re-renders the table (briefly empty while it loads): wait for the rows it
    // should end with.
    const rows = () =>
      table
        .locator('tbody tr[data-run-id]')
        .evaluateAll((trs) =>
          trs.map((tr) => `${tr.getAttribute('data-agent')}:${tr.getAttribute('data-status')}`),
        );
    await page.getByTestId('filter-status').selectOption('cancelled');
    await until(async () => (await rows()).join() === 'long-task:cancelled', rows);
    assert.match(page.url(), /status=cancelled/);
    await page.getByTestId('filter-status').selectOption('');
    await page.getByTestId('filter-agent').selectOption('research');
    await until(async () => (await rows()).join() === 'research:succeeded', rows);
    await page.getByTestId('filter-agent').selectOption('');
    await until(async () => (await rows()).length === 3, rows);
    await page.screenshot({ path: artifact('runs-list.png') });
  });

  test('tenant, pools and nodes pages show what the store and the scheduling plane know, and say what is not available', async () => {
    await page.goto(`${keel.url}/tenant`);
    const costPerSuccess = page.getByTestId('cost-per-success').locator('.stat-value');
    await costPerSuccess.waitFor();
    assert.match((await costPerSuccess.textContent()) ?? '', /^\$\d/);
    await page.getByTestId('usage-table').getByRole('cell', { name: 'research' }).waitFor();
    // The tenant's quotas from its record: the dev tenant has the defaults.
    await page.locator('#quotas').getByText('Fair-share weight').waitFor();
    await page.locator('#quotas').getByText('unlimited').first().waitFor();
    await page.screenshot({ path: artifact('tenant.png'), fullPage: true });

    // Keyboard: skip link first, then the navigation (Runs, Approvals, Tenant, Pools).
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    for (const expected of ['Runs', 'Approvals', 'Tenant', 'Pools']) {
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), expected);
    }
    await page.keyboard.press('Enter');
    await page.getByTestId('queue-table').waitFor();
    await page.getByTestId('throughput-chart').locator('.recharts-bar-rectangle').first().waitFor();
    // This process's effect pools (totals): the inline tool pool exists from the start, with its
    // limit.
    const inline = page
      .locator('#pools')
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'inline', exact: true }) });
    await inline.getByRole('cell', { name: 'tool', exact: true }).waitFor();
    await inline.getByRole('cell', { name: '256', exact: true }).waitFor();
    await page.screenshot({ path: artifact('pools.png'), fullPage: true });

    await page.goto(`${keel.url}/nodes`);
    await page
      .getByTestId('nodes-empty')
      .getByRole('heading', { name: 'No sandbox nodes registered' })
      .waitFor();
    await page.screenshot({ path: artifact('nodes.png') });
  });

  test('the operator signs in with the admin key and sees every tenant, and no runs', async () => {
    await fetch(`${keel.url}/v1/admin/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'acme' }),
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tenants' }).waitFor();
    const table = page.getByTestId('tenants-table');
    await table.locator('tr[data-tenant="acme"]').waitFor();
    const dev = await table.locator('tr[data-tenant="dev"] td').allTextContents();
    const { body: runs } = await api('GET', '/v1/runs?limit=200');
    assert.equal(dev[2], String(runs.runs.length), 'the dev tenant’s run count');
    assert.equal(
      await page.getByRole('link', { name: 'Runs' }).count(),
      0,
      'no runs page for the admin key',
    );
    await page.screenshot({ path: artifact('tenants-admin.png') });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('tenant-name').getByText('dev').waitFor();
  });

  test('the page rides out a kill -9 of Keel (the stream resumes with Last-Event-ID) and resolves the unknown side effect', async () => {
    const { body: run } = await api('POST', '/v1/runs', {
      agent: 'checkout',
      input: { cents: 500 },
    });
    await page.goto(`${keel.url}/runs/${run.id}`);
    // The side effect's intent is committed (journal `running`, event effect.started): kill Keel
    // mid-call.
    await page.getByTestId('events').locator('li[data-type="effect.started"]').waitFor();
    await page.getByTestId('live-state').and(page.locator('[data-state="live"]')).waitFor();
    await keel.kill('SIGKILL');
    await page
      .getByTestId('live-state')
      .and(page.locator('[data-state="retrying"], [data-state="connecting"]'))
      .waitFor();
    keel = await startKeelProcess({
      agents: AGENTS,
      dataDir: dir,
      port,
      apiKey: API_KEY,
      env: { KEEL_ADMIN_KEY: ADMIN_KEY },
    });

    // Without a reload, the page reconnects, resumes after the last event it saw, and offers the
    // decision.
    const resolve = page.getByTestId('resolve-form');
    await resolve.waitFor({ timeout: 30_000 });
    await page
      .getByTestId('events')
      .locator('li[data-type="run.waiting"]')
      .waitFor({ timeout: 30_000 });
    const seqs = await page
      .getByTestId('events')
      .locator('li')
      .evaluateAll((items) =>
        items.map((li) => Number(li.querySelector('.event-seq')?.textContent)),
      );
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      'every event once, in order, across the reconnect',
    );
    await page
      .getByTestId('timeline')
      .locator('.timeline-row[data-status="unknown"] .marker-unknown')
      .waitFor();
    await page.screenshot({ path: artifact('run-unknown.png'), fullPage: true });
    await resolve.getByLabel('Result (JSON)').fill('{"charged": 500, "checkedBy": "operator"}');
    await resolve.getByRole('button', { name: 'Mark succeeded' }).click();
    await runStatus().getByText('succeeded').waitFor();
    const ended = await waitForApi(run.id, (r) => r.status === 'succeeded');
    assert.deepEqual(ended.result, { receipt: { charged: 500, checkedBy: 'operator' } });
  });

  test('nothing was loaded from outside Keel and no page threw', () => {
    assert.deepEqual(external, []);
    assert.deepEqual(pageErrors, []);
  });
});
