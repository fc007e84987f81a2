// The scheduler runs inside `keel dev` (SQLite, the real clock): an every-second schedule fires
// from a real process, and after a kill -9 and a restart on the same data directory the fires
// continue with no fire run twice.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { apiClient, until } from './support/distributed.ts';
import { freePort, startKeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/schedule-agents.ts', import.meta.url));

test('keel dev fires schedules; a restart after kill -9 continues without running a fire twice', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-sched-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const key = 'schedules-dev-key';
  const env = { KEEL_SCHEDULER_TICK_MS: '100' };
  let keel = await startKeelProcess({ agents: AGENTS, dataDir: dir, port, apiKey: key, env });
  t.after(() => keel.kill('SIGKILL'));
  const api = apiClient(keel.url, key);
  const created = await api.request('POST', '/v1/schedules', {
    cron: '* * * * * *',
    timeZone: 'Asia/Tokyo',
    overlap: 'allow',
    catchupWindowMs: 60_000,
    template: { agent: 'quick' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const started = async (n: number) =>
    until(
      `${n} started fires`,
      async () => {
        const fires = (await api.request('GET', `/v1/schedules/${id}/fires?limit=1000`)).body
          .fires as any[];
        return fires.filter((f) => f.status === 'started').length >= n ? fires : undefined;
      },
      20_000,
    );
  await started(2);
  await keel.kill('SIGKILL');
  keel = await startKeelProcess({ agents: AGENTS, dataDir: dir, port, apiKey: key, env });
  const before = (await started(1)).length;
  const fires = await started(before + 2);
  await api.request('POST', `/v1/schedules/${id}/pause`);
  const runs = (await api.request('GET', '/v1/runs?limit=200')).body.runs as any[];
  const logical = runs.map((r) => r.metadata.schedule.logicalFireTime);
  assert.equal(new Set(logical).size, logical.length, 'no fire ran twice');
  const withRuns = fires.filter((f) => f.runId !== null);
  assert.ok(withRuns.every((f) => logical.includes(f.logicalTime)));
  assert.ok(
    fires.every((f) => f.status === 'started' || f.status === 'missed'),
    JSON.stringify(fires.map((f) => f.status)),
  );
});
