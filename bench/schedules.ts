// `npx node bench/schedules.ts [--postgres]`: how fast the scheduler turns due schedules into runs.
// Two shapes: many schedules due at the same instant (1,000 every-minute schedules: time for the
// ticks that fire them all), and one schedule's catch-up after an outage (an every-second schedule
// down for an hour: 3,600 fires, most recorded as missed). Runs are created, not executed (no
// orchestrator), so this measures the scheduler and the store only. It reports figures and asserts
// only that every fire got exactly one outcome.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AgentRegistry } from '../src/engine/registry.ts';
import { createSchedulesPlane } from '../src/schedules/schedules-plane.ts';
import { ManualClock } from '../src/domain/clock.ts';
import { defineAgent } from '../src/sdk/define.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';

const SCHEDULES = 1_000;
const OUTAGE_MS = 3_600_000;
const T0 = Date.parse('2026-01-01T00:00:30Z');

async function measure(name: string, store: Store): Promise<Record<string, unknown>> {
  await store.migrate();
  const tenant = await store.createTenant(`bench-${randomUUID()}`, randomUUID());
  const registry = new AgentRegistry();
  registry.register(
    defineAgent({
      name: 'noop',
      version: '1',
      async run() {
        return null;
      },
    }),
  );
  const clock = new ManualClock(T0);
  const plane = createSchedulesPlane(store, registry, { clock });
  const template = { agent: 'noop' } as const;
  const base = {
    timeZone: 'UTC',
    overlap: 'allow' as const,
    template: { ...template, input: null, priority: 'batch' as const, budget: {}, metadata: null },
  };
  const burst: string[] = [];
  for (let i = 0; i < SCHEDULES; i++)
    burst.push((await plane.service.create(tenant.id, { ...base, cron: '* * * * *' })).id);
  clock.set(T0 + 30_000);
  let started = performance.now();
  let ticks = 0;
  while ((await store.listRuns(tenant.id, { limit: SCHEDULES + 1 })).length < SCHEDULES) {
    await plane.scheduler.tick();
    ticks++;
  }
  const burstMs = performance.now() - started;
  for (const id of burst) await plane.service.remove(tenant.id, id); // the catch-up below measures one schedule alone

  const catchup = await plane.service.create(tenant.id, {
    ...base,
    cron: '* * * * * *',
    catchupWindowMs: 60_000,
  });
  clock.advance(OUTAGE_MS);
  started = performance.now();
  let catchupTicks = 0;
  for (;;) {
    await plane.scheduler.tick();
    catchupTicks++;
    const s = await plane.store.getSchedule(catchup.id);
    if (s!.nextFireAt! > clock.now()) break;
  }
  const catchupMs = performance.now() - started;
  const fires = await plane.store.listFires(catchup.id, { limit: 10_000 });
  const outcomes = Object.fromEntries(
    Object.entries(Object.groupBy(fires, (f) => f.status)).map(([k, v]) => [k, v!.length]),
  );
  if (fires.length !== OUTAGE_MS / 1000)
    throw new Error(`expected ${OUTAGE_MS / 1000} fires, got ${fires.length}`);
  await plane.scheduler.stop();
  return {
    store: name,
    burst: {
      schedules: SCHEDULES,
      ticks,
      ms: Math.round(burstMs),
      firesPerSecond: Math.round(SCHEDULES / (burstMs / 1000)),
    },
    catchup: {
      fires: fires.length,
      outcomes,
      ticks: catchupTicks,
      ms: Math.round(catchupMs),
      firesPerSecond: Math.round(fires.length / (catchupMs / 1000)),
    },
  };
}

const results: Array<Record<string, unknown>> = [];
const dir = mkdtempSync(join(tmpdir(), 'keel-bench-sched-'));
const sqlite = new SqliteStore({ path: join(dir, 'keel.db') });
try {
  results.push(await measure('sqlite (fsync)', sqlite));
} finally {
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}
if (process.argv.includes('--postgres')) {
  const url = process.env.KEEL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `keel_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const store = new PostgresStore({ connectionString: url, schema });
  try {
    results.push(await measure('postgres', store));
  } finally {
    await store.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
