// Exactly one run per fire with several schedulers and no leader: two schedulers racing on one
// SQLite store in one process, two stores (separate pools, as two processes have) racing on a fresh
// Postgres database, a scheduler whose lease expired mid-pass (fenced off, nothing applied), a
// scheduler with a skewed clock, and two real `keel server` processes firing an every-second
// schedule on Postgres with the real clock.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { generateApiKey } from '../src/api/auth.ts';
import { planPass } from '../src/schedules/schedule-pass.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { scheduleAgents } from './fixtures/schedule-agents.ts';
import { ManualClock } from '../src/domain/clock.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';
import { apiClient, until } from './support/distributed.ts';
import { startSchedulesKeel, type SchedulesKeel } from './support/schedules-keel.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/schedule-agents.ts', import.meta.url));
const hasPostgres = await postgresAvailable();

/**
 * The runs of these schedules, checked to hold one run per (schedule, logical fire time); returns
 * how many there are.
 */
async function assertOneRunPerFire(keel: SchedulesKeel, scheduleIds: string[]): Promise<number> {
  const runs = ((await keel.request('GET', '/v1/runs?limit=200')).body.runs as any[]).filter((r) =>
    scheduleIds.includes(r.metadata.schedule.id),
  );
  const keys = runs.map((r) => `${r.metadata.schedule.id} ${r.metadata.schedule.logicalFireTime}`);
  assert.equal(
    new Set(keys).size,
    keys.length,
    `duplicate runs for a fire: ${keys.sort().join('\n')}`,
  );
  let started = 0;
  for (const id of scheduleIds) {
    const fires = await keel.fires(id);
    started += fires.filter((f) => f.runId !== null).length;
    for (const f of fires.filter((x) => x.runId !== null))
      assert.ok(keys.includes(`${id} ${f.logicalTime}`), `fire ${f.logicalTime} has its run`);
  }
  assert.equal(runs.length, started, 'one run per started fire, no more');
  return runs.length;
}

/**
 * Two schedulers (a and b) tick together through 15 minutes of three every-minute schedules, b's
 * clock 5 s ahead.
 */
async function race(a: SchedulesKeel, b: SchedulesKeel, bClock: ManualClock): Promise<void> {
  const ids: string[] = [];
  for (const overlap of ['allow', 'buffer_all', 'skip']) {
    const res = await a.request('POST', '/v1/schedules', {
      cron: '* * * * *',
      timeZone: 'UTC',
      overlap,
      catchupWindowMs: 600_000,
      template: { agent: 'quick' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  const base = Date.parse('2026-01-01T00:00:30Z');
  for (let minute = 1; minute <= 15; minute++) {
    const at = base + minute * 60_000;
    a.clock.set(at);
    bClock.set(at + 5_000); // clock skew: b believes it is 5 s later
    await Promise.all([
      a.plane.scheduler.tick(),
      b.plane.scheduler.tick(),
      a.plane.scheduler.tick(),
      b.plane.scheduler.tick(),
    ]);
  }
  const total = await assertOneRunPerFire(a, ids);
  assert.equal((await a.fires(ids[0]!)).filter((f) => f.status === 'started').length, 15);
  assert.ok(total >= 15);
}

/**
 * A pass whose claim expired is fenced off: another scheduler fired meanwhile, the late commit
 * applies nothing.
 */
async function fencing(a: SchedulesKeel, b: SchedulesKeel): Promise<void> {
  const at = Date.parse('2026-01-01T01:00:00Z');
  a.clock.set(at - 10_000);
  const res = await a.request('POST', '/v1/schedules', {
    cron: '* * * * *',
    timeZone: 'UTC',
    overlap: 'allow',
    template: { agent: 'quick' },
  });
  const id = res.body.id as string;
  a.clock.set(at);
  const [claim] = (await a.plane.store.claimSchedules('slow-scheduler', at, 30_000, 50)).filter(
    (c) => c.schedule.id === id,
  );
  assert.ok(claim, 'the slow scheduler holds the claim');
  const registry = new AgentRegistry();
  for (const agent of scheduleAgents) registry.register(agent);
  const late = await planPass(
    {
      runs: a.store,
      schedules: a.plane.store,
      registry,
      owner: 'slow-scheduler',
      recheckMs: 1_000,
    },
    claim,
    at,
  );
  assert.equal(late.createRuns!.length, 1);
  // b cannot take the claim while it is live...
  await b.tickAt(at + 1_000);
  assert.equal((await a.fires(id)).length, 0);
  // ...but once it expired, b claims and fires; the slow scheduler's commit is then refused as
  // stale.
  await b.tickAt(at + 31_000);
  await assert.rejects(
    a.plane.store.commitSchedule(late, at + 31_000),
    (e: { code?: string }) => e.code === 'stale_write',
  );
  const fires = await a.fires(id);
  assert.equal(fires.length, 1);
  assert.equal(fires[0].firedBy, b.plane.scheduler.owner);
  await assertOneRunPerFire(a, [id]);
}

test('SQLite: two schedulers in one process (one with a skewed clock) create exactly one run per fire; an expired claim is fenced off', async (t: TestContext) => {
  const a = await startSchedulesKeel({ agents: scheduleAgents, start: '2026-01-01T00:00:30Z' });
  const bClock = new ManualClock('2026-01-01T00:00:35Z');
  const b = await startSchedulesKeel({
    agents: scheduleAgents,
    start: '2026-01-01T00:00:35Z',
    shareStoreOf: a,
    apiKey: a.apiKey,
    clock: bClock,
  });
  t.after(async () => {
    await b.close();
    await a.close();
  });
  await race(a, b, bClock);
  await fencing(a, b);
});

test('Postgres: two stores (two pools, as two processes) race on a fresh database: exactly one run per fire; expired claims are fenced', {
  skip: !hasPostgres,
}, async (t) => {
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const apiKey = generateApiKey();
  const a = await startSchedulesKeel({
    agents: scheduleAgents,
    start: '2026-01-01T00:00:30Z',
    databaseUrl: db.url,
    apiKey,
  });
  t.after(() => a.close());
  const bClock = new ManualClock('2026-01-01T00:00:35Z');
  const b = await startSchedulesKeel({
    agents: scheduleAgents,
    start: '2026-01-01T00:00:35Z',
    databaseUrl: db.url,
    apiKey,
    clock: bClock,
  });
  t.after(() => b.close());
  await race(a, b, bClock);
  await fencing(a, b);
  const [dupes] = await db.query(
    'SELECT count(*)::int AS n FROM (SELECT run_id FROM schedule_fires WHERE run_id IS NOT NULL GROUP BY schedule_id, logical_time HAVING count(*) > 1) d',
  );
  assert.equal(dupes!.n, 0);
});

test('Postgres: two real keel server processes fire an every-second schedule; each fire has exactly one run', {
  skip: !hasPostgres,
}, async (t) => {
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const apiKey = generateApiKey();
  const env = { KEEL_SCHEDULER_TICK_MS: '100' };
  const servers = await Promise.all(
    ['sched-a', 'sched-b'].map((name) =>
      startKeelRole({ role: 'server', agents: AGENTS, databaseUrl: db.url, name, apiKey, env }),
    ),
  );
  t.after(() => Promise.all(servers.map((s) => s.kill('SIGKILL'))));
  const api = apiClient(servers[0]!.url, apiKey);
  const created = await api.request('POST', '/v1/schedules', {
    cron: '* * * * * *',
    timeZone: 'UTC',
    overlap: 'allow',
    catchupWindowMs: 60_000,
    template: { agent: 'quick' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  await until(
    'six fires',
    async () => {
      const fires = (await api.request('GET', `/v1/schedules/${id}/fires?limit=100`)).body
        .fires as any[];
      return fires.filter((f) => f.status === 'started').length >= 6 ? true : undefined;
    },
    20_000,
  );
  await api.request('POST', `/v1/schedules/${id}/pause`);
  const rows = await db.query<{ logical_time: string; run_id: string; fired_by: string }>(
    `SELECT logical_time, run_id, fired_by FROM schedule_fires WHERE schedule_id = $1 AND run_id IS NOT NULL`,
    [id],
  );
  const runs = await db.query<{ id: string; metadata: string }>(`SELECT id, metadata FROM runs`);
  const runFires = runs.map((r) => JSON.parse(r.metadata).schedule.logicalFireTime as string);
  assert.equal(new Set(runFires).size, runFires.length, 'no fire has two runs');
  assert.equal(runs.length, rows.length, 'every run belongs to exactly one recorded fire');
  const fireTimes = rows.map((r) => Number(r.logical_time)).sort((x, y) => x - y);
  for (let i = 1; i < fireTimes.length; i++)
    assert.equal(
      fireTimes[i]! - fireTimes[i - 1]!,
      1_000,
      'consecutive seconds, none skipped, none doubled',
    );
  t.diagnostic(
    `fires by process: ${JSON.stringify(Object.entries(Object.groupBy(rows, (r) => r.fired_by)).map(([k, v]) => [k.slice(0, 18), v!.length]))}`,
  );
});
