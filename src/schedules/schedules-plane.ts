// Wires the schedules plane onto a store: the schedule store area for that backend, the service the API serves and
// the scheduler loop every server process runs. Backends are told apart by what the store is, in this one place.
import type { AgentRegistry } from '../engine/registry.ts';
import { PostgresScheduleStore } from '../store/postgres/postgres-schedule-store.ts';
import { PostgresStore } from '../store/postgres/postgres-store.ts';
import type { ScheduleStore } from '../store/schedule-store.ts';
import { SqliteScheduleStore } from '../store/sqlite/sqlite-schedule-store.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { SYSTEM_CLOCK, type Clock } from '../domain/clock.ts';
import { ScheduleService } from './schedule-service.ts';
import { Scheduler, type SchedulerOptions } from './scheduler.ts';

export interface SchedulesPlane {
  store: ScheduleStore;
  service: ScheduleService;
  scheduler: Scheduler;
}

/** The schedule store area of a run store (sharing its connection and transactions). */
export function scheduleStoreFor(runs: Store): ScheduleStore {
  if (runs instanceof SqliteStore) return new SqliteScheduleStore(runs);
  if (runs instanceof PostgresStore) return new PostgresScheduleStore(runs);
  throw new Error('schedules need the SQLite or the Postgres store');
}

export function createSchedulesPlane(
  runs: Store, registry: AgentRegistry, options: { clock?: Clock } & Pick<SchedulerOptions, 'owner' | 'tickMs' | 'leaseMs' | 'log'> = {},
): SchedulesPlane {
  const clock = options.clock ?? SYSTEM_CLOCK;
  const store = scheduleStoreFor(runs);
  const scheduler = new Scheduler({ runs, schedules: store, registry, clock, ...options });
  return { store, service: new ScheduleService(store, registry, clock), scheduler };
}
