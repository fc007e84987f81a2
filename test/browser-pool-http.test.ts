// The browser pool in a real `keel dev` process, over HTTP: a run drives the process's own Chromium
// through the built-in tools against pages served on 127.0.0.1, parks on a timer (its session is
// reclaimed, then rebuilt from its saved cookie), and /metrics shows the pool: sessions by state,
// starts, reclaims by reason, the `browser` pool's limit from KEEL_BROWSER_MAX_SESSIONS. Then the
// Keel process is killed with SIGKILL and no Chromium of it may outlive it. Skipped, with the
// reason, only when Chromium is missing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { chromiumMissing, serveBrowserPages } from './support/browser-pages.ts';
import { keelScene } from './support/keel-scene.ts';
import { parseSamples, type Sample } from './support/telemetry.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/browser-agents.ts', import.meta.url));
const KEY = 'browser-http-tenant-key';
const ADMIN = 'browser-http-admin-key-0123456789';
const ORPHAN_DEADLINE_MS = 15_000;

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

/** Process ids whose command line names `marker` (Chromium's profile lives under it). */
function processesNaming(marker: string): number[] {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' });
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  return out
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

test('a real Keel process drives Chromium for a run, shows its pool in /metrics, and leaves no Chromium behind when killed', {
  skip: chromiumMissing(),
  timeout: 180_000,
}, async (t) => {
  const pages = await serveBrowserPages();
  t.after(() => pages.close());
  const scene = await keelScene(t, {
    agents: AGENTS,
    apiKey: KEY,
    prefix: 'keel-browser-http-',
    untilMs: 120_000,
    // Chromium's profile goes under the scene's directory (TMPDIR), so its processes are findable.
    env: (dir) => ({ KEEL_ADMIN_KEY: ADMIN, KEEL_BROWSER_MAX_SESSIONS: '3', TMPDIR: dir }),
  });
  const keel = await scene.start();
  t.after(() => {
    for (const pid of processesNaming(scene.dir)) process.kill(pid, 'SIGKILL');
  });

  const submitted = await scene.api('POST', '/v1/runs', {
    agent: 'shopper',
    input: { base: pages.url },
  });
  assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
  const run = await scene.until(submitted.body.id, (r) =>
    ['succeeded', 'failed', 'cancelled'].includes(r.status),
  );
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.equal(run.result.typed, 'typed: over http');
  assert.equal(run.result.cookie, 'cookie: who=http');
  assert.equal(run.result.reopened.opened, true);
  assert.equal(run.result.reopened.restored, true);
  assert.equal(run.result.shot.artifact.mediaType, 'image/png');

  const scrape = async (): Promise<Sample[]> => {
    const res = await fetch(`${keel.url}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(res.status, 200);
    return parseSamples(await res.text());
  };
  // The run ended: its session was reclaimed (after the commit that ended it: poll).
  const deadline = Date.now() + 30_000;
  let samples = await scrape();
  while (value(samples, 'keel_browser_reclaims_total', { reason: 'ended' }) < 1) {
    assert.ok(Date.now() < deadline, 'the ended run’s session is never reclaimed');
    await new Promise((r) => setTimeout(r, 100));
    samples = await scrape();
  }
  assert.equal(value(samples, 'keel_browser_reclaims_total', { reason: 'waiting' }), 1);
  assert.equal(
    value(samples, 'keel_browser_session_start_seconds_count', { restored: 'false' }),
    1,
  );
  assert.equal(value(samples, 'keel_browser_session_start_seconds_count', { restored: 'true' }), 1);
  assert.equal(value(samples, 'keel_browser_sessions', { state: 'idle' }), 0);
  assert.equal(value(samples, 'keel_browser_sessions', { state: 'active' }), 0);
  assert.equal(value(samples, 'keel_pool_limit', { pool: 'browser' }), 3);
  assert.equal(value(samples, 'keel_pool_running', { pool: 'browser' }), 0);

  // The navigation is one journaled effect: a replay would return it, not drive the page again.
  const steps = await scene.api('GET', `/v1/runs/${run.id}/steps`);
  assert.equal(steps.status, 200);
  const names = (steps.body.steps as Array<{ name: string }>).map((s) => s.name);
  assert.equal(names.filter((n) => n === 'browser_navigate').length, 2);

  // Chromium runs while Keel does, and dies with it (its DevTools pipe closes).
  assert.ok(processesNaming(scene.dir).length > 0, 'Chromium runs under the scene');
  await keel.kill('SIGKILL');
  const gone = Date.now() + ORPHAN_DEADLINE_MS;
  while (processesNaming(scene.dir).length > 0) {
    assert.ok(
      Date.now() < gone,
      `Chromium outlived its Keel: ${processesNaming(scene.dir).join(', ')}`,
    );
    await new Promise((r) => setTimeout(r, 100));
  }
});
