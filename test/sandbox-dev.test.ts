// `keel dev` with built-in sandbox tools and no manager wired by hand: the process's sandbox node
// keeps workspaces under the data directory and artifacts in its SQLite file; a rebuild-policy run
// writes, waits, and runs its file.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { startKeelProcess } from './support/keel-process.ts';
import { skipUnless } from './support/sandbox.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/sandbox-agents.ts', import.meta.url));

test('keel dev runs built-in sandbox tools on its own node; artifacts live in the run store', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'keel-sbx-dev-'));
  chmodSync(base, 0o711);
  const dataDir = join(base, 'data');
  const apiKey = 'dev-key-for-sandbox-test-0123456789';
  const keel = await startKeelProcess({ agents: AGENTS, dataDir, apiKey });
  t.after(async () => {
    await keel.kill('SIGTERM');
    rmSync(base, { recursive: true, force: true });
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${keel.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const id = (await call('POST', '/v1/runs', { agent: 'builder', input: {} })).body.id;
  const poll = async (predicate: (run: any) => boolean) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const run = (await call('GET', `/v1/runs/${id}`)).body;
      if (predicate(run)) return run;
      if (Date.now() > deadline)
        throw new Error(`run stuck: ${JSON.stringify(run)}\n${keel.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await poll((run) => run.status === 'waiting');
  assert.deepEqual(
    readdirSync(join(dataDir, 'sandboxes')).filter((name) => !name.startsWith('.')),
    [],
    'rebuild: no sandbox while the run waits',
  );
  assert.equal(
    (await call('POST', `/v1/runs/${id}/input`, { key: 'go', value: 'now' })).status,
    202,
  );
  const done = await poll((run) => ['succeeded', 'failed', 'cancelled'].includes(run.status));
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error) + keel.output());
  assert.deepEqual(done.result, { go: 'now', stdout: 'built\n', limit: null });
  const db = new DatabaseSync(join(dataDir, 'keel.db'), { readOnly: true });
  try {
    const refs = db.prepare('SELECT name FROM artifact_refs').all() as Array<{ name: string }>;
    assert.deepEqual(
      refs.map((r) => r.name),
      [`run/${id}/workspace`],
    );
  } finally {
    db.close();
  }
});
