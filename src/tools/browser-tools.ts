// The built-in browser tools — browser_open, browser_navigate, browser_click, browser_type,
// browser_extract_text, browser_screenshot, browser_close — as ordinary Keel tools: each call is a
// journaled effect with an execution id, so a replay returns its recorded result and never drives
// the page again. They act on the run's session in the node's browser pool (ctx.node.browserPool),
// which keeps one page per run across steps and queues for a `browser` pool slot when the run has
// no session yet. Effect classes: navigating, clicking and typing are `side-effect` (a page's
// scripts and forms can do anything: after a crash mid-call the outcome is `unknown` and the run
// parks for a decision, never a blind re-run); reading text and screenshots are `read`; opening and
// closing the session are `idempotent`. This module holds no pool of its own.
import { z } from 'zod';
import type { Page } from 'playwright-core';
import { BROWSER_ACTION_TIMEOUT_MS, type BrowserPool } from '../browser/browser-pool.ts';
import { CHROMIUM_LAUNCH_TIMEOUT_MS } from '../browser/chromium.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import { defineTool } from '../sdk/define.ts';
import type { Json, ToolContext, ToolDefinition } from '../sdk/types.ts';

/** Most characters browser_extract_text returns; the rest is cut and `truncated` says so. */
export const EXTRACT_TEXT_MAX_CHARS = 100_000;
export const SELECTOR_MAX_CHARS = 2_048;
export const TYPED_TEXT_MAX_CHARS = 100_000;
/**
 * A browser call may first wait for a session slot (the pool's queue, per-tenant caps), then start
 * Chromium, then act: its backstop covers all three.
 */
const BROWSER_CALL_TIMEOUT_MS = 5 * 60_000 + CHROMIUM_LAUNCH_TIMEOUT_MS + BROWSER_ACTION_TIMEOUT_MS;

/** Pages the browser may load: http(s) only (no file:, chrome:, javascript: or data: URLs). */
const PageUrl = z
  .url({ protocol: /^https?$/ })
  .max(8_192)
  .describe('An http:// or https:// URL');
const Selector = z
  .string()
  .min(1)
  .max(SELECTOR_MAX_CHARS)
  .describe('A Playwright selector (CSS, text=…, role=…) of the element');

export interface BrowserToolsOptions {
  /** Prefix for the tool names (default none: `browser_open`, …). */
  prefix?: string;
}

type PageInfo = { url: string; title: string };

const pageInfo = async (page: Page): Promise<PageInfo> => ({
  url: page.url(),
  title: await page.title(),
});

function poolOf(ctx: ToolContext): BrowserPool {
  const pool = ctx.node.browserPool?.();
  if (pool === undefined)
    throw new KeelError(
      'browser_unavailable',
      'this node has no browser pool: run under keel dev|server|worker, or attach one to the engine',
    );
  return pool;
}

/** Runs `fn` on the run's page; a Playwright failure becomes `browser_action_failed`. */
function onPage<T>(
  ctx: ToolContext,
  fn: (page: Page, opened: { opened: boolean; restored: boolean }) => Promise<T>,
): Promise<T> {
  return poolOf(ctx).use(
    {
      runId: ctx.runId,
      tenantId: ctx.tenantId,
      priority: ctx.priority ?? 'interactive',
      signal: ctx.signal,
    },
    async (page, info) => {
      try {
        return await fn(page, info);
      } catch (error) {
        if (isKeelError(error)) throw error;
        throw new KeelError(
          'browser_action_failed',
          String((error as Error).message ?? error).split('\n')[0]!,
        );
      }
    },
  );
}

/**
 * The built-in browser tools.
 * @example
 * import { browserTools } from 'keel';
 * const browser = browserTools();
 * await ctx.tool(browser.browser_navigate, { url: 'https://example.com' });
 * const { text } = await ctx.tool(browser.browser_extract_text, {});
 */
export function browserTools(options: BrowserToolsOptions = {}) {
  const name = (base: string) => `${options.prefix ?? ''}${base}`;
  const common = { timeoutMs: BROWSER_CALL_TIMEOUT_MS } as const;

  const open = defineTool({
    ...common,
    name: name('browser_open'),
    effect: 'idempotent',
    description:
      "Opens the run's browser session (rebuilt from its saved cookies and local storage after a reclaim or crash) and tells what page it shows.",
    input: z.object({}),
    async run(_args, ctx): Promise<PageInfo & { opened: boolean; restored: boolean }> {
      return onPage(ctx, async (page, info) => ({ ...(await pageInfo(page)), ...info }));
    },
  });

  const navigate = defineTool({
    ...common,
    name: name('browser_navigate'),
    effect: 'side-effect',
    description: 'Loads a URL in the run’s browser page and waits for it to load.',
    input: z.object({ url: PageUrl }),
    async run(args, ctx): Promise<PageInfo & { status: number | null }> {
      return onPage(ctx, async (page) => {
        const response = await page.goto(args.url, { waitUntil: 'load' });
        return { status: response?.status() ?? null, ...(await pageInfo(page)) };
      });
    },
  });

  const click = defineTool({
    ...common,
    name: name('browser_click'),
    effect: 'side-effect',
    description: 'Clicks the element a selector names and waits for the page to settle.',
    input: z.object({ selector: Selector }),
    async run(args, ctx): Promise<PageInfo> {
      return onPage(ctx, async (page) => {
        await page.click(args.selector);
        await page.waitForLoadState('load');
        return pageInfo(page);
      });
    },
  });

  const type = defineTool({
    ...common,
    name: name('browser_type'),
    effect: 'side-effect',
    description:
      'Fills the input a selector names with text (replacing what it held); `submit` presses Enter after.',
    input: z.object({
      selector: Selector,
      text: z.string().max(TYPED_TEXT_MAX_CHARS),
      submit: z.boolean().optional(),
    }),
    async run(args, ctx): Promise<PageInfo> {
      return onPage(ctx, async (page) => {
        await page.fill(args.selector, args.text);
        if (args.submit === true) {
          await page.press(args.selector, 'Enter');
          await page.waitForLoadState('load');
        }
        return pageInfo(page);
      });
    },
  });

  const extractText = defineTool({
    ...common,
    name: name('browser_extract_text'),
    effect: 'read',
    description:
      'Returns the visible text of the page, or of the element a selector names, with the page URL and title.',
    input: z.object({ selector: Selector.optional() }),
    async run(args, ctx): Promise<PageInfo & { text: string; truncated: boolean }> {
      return onPage(ctx, async (page) => {
        // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, on purpose: the text a reader sees (no script or hidden text), as the tool promises.
        const text = await page.innerText(args.selector ?? 'body');
        return {
          ...(await pageInfo(page)),
          text: text.slice(0, EXTRACT_TEXT_MAX_CHARS),
          truncated: text.length > EXTRACT_TEXT_MAX_CHARS,
        };
      });
    },
  });

  const screenshot = defineTool({
    ...common,
    name: name('browser_screenshot'),
    effect: 'read',
    description:
      'Takes a PNG screenshot of the page, keeps it as an artifact and returns its sha256.',
    input: z.object({ fullPage: z.boolean().optional() }),
    async run(
      args,
      ctx,
    ): Promise<PageInfo & { artifact: { sha256: string; bytes: number; mediaType: string } }> {
      const pool = poolOf(ctx);
      return onPage(ctx, async (page) => {
        const png = await page.screenshot({ type: 'png', fullPage: args.fullPage ?? false });
        const sha256 = await pool.artifacts.put(png);
        return {
          ...(await pageInfo(page)),
          artifact: { sha256, bytes: png.byteLength, mediaType: 'image/png' },
        };
      });
    },
  });

  const close = defineTool({
    ...common,
    name: name('browser_close'),
    effect: 'idempotent',
    description:
      "Closes the run's browser session now (its cookies and local storage stay saved for a later browser_open).",
    input: z.object({}),
    async run(_args, ctx): Promise<{ closed: true }> {
      await poolOf(ctx).release(ctx.runId, 'closed');
      return { closed: true };
    },
  });

  return {
    browser_open: open,
    browser_navigate: navigate,
    browser_click: click,
    browser_type: type,
    browser_extract_text: extractText,
    browser_screenshot: screenshot,
    browser_close: close,
    // biome-ignore lint/suspicious/noExplicitAny: each tool has its own input type; the record only checks the outputs.
  } satisfies Record<string, ToolDefinition<any, Json>>;
}
