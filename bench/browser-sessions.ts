// Browser session costs on this machine: the first session (Chromium launch included), then fresh
// sessions (a new BrowserContext and page) and sessions restored from saved storage state, each
// opened, navigated to a loopback page and reclaimed through the real BrowserPool. Prints one JSON
// line. Bounded: SESSIONS of each kind, one at a time. Usage: node bench/browser-sessions.ts [n]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserPool } from '../src/browser/browser-pool.ts';
import { FileArtifactStore } from '../src/sandbox/file-artifact-store.ts';
import { PoolRegistry } from '../src/scheduling/pool-registry.ts';

const SESSIONS = Number(process.argv[2] ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'keel-bench-browser-'));
const server = createServer((_req, res) => {
  res.setHeader('set-cookie', 'who=bench; Path=/');
  res.setHeader('content-type', 'text/html');
  res.end('<!doctype html><title>bench</title><p>bench</p>');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
const starts: Array<{ seconds: number; restored: boolean }> = [];
const pool = new BrowserPool({
  pools: new PoolRegistry(),
  artifacts: new FileArtifactStore(join(dir, 'artifacts')),
  executablePath: process.env.KEEL_BROWSER_PATH ?? '/usr/bin/chromium',
  maxSessions: 1,
  idleMs: 60_000,
  observer: {
    started: (seconds, restored) => starts.push({ seconds, restored }),
    reclaimed: () => {},
  },
});
const actionMs: number[] = [];
async function session(runId: string): Promise<void> {
  const t0 = performance.now();
  await pool.use({ runId, tenantId: 'bench', priority: 'interactive' }, async (page) => {
    await page.goto(url);
  });
  actionMs.push(performance.now() - t0);
  await pool.release(runId, 'ended');
}
try {
  await session('first');
  for (let i = 0; i < SESSIONS; i++) await session(`fresh-${i}`);
  for (let i = 0; i < SESSIONS; i++) await session(`fresh-${i}`); // same runs again: restored
} finally {
  await pool.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
const ms = (values: number[], q: number): number => {
  const sorted = values.toSorted((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;
};
const fresh = starts
  .slice(1)
  .filter((s) => !s.restored)
  .map((s) => s.seconds * 1000);
const restored = starts.filter((s) => s.restored).map((s) => s.seconds * 1000);
console.log(
  JSON.stringify({
    sessions: SESSIONS,
    firstSessionMs: Math.round(starts[0]!.seconds * 1000),
    freshStartMs: { p50: ms(fresh, 0.5), p95: ms(fresh, 0.95) },
    restoredStartMs: { p50: ms(restored, 0.5), p95: ms(restored, 0.95) },
    openNavigateSaveMs: { p50: ms(actionMs.slice(1), 0.5), p95: ms(actionMs.slice(1), 0.95) },
  }),
);
