// `keel dev` as a real process: a graceful SIGTERM mid-run loses nothing and exits 0; a second
// process on the same data directory is refused; without KEEL_API_KEY a key is generated and
// printed, and it works.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startKeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/dev-agents.ts', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

test('SIGTERM mid-run shuts down cleanly; after a restart the run finishes', {
  timeout: 60_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const key = 'dev-process-key';
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let keel = await startKeelProcess({ agents: AGENTS, dataDir: dir, port, apiKey: key });
  t.after(() => keel.kill('SIGKILL'));

  // A second process on the same data directory is refused with a clear message.
  const second = spawnSync(
    process.execPath,
    [MAIN, 'dev', '--agents', AGENTS, '--port', String(await freePort()), '--data', dir],
    { encoding: 'utf8', timeout: 20_000 },
  );
  assert.notEqual(second.status, 0);
  assert.match(second.stderr, /already_running/);

  const run = await (
    await fetch(`${keel.url}/v1/runs`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ agent: 'slow', input: { ms: 800 } }),
    })
  ).json();
  for (;;) {
    const r = await (await fetch(`${keel.url}/v1/runs/${run.id}`, { headers: auth })).json();
    if (r.status === 'running') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const exited = new Promise<number | null>((resolve) =>
    keel.child.once('exit', (code) => resolve(code)),
  );
  keel.child.kill('SIGTERM');
  assert.equal(await exited, 0, keel.output());

  keel = await startKeelProcess({ agents: AGENTS, dataDir: dir, port, apiKey: key });
  for (;;) {
    const r = await (await fetch(`${keel.url}/v1/runs/${run.id}`, { headers: auth })).json();
    if (r.status === 'succeeded') {
      assert.equal(r.result, 3);
      break;
    }
    assert.ok(!['failed', 'cancelled'].includes(r.status), JSON.stringify(r));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});

test('without KEEL_API_KEY a dev key is generated, printed, and accepted', {
  timeout: 30_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: dir,
    apiKey: '',
    env: { KEEL_API_KEY: '' },
  });
  t.after(() => keel.kill('SIGKILL'));
  const printed = /API key \(tenant "dev"\): (keel_\S+)/.exec(keel.output());
  assert.ok(printed, keel.output());
  const ok = await fetch(`${keel.url}/v1/runs`, {
    headers: { authorization: `Bearer ${printed[1]}` },
  });
  assert.equal(ok.status, 200);
});
