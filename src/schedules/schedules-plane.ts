// Wires the schedules plane onto a store: the schedule store area of the process's backend, the
// service the API serves and the scheduler loop every server process runs.
import type { AgentRegistry } from '../engine/registry.ts';
import { scheduleAreaOf } from '../store/schedule-area.ts';
import type { ScheduleStore } from '../store/schedule-store.ts';
import type { Store } from '../store/store.ts';
import { SYSTEM_CLOCK, type Clock } from '../domain/clock.ts';
import { ScheduleService } from './schedule-service.ts';
import { Scheduler, type SchedulerOptions } from './scheduler.ts';

export interface SchedulesPlane {
  store: ScheduleStore;
  service: ScheduleService;
  scheduler: Scheduler;
}

export function createSchedulesPlane(
  runs: Store,
  registry: AgentRegistry,
  options: {
    clock?: Clock /** The backend's schedule area; by default the one `runs` keeps. */;
    schedules?: ScheduleStore;
  } & Pick<SchedulerOptions, 'owner' | 'tickMs' | 'leaseMs' | 'log'> = {},
): SchedulesPlane {
  const { schedules, ...schedulerOptions } = options;
  const clock = options.clock ?? SYSTEM_CLOCK;
  const store = schedules ?? scheduleAreaOf(runs);
  const scheduler = new Scheduler({ runs, schedules: store, registry, clock, ...schedulerOptions });
  return { store, service: new ScheduleService(store, registry, clock), scheduler };
}
