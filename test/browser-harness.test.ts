// The browser tests must not pass by skipping in CI: with CI=true and no Chromium, the browser test
// file fails loudly.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const BROWSER_TEST = fileURLToPath(new URL('./browser-dashboard.test.ts', import.meta.url));

test('under CI=true a missing Chromium fails the browser tests instead of skipping them', () => {
  // NODE_TEST_CONTEXT would make the child talk the runner's binary protocol instead of printing
  // its report.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const result = spawnSync(process.execPath, ['--test', BROWSER_TEST], {
    env: { ...env, CI: 'true', KEEL_TEST_CHROMIUM: '/nonexistent/chromium' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.notEqual(result.status, 0, result.stdout);
  assert.match(
    result.stdout + result.stderr,
    /browser tests cannot run under CI: Chromium not found at \/nonexistent\/chromium/,
  );
});
