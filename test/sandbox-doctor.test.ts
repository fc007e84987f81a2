// `keel doctor` on this host and on a host without the tiers' binaries (PATH emptied): each tier is
// reported with why it cannot run and the package to install, and the threat suite then reports
// those tiers as skipped with that reason instead of passing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const THREATS = fileURLToPath(new URL('./sandbox-threats.test.ts', import.meta.url));
const root = process.getuid?.() === 0;

test('keel doctor proves each tier by running a command in it', {
  skip: root ? undefined : 'needs root',
}, async () => {
  const { stdout } = await run(process.execPath, [MAIN, 'doctor', '--json'], { timeout: 60_000 });
  const { tiers } = JSON.parse(stdout) as {
    tiers: Array<{ tier: string; ok: boolean; detail: string; fix?: string }>;
  };
  assert.deepEqual(
    tiers.map((t) => t.tier),
    ['process', 'namespace', 'gvisor'],
  );
  for (const tier of tiers)
    assert.ok(tier.ok || (tier.fix !== undefined && tier.detail.length > 0), JSON.stringify(tier));
});

test('without bwrap and runsc, doctor names the packages and the threat suite skips those tiers with the reason', async () => {
  const env = { PATH: '/nonexistent' };
  const doctor = await run(process.execPath, [MAIN, 'doctor'], { env, timeout: 60_000 }).catch(
    (error: { stdout: string; code: number }) => error,
  );
  assert.match(doctor.stdout, /FAIL namespace .*bwrap is not installed|FAIL namespace .*need/);
  if (root) {
    assert.match(doctor.stdout, /fix: apt-get install -y bubblewrap/);
    assert.match(doctor.stdout, /fix: apt-get install -y runsc/);
  }
  const suite = await run(process.execPath, ['--test', '--test-reporter=tap', THREATS], {
    env,
    timeout: 60_000,
  }).catch((error: { stdout: string }) => error);
  assert.match(suite.stdout, /# SKIP tier namespace unavailable on this host/);
  assert.match(suite.stdout, /# SKIP tier gvisor unavailable on this host/);
  assert.match(suite.stdout, /# pass 0/);
});
