// One scheduler pass over one claimed schedule: observe its runs (settle ended ones, queue a
// notification for a failed one), start a waiting fire once nothing is active, then decide every
// due or requested fire in logical-time order — catch-up window first, overlap policy next — and
// return it all as ONE commit, applied atomically under the claim's fencing token. It writes
// nothing itself. A fire that would start a run while the tenant's queue is at maxQueuedRuns is
// skipped with reason `tenant_queue_full` (as POST /v1/runs would answer 429), never queued over
// it.
import { randomUUID } from 'node:crypto';
import { isKeelError } from '../domain/keel-error.ts';
import { newRunId } from '../domain/ids.ts';
import type { AgentRegistry } from '../engine/registry.ts';
import { parseAgentInput } from '../engine/agent-contract.ts';
import { isTerminal } from '../domain/run-status.ts';
import type { Json } from '../domain/json.ts';
import type { NewRun } from '../domain/records.ts';
import type {
  FireKind,
  NewNotification,
  OpenFire,
  ScheduleClaim,
  ScheduleCommit,
  ScheduleRecord,
  ScheduleStore,
} from '../store/schedule-store.ts';
import type { Store } from '../store/store.ts';
import { transition, type FireEvent, type FireStatus } from '../domain/fire-status.ts';
import { FireTimes } from './fire-times.ts';
import { decideOverlap } from './overlap.ts';
import { failureNotification } from './notification-payload.ts';
import { telemetry } from '../telemetry/telemetry.ts';

/** Bound on fires decided in one pass; a longer backlog continues on the next tick. */
export const FIRES_PER_PASS_MAX = 500;

export interface PassDeps {
  runs: Store;
  schedules: ScheduleStore;
  registry: AgentRegistry;
  owner: string;
  /**
   * How long a released schedule rests before it is looked at again (unless a backlog of fires
   * remains).
   */
  recheckMs: number;
}

/**
 * A fire as this pass leaves it: `from` is its stored status (null for a fire this pass records
 * first).
 */
interface Touched {
  logicalTime: number;
  kind: FireKind;
  from: FireStatus | null;
  status: FireStatus;
  runId: string | null;
  detail: Record<string, Json> | null;
  startedAt: number | null;
}

export function fireTimesOf(schedule: ScheduleRecord): FireTimes {
  return new FireTimes({
    cron: schedule.cron,
    intervalMs: schedule.intervalMs,
    timeZone: schedule.timeZone,
    startAt: schedule.startAt,
    endAt: schedule.endAt,
    anchorAt: schedule.createdAt,
  });
}

export async function planPass(
  deps: PassDeps,
  claim: ScheduleClaim,
  now: number,
): Promise<ScheduleCommit> {
  const schedule = claim.schedule;
  const commit: ScheduleCommit = {
    scheduleId: schedule.id,
    owner: deps.owner,
    token: claim.token,
    scheduleVersion: schedule.version,
    release: true,
    settle: [],
    createRuns: [],
    cancelRuns: [],
    notifications: [],
  };
  const open = await deps.schedules.listOpenFires(schedule.id);
  const active = await observeRuns(deps, schedule, open, commit);
  const touched = new Map<number, Touched>();
  const waiting: Touched[] = open
    .filter((f) => f.status === 'buffered' || f.status === 'cancelling_other')
    .map((f) => touch(touched, f));
  const step = (fire: Touched, event: FireEvent) => {
    fire.status = transition(fire.status, event);
  };
  // Room left in the tenant's queue (null: no limit), read once; the runs this pass creates take
  // from it.
  let room = await deps.runs.queuedRoom(schedule.tenantId);
  const start = (fire: Touched, event: FireEvent) => {
    const run =
      room === 0 ? { skipped: 'tenant_queue_full' } : newRunFor(deps.registry, schedule, fire);
    if ('skipped' in run) {
      if (run.skipped === 'tenant_queue_full')
        telemetry.runAdmissionRejected(schedule.tenantId, 'schedule', run.skipped);
      fire.detail = {
        ...fire.detail,
        reason: run.skipped,
        ...(run.issues === undefined ? {} : { issues: run.issues as Json }),
      };
      step(fire, 'skip');
      return;
    }
    if (room !== null) room--;
    commit.createRuns!.push(run);
    fire.runId = run.id;
    fire.startedAt = now;
    step(fire, event);
    active.push(run.id);
  };

  if (active.length === 0 && waiting.length > 0) start(waiting.shift()!, 'start');

  const candidates = dueFires(schedule, open, touched, commit, now);
  for (const fire of candidates) {
    if (fire.kind === 'scheduled' && now - fire.logicalTime > schedule.catchupWindowMs) {
      step(fire, 'miss');
      continue;
    }
    switch (
      decideOverlap(schedule.overlap, { activeRuns: active.length, waitingFires: waiting.length })
    ) {
      case 'start':
        start(fire, 'start');
        break;
      case 'skip':
        fire.detail = { reason: 'overlap' };
        step(fire, 'skip');
        break;
      case 'buffer':
        fire.detail = { ...fire.detail, bufferedAt: new Date(now).toISOString() };
        step(fire, 'buffer');
        waiting.push(fire);
        break;
      case 'cancel_other':
        for (const older of waiting.splice(0)) step(older, 'supersede');
        commit.cancelRuns!.push(...active.filter((id) => !commit.cancelRuns!.includes(id)));
        fire.detail = { cancelledRunIds: [...commit.cancelRuns!] };
        step(fire, 'cancel_other');
        waiting.push(fire);
        break;
    }
  }
  writeTouched(commit, touched);
  // A backlog beyond this pass's bound continues at once; otherwise the schedule rests until the
  // next tick, so a schedule whose run is still going is not claimed again and again within one
  // tick.
  const backlog =
    commit.nextFireAt !== undefined && commit.nextFireAt !== null && commit.nextFireAt <= now;
  commit.releaseUntil = backlog ? now : now + deps.recheckMs;
  // A notification names the next fire as this pass leaves the schedule.
  const nextFireAt = 'nextFireAt' in commit ? (commit.nextFireAt ?? null) : schedule.nextFireAt;
  for (const n of commit.notifications!)
    (n.payload as Record<string, Json>).nextFireAt =
      nextFireAt === null ? null : new Date(nextFireAt).toISOString();
  return commit;
}

/**
 * Settles the fires whose run ended (a notification for each failed one); returns the runs still
 * active.
 */
async function observeRuns(
  deps: PassDeps,
  schedule: ScheduleRecord,
  open: OpenFire[],
  commit: ScheduleCommit,
): Promise<string[]> {
  const active: string[] = [];
  for (const fire of open) {
    if (fire.runId === null) continue;
    if (fire.runStatus !== null && !isTerminal(fire.runStatus)) {
      active.push(fire.runId);
      continue;
    }
    commit.settle!.push(fire.logicalTime);
    const run = await deps.runs.getRun(fire.runId);
    if (run?.status === 'succeeded' && run.endedAt !== null)
      commit.lastSuccessAt = Math.max(
        commit.lastSuccessAt ?? 0,
        schedule.lastSuccessAt ?? 0,
        run.endedAt,
      );
    if (run?.status === 'failed' && schedule.webhookUrl !== null) {
      const id = `ntf_${randomUUID()}`;
      const payload = failureNotification({
        id,
        schedule,
        fire,
        run,
        journal: await deps.runs.loadJournal(run.id),
        lastSuccessAt: commit.lastSuccessAt ?? schedule.lastSuccessAt,
      });
      commit.notifications!.push({
        id,
        runId: run.id,
        url: schedule.webhookUrl,
        payload,
      } satisfies NewNotification);
    }
  }
  return active;
}

/**
 * The fires to decide now, oldest first: requested ones (trigger, backfill) and the scheduled ones
 * that are due (not while paused). Advances the commit's cursor past the scheduled ones taken.
 */
function dueFires(
  schedule: ScheduleRecord,
  open: OpenFire[],
  touched: Map<number, Touched>,
  commit: ScheduleCommit,
  now: number,
): Touched[] {
  const requested = open
    .filter((f) => f.status === 'pending')
    .slice(0, FIRES_PER_PASS_MAX)
    .map((f) => touch(touched, f));
  const fires = [...requested];
  if (!schedule.paused && schedule.nextFireAt !== null && schedule.nextFireAt <= now) {
    const times = fireTimesOf(schedule);
    let t: number | null = schedule.nextFireAt;
    while (t !== null && t <= now && fires.length < FIRES_PER_PASS_MAX) {
      // A fire at this time requested already (a backfill racing the schedule) stays the one record
      // of it.
      if (!touched.has(t)) {
        const fire: Touched = {
          logicalTime: t,
          kind: 'scheduled',
          from: null,
          status: 'pending',
          runId: null,
          detail: null,
          startedAt: null,
        };
        touched.set(t, fire);
        fires.push(fire);
      }
      t = times.next(t);
    }
    commit.nextFireAt = t;
  }
  return fires.sort((a, b) => a.logicalTime - b.logicalTime);
}

function touch(touched: Map<number, Touched>, f: OpenFire): Touched {
  const fire: Touched = {
    logicalTime: f.logicalTime,
    kind: f.kind,
    from: f.status,
    status: f.status,
    runId: f.runId,
    detail: f.detail,
    startedAt: f.startedAt,
  };
  touched.set(f.logicalTime, fire);
  return fire;
}

function writeTouched(commit: ScheduleCommit, touched: Map<number, Touched>): void {
  commit.newFires = [];
  commit.fireUpdates = [];
  for (const f of touched.values()) {
    if (f.from === null) {
      commit.newFires.push({
        logicalTime: f.logicalTime,
        kind: f.kind,
        status: f.status,
        runId: f.runId,
        detail: f.detail,
        startedAt: f.startedAt,
      });
    } else if (f.from !== f.status) {
      commit.fireUpdates.push({
        logicalTime: f.logicalTime,
        from: f.from,
        to: f.status,
        runId: f.runId,
        detail: f.detail,
        startedAt: f.startedAt,
      });
    }
  }
}

/** The run a fire starts, pinned to the agent version resolved now; or why it cannot start. */
function newRunFor(
  registry: AgentRegistry,
  schedule: ScheduleRecord,
  fire: Touched,
): NewRun | { skipped: string; issues?: unknown } {
  const t = schedule.template;
  let version: string;
  try {
    const agent = registry.resolve(t.agent);
    version = agent.version;
    // A schedule made before the agent declared (or changed) its input schema: its fires are
    // skipped with the reason, never started to fail later.
    parseAgentInput(agent, t.input);
  } catch (error) {
    if (isKeelError(error) && error.code === 'agent_not_found')
      return { skipped: 'agent_not_found' };
    if (isKeelError(error) && error.code === 'agent_input_invalid')
      return { skipped: 'agent_input_invalid', issues: error.details?.issues };
    throw error;
  }
  const name = t.agent.includes('@') ? t.agent.slice(0, t.agent.lastIndexOf('@')) : t.agent;
  return {
    id: newRunId(),
    tenantId: schedule.tenantId,
    agent: name,
    agentVersion: version,
    input: t.input,
    priority: t.priority,
    budget: t.budget,
    metadata: {
      ...t.metadata,
      schedule: {
        id: schedule.id,
        version: schedule.version,
        logicalFireTime: new Date(fire.logicalTime).toISOString(),
        kind: fire.kind,
      },
    },
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
  };
}
