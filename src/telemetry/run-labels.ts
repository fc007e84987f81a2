// What telemetry knows about the runs this process holds: tenant, agent, creation time and
// deadline, learnt when a run is claimed and forgotten when it is let go. Metrics, spans and log
// lines of a run get their labels here instead of reading the store. Bounded: the oldest entries go
// first past RUN_LABELS_MAX.
import type { RunRecord } from '../domain/records.ts';

export const RUN_LABELS_MAX = 100_000;

export interface RunLabels {
  runId: string;
  tenantId: string;
  agent: string;
  agentVersion: string;
  createdAt: number;
  deadlineAt: number | null;
  parentRunId: string | null;
}

const labels = new Map<string, RunLabels>();

export function rememberRun(run: RunRecord): void {
  labels.delete(run.id);
  labels.set(run.id, {
    runId: run.id,
    tenantId: run.tenantId,
    agent: run.agent,
    agentVersion: run.agentVersion,
    createdAt: run.createdAt,
    deadlineAt: run.deadlineAt,
    parentRunId: run.parentRunId,
  });
  if (labels.size > RUN_LABELS_MAX) labels.delete(labels.keys().next().value!);
}

export function forgetRun(runId: string): void {
  labels.delete(runId);
}

export function runLabels(runId: string): RunLabels | undefined {
  return labels.get(runId);
}
