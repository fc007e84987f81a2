// The orphan test (issue 21): a real Keel (`keel dev` on SQLite, `keel server` on Postgres) runs a
// parent with one child per parent-end policy, and is killed with SIGKILL twice: while the whole
// family is live, and while the parent, its agent done, is parked waiting for its `wait` child. After
// each restart: the `cancel` child is cancelled by the parent's end, the `detach` child runs on and
// finishes, the parent waits for the `wait` child and then ends with its own result; no child is
// left live under an ended parent but the detached one, which ends by itself.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createFreshDatabase } from './support/fresh-database.ts';
import { startKeelProcess, startKeelRole, type KeelProcess } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/orphan-agents.ts', import.meta.url));
const KEY = 'keel_orphan_test_key';
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
/** Generous: a restart and a lease recovery on a loaded machine take seconds. */
const UNTIL_MS = 60_000;
/** Short, so a run held by the killed process is recovered in seconds (Postgres, a new server). */
const ENV = { KEEL_LEASE_TTL_MS: '2000' };

interface Keel {
  /** kill -9 the running Keel and start another on the same database. */
  restart(): Promise<void>;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

async function keelOn(t: TestContext, backend: 'sqlite' | 'postgres'): Promise<Keel> {
  let process: KeelProcess;
  let start: () => Promise<KeelProcess>;
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'keel-orphans-'));
    start = () =>
      startKeelProcess({ agents: AGENTS, dataDir: join(dir, 'data'), apiKey: KEY, env: ENV });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
  } else {
    const db = await createFreshDatabase();
    let n = 0;
    start = () =>
      startKeelRole({
        role: 'server',
        name: `keel-orphans-${++n}`,
        agents: AGENTS,
        databaseUrl: db.url,
        apiKey: KEY,
        env: ENV,
      });
    t.after(() => db.drop());
  }
  process = await start();
  t.after(() => process.kill('SIGKILL'));
  return {
    async restart() {
      await process.kill('SIGKILL');
      process = await start();
    },
    async api(method, path, body) {
      const res = await fetch(process.url + path, {
        method,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + UNTIL_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`never reached: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`orphans (${backend}): cancel, detach and wait children across two kill -9s`, {
    timeout: 180_000,
  }, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await keelOn(t, backend);
    const tree = async (id: string) => (await keel.api('GET', `/v1/runs/${id}/tree`)).body;
    const run = async (id: string) => (await keel.api('GET', `/v1/runs/${id}`)).body;
    const runWhen = (id: string, what: string, predicate: (r: any) => boolean) =>
      until(`${id} ${what}`, async () => {
        const r = await run(id);
        return predicate(r) ? r : undefined;
      });

    const parentId = (await keel.api('POST', '/v1/runs', { agent: 'orphan-family' })).body
      .id as string;
    // The whole family is live: the parent waits for `end`, each child for `go`.
    const family = await until('three children, all waiting', async () => {
      const body = await tree(parentId);
      const kids = body.runs.filter((r: any) => r.depth === 1);
      return kids.length === 3 && body.runs.every((r: any) => r.status === 'waiting')
        ? body
        : undefined;
    });
    const byPolicy = new Map<string, string>(
      family.runs.filter((r: any) => r.depth === 1).map((r: any) => [r.onParentEnd, r.id]),
    );
    assert.deepEqual([...byPolicy.keys()].sort(), ['cancel', 'detach', 'wait']);

    // First kill: the family is live. The parent is told to end once Keel is back.
    await keel.restart();
    assert.equal(
      (await keel.api('POST', `/v1/runs/${parentId}/input`, { key: 'end', value: true })).status,
      202,
    );
    const parked = await runWhen(
      parentId,
      'parked for its children',
      (r) => ['waiting', ...TERMINAL].includes(r.status) && r.waitingReason !== 'input',
    );
    assert.deepEqual([parked.status, parked.waitingReason], ['waiting', 'children']);
    const cancelled = await runWhen(byPolicy.get('cancel')!, 'ended', (r) =>
      TERMINAL.has(r.status),
    );
    assert.equal(cancelled.status, 'cancelled', 'the default child ends with its parent');

    // Second kill: the parent is parked waiting for its `wait` child (parked again after the
    // cancelled child's end woke it), which Keel is told to end once it is back.
    const parkedFor = (r: any) => r.status === 'waiting' && r.waitingReason === 'children';
    await runWhen(parentId, 'parked again', parkedFor);
    await keel.restart();
    await runWhen(parentId, 'still parked after the kill', parkedFor);
    await keel.api('POST', `/v1/runs/${byPolicy.get('wait')}/input`, { key: 'go', value: 1 });
    const ended = await runWhen(parentId, 'ended', (r) => TERMINAL.has(r.status));
    assert.deepEqual([ended.status, ended.result], ['succeeded', { family: 'ended' }]);
    const waited = await run(byPolicy.get('wait')!);
    assert.deepEqual([waited.status, waited.result], ['succeeded', { role: 'wait', done: true }]);
    assert.ok(
      Date.parse(waited.endedAt) <= Date.parse(ended.endedAt),
      'the parent ended after the child it waited for',
    );

    // Nothing but the detached child outlives the parent; it is still live, and finishes by itself.
    const after = await tree(parentId);
    const live = after.runs.filter((r: any) => !TERMINAL.has(r.status));
    assert.deepEqual(
      live.map((r: any) => [r.id, r.onParentEnd]),
      [[byPolicy.get('detach'), 'detach']],
    );
    await keel.api('POST', `/v1/runs/${byPolicy.get('detach')}/input`, { key: 'go', value: 1 });
    const detached = await runWhen(byPolicy.get('detach')!, 'ended', (r) => TERMINAL.has(r.status));
    assert.deepEqual(
      [detached.status, detached.result],
      ['succeeded', { role: 'detach', done: true }],
    );
    const final = await tree(parentId);
    assert.deepEqual(final.runs.map((r: any) => r.status).sort(), [
      'cancelled',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
  });
}
