// The guide's example application (examples/embedded-app.ts: Fastify routes over keel/embedded),
// started as a real process from the build, driven through its own HTTP routes: a refund is
// submitted (twice: the same run), waits for approval, is approved and finishes; SIGTERM stops the
// application and Keel gracefully (exit 0).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, spawnNode } from './support/keel-process.ts';

const EXAMPLE = fileURLToPath(new URL('../examples/embedded-app.ts', import.meta.url));
const BUILT = existsSync(fileURLToPath(new URL('../dist/embedded/index.js', import.meta.url)));

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('the embedded example application submits, reads and approves runs from its own routes', {
  timeout: 90_000,
  skip: !BUILT && process.env.CI !== 'true' && 'dist/ is not built (npm run build)',
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-example-'));
  const port = await freePort();
  const app = spawnNode(EXAMPLE, [], { PORT: String(port), KEEL_DATA_DIR: join(dir, 'data') });
  t.after(async () => {
    await app.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  await until('the application to listen', async () =>
    app.output().includes('listening on') ? true : undefined,
  );
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  const submitted = await call('POST', '/refunds', { order: 'o-1', cents: 900 });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  const again = await call('POST', '/refunds', { order: 'o-1', cents: 900 });
  assert.equal(again.body.run, submitted.body.run, 'a retried request finds the same run');
  await until('the refund to wait for approval', async () => {
    const read = await call('GET', '/refunds/o-1');
    return read.body.status === 'waiting' ? true : undefined;
  });
  const approved = await call('POST', '/refunds/o-1/approve');
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  const done = await call('GET', '/refunds/o-1?waitMs=20000');
  assert.equal(done.body.done, true, JSON.stringify(done.body));
  assert.deepEqual(done.body.result, { refunded: true, receipt: 'rf-o-1' });
  const late = await call('POST', '/refunds/o-1/approve');
  assert.equal(late.status, 409, 'an ended run refuses the answer with its code');
  assert.equal(late.body.error, 'run_terminal');
  assert.equal((await call('GET', '/refunds/nope')).status, 404);

  await app.kill('SIGTERM');
  assert.equal(app.child.exitCode, 0, app.output());
});
