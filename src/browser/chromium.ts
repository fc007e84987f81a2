// Starts the node's one Chromium: Debian's /usr/bin/chromium (KEEL_BROWSER_PATH), headless, driven
// by playwright-core. Chromium is launched as a server and connected to, because only the server
// handle exposes the Chromium process (its pid for the crash tests and metrics; kill() when a
// close hangs). It never downloads a browser build: a missing executable is `browser_unavailable`.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserServer } from 'playwright-core';
import { KeelError } from '../domain/keel-error.ts';

/**
 * Flags for a headless Chromium in a container. `--no-sandbox`: Chromium refuses to start its own
 * sandbox as root (and containers rarely allow its user namespaces), so it runs unsandboxed — a
 * documented limitation: the browser runs outside Keel's sandbox tiers too. The rest keep it from
 * calling home on a closed network and from using a GPU or /dev/shm it may not have.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--mute-audio',
] as const;

/** How long Chromium may take to start before the launch fails. */
export const CHROMIUM_LAUNCH_TIMEOUT_MS = 30_000;

export interface RunningChromium {
  browser: Browser;
  /** The Chromium process id (undefined if Playwright could not tell). */
  pid: number | undefined;
  /** Closes the browser, then kills the process if it is still there. Idempotent. */
  close(): Promise<void>;
}

export async function launchChromium(executablePath: string): Promise<RunningChromium> {
  if (!existsSync(executablePath))
    throw new KeelError(
      'browser_unavailable',
      `Chromium not found at ${executablePath} (apt-get install chromium, or set KEEL_BROWSER_PATH)`,
    );
  let server: BrowserServer;
  try {
    server = await chromium.launchServer({
      executablePath,
      headless: true,
      args: [...CHROMIUM_ARGS],
      timeout: CHROMIUM_LAUNCH_TIMEOUT_MS,
      // Keel owns shutdown (close() below): Playwright's own signal handlers would race it.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (error) {
    throw new KeelError(
      'browser_unavailable',
      `Chromium did not start: ${(error as Error).message}`,
    );
  }
  let browser: Browser;
  try {
    browser = await chromium.connect(server.wsEndpoint(), { timeout: CHROMIUM_LAUNCH_TIMEOUT_MS });
  } catch (error) {
    await server.kill().catch(() => undefined);
    throw new KeelError(
      'browser_unavailable',
      `cannot connect to Chromium: ${(error as Error).message}`,
    );
  }
  let closing: Promise<void> | undefined;
  return {
    browser,
    pid: server.process().pid,
    close() {
      closing ??= (async () => {
        await browser.close().catch(() => undefined);
        await server.close().catch(() => server.kill().catch(() => undefined));
      })();
      return closing;
    },
  };
}
