// The shared space of a run tree (issue 21) in real processes, on SQLite (`keel dev`) and Postgres
// (`keel server`), with agent code in isolates and on the main thread: two children write one file
// with the same expected version at once, exactly one wins and the other gets `conflict`, reads
// again and retries, so the file ends with both lines; the operator routes show the tree's space
// from any of its runs. Then a kill -9 after a child's write reached the store and before it was
// journaled: the replayed write answers its first version, never a false conflict.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { keelScene } from './support/keel-scene.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/shared-agents.ts', import.meta.url));
const KEY = 'shared-space-key';
const LEASE_TTL_MS = 2_000;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

type Backend = 'sqlite' | 'postgres';
type Isolation = 'isolate' | 'thread';

async function scene(t: TestContext, backend: Backend, isolation: Isolation) {
  const base = await keelScene(t, {
    agents: AGENTS,
    apiKey: KEY,
    prefix: 'keel-shared-',
    store: backend,
    env: () => ({ KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS), KEEL_AGENT_ISOLATION: isolation }),
    untilMs: 60_000,
  });
  return Object.assign(base, {
    async submit(agent: string, input: unknown = {}): Promise<string> {
      const res = await base.api('POST', '/v1/runs', { agent, input });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as string;
    },
    async runsOf(agent: string): Promise<string[]> {
      const res = await base.api('GET', `/v1/runs?agent=${agent}&limit=50`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return (res.body.runs as Array<{ id: string }>).map((r) => r.id);
    },
  });
}

for (const backend of ['sqlite', 'postgres'] as const) {
  for (const isolation of ['isolate', 'thread'] as const) {
    test(`shared space (${backend}, ${isolation}): two children write with one expected version; one conflicts and retries`, {
      timeout: 180_000,
    }, async (t) => {
      if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
      const s = await scene(t, backend, isolation);
      await s.start();
      const id = await s.submit('shared-parent');
      const done = await s.until(id, (r) => TERMINAL.has(r.status));
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      const result = done.result;
      assert.equal(result.first, 1);
      const children = result.children as Array<{ version: number; conflicts: number[] }>;
      // Both expected version 1: one wrote version 2, the other was told 2 and wrote 3.
      assert.deepEqual(children.map((c) => c.version).toSorted(), [2, 3]);
      assert.deepEqual(children.map((c) => c.conflicts.length).toSorted(), [0, 1]);
      assert.deepEqual(children.find((c) => c.conflicts.length === 1)?.conflicts, [2]);
      const lines = (result.final.content as string).split('\n');
      assert.equal(result.final.version, 3);
      assert.equal(lines[0], 'start');
      assert.deepEqual(lines.slice(1, 3).toSorted(), ['a', 'b'], 'both appends are in the file');
      assert.deepEqual(result.listed, [['notes/log.txt', 3]]);
      assert.equal(result.missing, null);
      assert.deepEqual(result.errors, ['shared_path_invalid', 'shared_file_too_large', 'conflict']);

      // The operator's view, from the root and from a child: the same space.
      const [child] = await s.runsOf('shared-appender');
      assert.ok(child);
      const listed = await s.api('GET', `/v1/runs/${child}/shared`);
      assert.equal(listed.status, 200);
      assert.equal(listed.body.rootRunId, id);
      assert.deepEqual(
        listed.body.files.map((f: { path: string; version: number }) => [f.path, f.version]),
        [['notes/log.txt', 3]],
      );
      const file = await s.api('GET', `/v1/runs/${id}/shared/notes/log.txt`);
      assert.equal(file.status, 200);
      assert.equal(file.body.file.content, result.final.content);
      assert.equal(file.body.file.version, 3);
      const none = await s.api('GET', `/v1/runs/${id}/shared/notes/other.txt`);
      assert.deepEqual([none.status, none.body.error.code], [404, 'shared_file_not_found']);
      for (const path of ['notes//x', 'notes/%01', 'notes%5Cx']) {
        const bad = await s.api('GET', `/v1/runs/${id}/shared/${path}`);
        assert.deepEqual([bad.status, bad.body.error.code], [400, 'shared_path_invalid'], path);
      }
      const unknown = await s.api('GET', '/v1/runs/run_nope/shared');
      assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'run_not_found']);
      const other = await s.submit('shared-writer', { path: 'notes/log.txt', content: 'mine' });
      const own = await s.until(other, (r) => TERMINAL.has(r.status));
      assert.deepEqual(own.result, { version: 1 }, 'another tree has a space of its own');
    });
  }

  test(`shared space crash (${backend}): kill -9 after a child's write reached the store, before it was journaled`, {
    timeout: 180_000,
  }, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const s = await scene(t, backend, 'isolate');
    const first = await s.start({ KEEL_TEST_CRASH_AT: 'execute.before-commit:1' });
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    const id = await s.submit('shared-writer-parent');
    await exited;
    assert.equal(first.child.signalCode, 'SIGKILL', 'the process died at execute.before-commit');

    await s.start();
    const done = await s.until(id, (r) => TERMINAL.has(r.status));
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    // The replayed write found its own version: no conflict, and the file has one version.
    assert.deepEqual(done.result, {
      child: { version: 1 },
      read: ['from the child', 1],
    });
    const file = await s.api('GET', `/v1/runs/${id}/shared/out.txt`);
    assert.equal(file.body.file.version, 1);
  });
}
