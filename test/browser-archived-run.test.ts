// An archived run read back over the API and in the dashboard, against a real `keel dev` whose
// retention keeps one ended run live (KEEL_RETENTION_RUNS=1) and whose archiver passes every 100
// ms: once a newer run has ended, the older one's journal and events go to the archive and leave
// the live tables, and GET /v1/runs/:id (marked `archived`), its steps, its events (JSON and the
// SSE replay) and its run page (an "archived" marker) still show all of it. No page may throw.
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
  pollFor,
  UI_TIMEOUT_MS,
} from './support/browser.ts';
import { startKeelProcess, type KeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/dev-agents.ts', import.meta.url));
const API_KEY = 'keel_browser_archive_key';
const skip = browserUnavailable();

describe('an archived run over the API and in the dashboard (browser)', {
  skip,
  timeout: 180_000,
}, () => {
  let dir: string;
  let keel: KeelProcess;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const api = tenantApi(() => keel.url, API_KEY);
  const until = pollFor;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-browser-archive-'));
    keel = await startKeelProcess({
      agents: AGENTS,
      dataDir: join(dir, 'data'),
      apiKey: API_KEY,
      env: { KEEL_RETENTION_RUNS: '1', KEEL_ARCHIVE_INTERVAL_MS: '100' },
      startupTimeoutMs: 60_000,
    });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
  });

  after(async () => {
    await browser?.close();
    await keel?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('the older run is archived and reads back whole', async () => {
    const ended = async (id: string) =>
      until(`run ${id} ended`, async () => {
        const { body } = await api('GET', `/v1/runs/${id}`);
        return body.status === 'succeeded' ? body : undefined;
      });
    const first = (await api('POST', '/v1/runs', { agent: 'slow', input: { ms: 1 } })).body.id;
    await ended(first);
    const stepsBefore = (await api('GET', `/v1/runs/${first}/steps`)).body.steps;
    const eventsBefore = (await api('GET', `/v1/runs/${first}/events?format=json`)).body;
    assert.equal(stepsBefore.length, 2);
    assert.ok(eventsBefore.length > 0);
    assert.equal((await api('GET', `/v1/runs/${first}`)).body.archived, undefined);

    const second = (await api('POST', '/v1/runs', { agent: 'slow', input: { ms: 1 } })).body.id;
    await ended(second);
    const archived = await until('the first run archived', async () => {
      const { body } = await api('GET', `/v1/runs/${first}`);
      return body.archived === true ? body : undefined;
    });
    assert.equal(archived.archiveComplete, true);
    assert.equal(archived.result, 3);
    // Its live journal is gone: a reset would run the effects before the position again.
    const reset = await api('POST', `/v1/runs/${first}/reset`, { position: 1 });
    assert.equal(reset.status, 409);
    assert.equal(reset.body.error.code, 'run_archived');
    assert.deepEqual((await api('GET', `/v1/runs/${first}/steps`)).body.steps, stepsBefore);
    assert.deepEqual((await api('GET', `/v1/runs/${first}/events?format=json`)).body, eventsBefore);
    const replay = await fetch(`${keel.url}/v1/runs/${first}/events`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    const text = await replay.text();
    for (const event of eventsBefore) assert.ok(text.includes(`id: ${event.seq}`), text);
    assert.equal((await api('GET', `/v1/runs/${second}`)).body.archived, undefined, 'kept live');

    await page.goto(`${keel.url}/`);
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await page.goto(`${keel.url}/runs/${first}`);
    await page.getByTestId('run-archived').getByText('archived').waitFor();
    await page.getByText('second').first().waitFor();
    await page.screenshot({ path: artifact('archived-run.png'), fullPage: true });
    await page.goto(`${keel.url}/runs/${second}`);
    await page.getByTestId('run-status').waitFor();
    assert.equal(await page.getByTestId('run-archived').count(), 0);
    assert.deepEqual(pageErrors, []);
  });
});
