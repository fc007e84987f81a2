// keel/embedded: the shared KeelRuns contract (test/support/keel-runs-suite.ts, also run over HTTP
// by client-http.test.ts) against the runtime started inside this process, on a real SQLite file
// and on a fresh Postgres database; plus what only the embedded entry has: its isolation rule, its
// optional HTTP API on the same store, and `await using`.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createKeelClient } from '../src/client/index.ts';
import { isKeelError, KeelError, startKeel, type EmbeddedKeel } from '../src/embedded/index.ts';
import type { AgentDefinition } from '../src/sdk/types.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { keelRunsSuite, SUITE_AGENTS, type RunsHarness } from './support/keel-runs-suite.ts';
import { postgresAvailable } from './support/postgres.ts';

const FAST = { leaseTtlMs: 5_000 };

async function sqliteHarness(agents: AgentDefinition[]): Promise<RunsHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-'));
  const keel = await startKeel({ agents, dataDir: dir, config: FAST });
  return {
    runs: keel.runs,
    async close() {
      await keel.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

keelRunsSuite('embedded (SQLite)', sqliteHarness);

if (await postgresAvailable()) {
  keelRunsSuite('embedded (Postgres)', async (agents) => {
    const db = await createFreshDatabase();
    const keel = await startKeel({ agents, databaseUrl: db.url, config: FAST });
    return {
      runs: keel.runs,
      async close() {
        await keel.close();
        await db.drop();
      },
    };
  });
}

test('embedded: agents given as values cannot run in isolates (config_invalid, said how to fix)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-'));
  try {
    const error = await startKeel({
      agents: SUITE_AGENTS,
      dataDir: dir,
      config: { agentIsolation: 'isolate' },
    }).catch((e: unknown) => e);
    assert.ok(isKeelError(error), String(error));
    assert.ok(error instanceof KeelError);
    assert.equal(error.code, 'config_invalid');
    assert.match(error.message, /agentsModule/);
    const none = await startKeel({ dataDir: dir }).catch((e: unknown) => e);
    assert.ok(isKeelError(none));
    assert.equal(none.code, 'config_invalid');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('embedded: agents from a module run in isolates by default, in the thread when asked', async () => {
  const agentsModule = fileURLToPath(
    new URL('./fixtures/embedded-isolate-agents.ts', import.meta.url),
  );
  for (const [isolation, mainThread] of [
    [undefined, false],
    ['thread', true],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-'));
    try {
      await using keel = await startKeel({
        agentsModule,
        dataDir: dir,
        ...(isolation === undefined ? {} : { config: { agentIsolation: isolation } }),
      });
      const outcome = await keel.runs.createAndWait({ agent: 'where' }, { waitMs: 30_000 });
      assert.equal(outcome.run.status, 'succeeded', JSON.stringify(outcome.run.error));
      assert.equal((outcome.run.result as { mainThread: boolean }).mainThread, mainThread);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('embedded: the HTTP API, when asked, serves the same runs; await using closes the runtime', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-'));
  try {
    let outer: EmbeddedKeel | undefined;
    {
      await using keel = await startKeel({
        agents: SUITE_AGENTS,
        dataDir: dir,
        http: { port: 0 },
      });
      outer = keel;
      assert.ok(keel.url !== undefined, 'an address when http is asked for');
      const run = await keel.runs.create({ agent: 'echo', input: 'in' });
      const overHttp = createKeelClient({ baseUrl: keel.url, apiKey: keel.apiKey }).runs;
      const done = await overHttp.wait(run.id);
      assert.deepEqual(done.result, { echo: 'in' });
      assert.equal((await keel.runs.get(run.id)).status, 'succeeded');
    }
    // Disposed at the end of the block: the data directory is free for the next process.
    const again = await startKeel({ agents: SUITE_AGENTS, dataDir: dir });
    try {
      const listed = await again.runs.list();
      assert.equal(listed.runs.length, 1, 'the same store, reopened');
    } finally {
      await again.close();
    }
    await outer?.close(); // idempotent
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('keel/embedded as built (package.json exports) starts Keel and runs an agent', {
  skip:
    !existsSync(fileURLToPath(new URL('../dist/embedded/index.js', import.meta.url))) &&
    process.env.CI !== 'true' &&
    'dist/ is not built (npm run build)',
}, async () => {
  const entry = 'keel/embedded'; // resolved through package.json exports, to dist/
  const built = (await import(entry)) as typeof import('../src/embedded/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'keel-embedded-'));
  try {
    await using keel = await built.startKeel({ agents: SUITE_AGENTS, dataDir: dir });
    const outcome = await keel.runs.createAndWait({ agent: 'echo', input: 1 }, { waitMs: 30_000 });
    assert.equal(outcome.done, true);
    assert.deepEqual(outcome.run.result, { echo: 1 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
