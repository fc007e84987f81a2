// The approval flow in a real browser (Debian's Chromium, headless, via playwright-core) against a
// real Keel (HTTP API, engine, SQLite): two runs park on calls the tenant's policy marks for
// approval; the Approvals page lists both across runs with the call to decide on (tool, risk,
// arguments, run, agent); Approve lets one call run (its run succeeds with the tool's result), Deny
// with a note refuses the other (the agent gets tool_denied_by_approver); the page empties. The
// decisions are audited under the signed-in key. No page may throw.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { isKeelError } from '../src/domain/keel-error.ts';
import { defineAgent, defineTool } from '../src/index.ts';
import { artifact, browserUnavailable, launchBrowser, type Browser } from './support/browser.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';

const UI_TIMEOUT_MS = 15_000;
const skip = browserUnavailable();
const transfers: string[] = [];

const transfer = defineTool({
  name: 'transfer',
  description: 'Moves money',
  input: z.object({ amount: z.number(), to: z.string() }),
  effect: 'side-effect',
  risk: 'high',
  run: ({ amount, to }) => {
    transfers.push(`${amount} ${to}`);
    return { transferred: amount };
  },
});

const treasurer = defineAgent({
  name: 'treasurer',
  version: '1',
  tools: [transfer],
  async run(ctx, input: { amount: number; to: string }) {
    try {
      return await ctx.tool(transfer, input);
    } catch (error) {
      return { code: isKeelError(error) ? error.code : 'other' };
    }
  },
});

describe('approvals in the dashboard (browser)', { skip, timeout: 120_000 }, () => {
  let keel: TestKeel;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    keel = await startKeel({ agents: [treasurer] });
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(UI_TIMEOUT_MS);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await keel?.close();
  });

  test('pending calls across runs are shown with their arguments, approved and denied from the page', async () => {
    const policy = await keel.request('PUT', '/v1/policy', {
      constraints: [{ tool: 'transfer', path: 'amount', maximum: 100, approval: 'required' }],
    });
    assert.equal(policy.status, 200);
    const ids: string[] = [];
    for (const [amount, to] of [
      [500, 'acme-supplies'],
      [9000, 'unknown-offshore'],
    ] as const) {
      const created = await keel.request('POST', '/v1/runs', {
        agent: 'treasurer',
        input: { amount, to },
      });
      ids.push(created.body.id);
      await keel.waitForRun(created.body.id, (r) => r.waitingReason === 'approval');
    }

    await page.goto(`${keel.url}/`);
    await page.getByLabel('API key').fill(keel.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('heading', { name: 'Approvals' }).waitFor();
    const cards = page.getByTestId('approval');
    await cards.nth(1).waitFor();
    assert.equal(await cards.count(), 2);

    const card = (runId: string) => page.locator(`[data-execution-id="${runId}.1"]`);
    const first = card(ids[0]!);
    assert.match((await first.textContent()) ?? '', /transfer/);
    assert.match((await first.textContent()) ?? '', /high risk/);
    assert.match((await first.textContent()) ?? '', /treasurer/);
    assert.match((await first.textContent()) ?? '', /amount must be a number ≤ 100/);
    const args = JSON.parse((await first.getByTestId('approval-args').textContent()) ?? '');
    assert.deepEqual(args, { amount: 500, to: 'acme-supplies' });
    await page.screenshot({ path: artifact('approvals-pending.png') });

    await first.getByRole('button', { name: 'Approve' }).click();
    await first.waitFor({ state: 'detached' });
    const second = card(ids[1]!);
    await second.getByLabel(/Note/).fill('not a known payee');
    await second.getByRole('button', { name: 'Deny' }).click();
    await page.getByTestId('approvals-empty').waitFor();

    const approved = await keel.waitForRun(ids[0]!, (r) => TERMINAL.has(r.status));
    assert.deepEqual(approved.result, { transferred: 500 });
    const denied = await keel.waitForRun(ids[1]!, (r) => TERMINAL.has(r.status));
    assert.deepEqual(denied.result, { code: 'tool_denied_by_approver' });
    assert.deepEqual(transfers, ['500 acme-supplies']);

    const decided = await keel.request('GET', '/v1/approvals?status=all');
    const byRun = new Map(decided.body.approvals.map((a: any) => [a.runId, a]));
    assert.equal((byRun.get(ids[1]!) as any).note, 'not a known payee');
    const audit = await keel.request('GET', '/v1/audit?action=run.approval');
    assert.deepEqual(
      audit.body.entries.map((e: any) => [e.data.decision, e.actor.type, e.outcome]),
      [
        ['deny', 'key', 'ok'],
        ['approve', 'key', 'ok'],
      ],
    );
    assert.deepEqual(pageErrors, []);
  });
});
