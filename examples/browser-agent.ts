// An agent that reads a web page with Keel's browser pool: `npx keel dev --agents
// examples/browser-agent.ts` (after `npm run build`; needs Debian's chromium, or KEEL_BROWSER_PATH),
// then POST /v1/runs { "agent": "page-reader", "input": { "url": "http://127.0.0.1:8000/" } }.
// Each browser call is a journaled effect: after a crash or a wait the agent replays from the
// journal, and the browser session is rebuilt from its saved cookies when the next call needs it.
import { defineAgent } from 'keel';
import { browserTools } from 'keel/browser';

const browser = browserTools();

/** Opens a page, optionally searches in it, and returns its text and a screenshot's artifact. */
export const pageReader = defineAgent({
  name: 'page-reader',
  version: '1',
  async run(ctx, input: { url: string; search?: { selector: string; text: string } }) {
    const page = await ctx.tool(browser.browser_navigate, { url: input.url });
    if (input.search !== undefined)
      await ctx.tool(browser.browser_type, { ...input.search, submit: true });
    const { text, truncated } = await ctx.tool(browser.browser_extract_text, {});
    const shot = await ctx.tool(browser.browser_screenshot, { fullPage: true });
    return { title: page.title, text: text.slice(0, 2_000), truncated, screenshot: shot.artifact };
  },
});

export default [pageReader];
