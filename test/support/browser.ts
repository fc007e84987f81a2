// Test harness for the dashboard: Debian's Chromium (apt-get install chromium) driven headless by
// playwright-core, with a fresh profile per launch and Chromium's background networking off (it
// would otherwise call home on a closed network). Under CI=true a missing Chromium fails the test;
// elsewhere the browser tests are skipped with a reason.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../src/browser/chromium.ts';

export const CHROMIUM_PATH = process.env.KEEL_TEST_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots land here (CI keeps the folder as the test artifacts). */
export const ARTIFACTS_DIR = fileURLToPath(
  new URL('../../test-artifacts/browser/', import.meta.url),
);
export const DASHBOARD_INDEX = fileURLToPath(new URL('../../dist/web/index.html', import.meta.url));

// The flags Keel's browser pool launches Chromium with (src/browser/chromium.ts).

/**
 * Why the browser tests cannot run here, or undefined when they can. Throws under CI, where
 * skipping would hide it.
 */
export function browserUnavailable(): string | undefined {
  const problems: string[] = [];
  if (!existsSync(CHROMIUM_PATH))
    problems.push(`Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium)`);
  if (!existsSync(DASHBOARD_INDEX))
    problems.push('the dashboard is not built (npm run build writes dist/web)');
  if (problems.length === 0) return undefined;
  if (process.env.CI === 'true')
    throw new Error(`browser tests cannot run under CI: ${problems.join('; ')}`);
  return problems.join('; ');
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'keel-chromium-'));
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1440, height: 900 },
    deviceScaleFactor: 1,
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const artifact = (name: string): string => join(ARTIFACTS_DIR, name);

/** How long a browser test waits for the page or the API to show something. */
export const UI_TIMEOUT_MS = 15_000;

/**
 * JSON requests to the Keel a browser test started (its URL read at each call: it is known only
 * once Keel is up), with the tenant's key.
 */
export function tenantApi(url: () => string, apiKey: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

/** Polls `probe` until it gives a value; fails naming `what` after UI_TIMEOUT_MS. */
export async function pollFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + UI_TIMEOUT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`never reached: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
