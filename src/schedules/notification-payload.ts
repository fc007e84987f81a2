// The body of a failure notification: which schedule and fire, where the run failed, how many
// attempts it took, the last success and the next fire. Built once, when the failure is observed,
// and stored with the notification, so every delivery attempt sends the same bytes.
import type { Json } from '../domain/json.ts';
import type { JournalEntry, RunRecord } from '../domain/records.ts';
import type { FireRecord, ScheduleRecord } from '../store/schedule-store.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export interface FailureFacts {
  id: string;
  schedule: ScheduleRecord;
  fire: FireRecord;
  run: RunRecord;
  journal: JournalEntry[];
  lastSuccessAt: number | null;
}

export function failureNotification(f: FailureFacts): Json {
  const failedStep =
    [...f.journal].reverse().find((e) => e.status === 'failed' || e.status === 'unknown') ?? null;
  return {
    type: 'schedule.run_failed',
    notificationId: f.id,
    schedule: {
      id: f.schedule.id,
      name: f.schedule.name,
      version: f.schedule.version,
      timeZone: f.schedule.timeZone,
    },
    fire: { logicalTime: iso(f.fire.logicalTime), kind: f.fire.kind },
    run: {
      id: f.run.id,
      agent: f.run.agent,
      agentVersion: f.run.agentVersion,
      endedAt: iso(f.run.endedAt),
    },
    // The stage is the last journal effect that failed; a run that failed outside any effect
    // reports its error code.
    failedStage:
      failedStep === null
        ? { kind: 'run', name: f.run.error?.code ?? 'failed', seq: null }
        : { kind: failedStep.kind, name: failedStep.name, seq: failedStep.seq },
    error: (f.run.error ?? null) as Json,
    attempts: { run: f.run.leaseToken, stage: failedStep?.attempts ?? null },
    lastSuccessAt: iso(f.lastSuccessAt),
    nextFireAt: iso(f.schedule.nextFireAt),
  };
}
