// Renders the report's charts to PNG with headless Chromium (Debian's `chromium`, driven by
// playwright-core): one page per chart, the same SVG as the HTML. Chromium missing is not an
// error: the PNGs are skipped and the caller is told why.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM_ARGS } from '../browser/chromium.ts';
import type { Chart } from './metrics.ts';
import { chartSvg } from './report-html.ts';

export const CHROMIUM_PATH_DEFAULT = '/usr/bin/chromium';

export type PngOutcome = { written: string[] } | { skipped: string };

export async function renderPngs(
  charts: readonly Chart[],
  reportFile: string,
  outDir: string,
  chromiumPath = CHROMIUM_PATH_DEFAULT,
): Promise<PngOutcome> {
  if (!existsSync(chromiumPath))
    return {
      skipped: `Chromium not found at ${chromiumPath} (apt-get install chromium): PNG charts skipped, report.html is complete`,
    };
  let playwright: typeof import('playwright-core');
  try {
    playwright = await import('playwright-core');
  } catch {
    return {
      skipped: 'playwright-core is not installed: PNG charts skipped, report.html is complete',
    };
  }
  const browser = await playwright.chromium.launch({
    executablePath: chromiumPath,
    args: [...CHROMIUM_ARGS],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 600, height: 400 } });
    const written: string[] = [];
    for (const chart of charts) {
      await page.setContent(
        `<!doctype html><body style="margin:10px;font-family:sans-serif"><h3 style="margin:0 0 6px">${chart.title}</h3><div id="c">${chartSvg(chart)}</div></body>`,
      );
      const file = join(outDir, `${chart.id}.png`);
      await page.locator('body').screenshot({ path: file });
      written.push(file);
    }
    await page.setViewportSize({ width: 1240, height: 900 });
    await page.goto(`file://${reportFile}`);
    const full = join(outDir, 'report.png');
    await page.screenshot({ path: full, fullPage: true });
    written.push(full);
    return { written };
  } finally {
    await browser.close();
  }
}
