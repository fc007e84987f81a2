// The run tree on the dashboard's run page, in a real browser (Debian's Chromium via
// playwright-core) against a real `keel dev`: a parent with a `cancel`, a `detach` and a `wait`
// child shows its family with each run's status and policy, links to each child, and a child's
// page shows the same family from the root with itself marked; as the runs change, the statuses
// follow (the parent parks for its `wait` child, the `cancel` child is cancelled), and the parent
// ends once its `wait` child has. No page may throw.
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

const AGENTS = fileURLToPath(new URL('./fixtures/orphan-agents.ts', import.meta.url));
const API_KEY = 'keel_browser_tree_key';
const skip = browserUnavailable();

describe('run tree on the dashboard (browser)', { skip, timeout: 180_000 }, () => {
  let dir: string;
  let keel: KeelProcess;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  const api = tenantApi(() => keel.url, API_KEY);
  const until = pollFor;
  /** The tree as the page shows it: run id → [depth, status, policy text]. */
  const shownTree = async () =>
    page.getByTestId('tree-node').evaluateAll((nodes) =>
      nodes.map((n) => ({
        id: n.getAttribute('data-run-id'),
        depth: Number(n.getAttribute('data-depth')),
        status: n.querySelector('[data-status]')?.getAttribute('data-status') ?? null,
        policy: n.querySelector('[data-testid="on-parent-end"]')?.textContent?.trim() ?? null,
        current: n.classList.contains('current'),
      })),
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-browser-tree-'));
    keel = await startKeelProcess({ agents: AGENTS, dataDir: join(dir, 'data'), apiKey: API_KEY });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text());
    });
    await page.goto(`${keel.url}/`);
    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await keel?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('a parent and its children: statuses, policies, links, and the family from a child’s page', async () => {
    const parentId = (await api('POST', '/v1/runs', { agent: 'orphan-family' })).body.id as string;
    const family = await until('three waiting children', async () => {
      const { body } = await api('GET', `/v1/runs/${parentId}/tree`);
      return body.runs.length === 4 && body.runs.every((r: any) => r.status === 'waiting')
        ? body.runs
        : undefined;
    });
    const childOf = (policy: string): string => {
      const child = family.find((r: any) => r.onParentEnd === policy);
      assert.ok(child, `no ${policy} child in ${JSON.stringify(family)}`);
      return child.id;
    };

    await page.goto(`${keel.url}/runs/${parentId}`);
    await page.getByTestId('run-tree').waitFor();
    await until('four runs in the tree panel', async () =>
      (await page.getByTestId('tree-node').count()) === 4 ? true : undefined,
    );
    const shown = await shownTree();
    assert.deepEqual(shown[0], {
      id: parentId,
      depth: 0,
      status: 'waiting',
      policy: null,
      current: true,
    });
    assert.deepEqual(
      shown
        .slice(1)
        .map((n) => [n.id, n.depth, n.status, n.policy])
        .sort(),
      ['cancel', 'detach', 'wait']
        .map((p) => [childOf(p), 1, 'waiting', `· on parent end: ${p}`])
        .sort(),
    );
    await page.screenshot({ path: artifact('run-tree-parent.png'), fullPage: true });

    // A child's page: the same family from the root, the child marked, the parent a link.
    await page
      .getByTestId('run-tree')
      .locator(`[data-run-id="${childOf('wait')}"] a`)
      .click();
    await page.waitForURL((url) => url.pathname.endsWith(`/runs/${childOf('wait')}`));
    // Read in one go once the child's page shows it: right after the URL changes, the parent
    // page's panel can still be on screen, and then gone while the child's tree loads.
    const fromChild = await until('the child page’s tree', async () => {
      const nodes = await shownTree();
      return nodes.length === 4 && nodes.some((n) => n.current && n.id === childOf('wait'))
        ? nodes
        : undefined;
    });
    assert.equal(fromChild[0]!.id, parentId, 'the tree starts at the root');
    assert.deepEqual(
      fromChild.filter((n) => n.current).map((n) => n.id),
      [childOf('wait')],
    );

    // The parent is told to end: it parks for its `wait` child, the `cancel` child is cancelled;
    // the panel follows.
    await api('POST', `/v1/runs/${parentId}/input`, { key: 'end', value: true });
    await until('the cancel child shown cancelled', async () => {
      const nodes = await shownTree();
      return nodes.find((n) => n.id === childOf('cancel'))?.status === 'cancelled'
        ? true
        : undefined;
    });
    await page.goto(`${keel.url}/runs/${parentId}`);
    await page.getByTestId('run-status').getByText('children').waitFor();

    // The `wait` child ends: the parent ends with its own result, and the panel says so.
    await api('POST', `/v1/runs/${childOf('wait')}/input`, { key: 'go', value: 1 });
    await until('the parent shown succeeded in its tree', async () => {
      const nodes = await shownTree();
      return nodes[0]?.status === 'succeeded' &&
        nodes.find((n) => n.id === childOf('wait'))?.status === 'succeeded'
        ? true
        : undefined;
    });
    await page.screenshot({ path: artifact('run-tree-ended.png'), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
