// Reads what Keel recorded about the simulated runs, over its public API: each run's status, times
// and cost, and each of its steps' queued/started/ended times and attempts. Turns them into plain
// timing records for metrics.ts; it computes no statistics itself.
import type { KeelClient } from '../client/keel-client.ts';
import type { Run, Step } from '../client/types.ts';
import type { SubmittedRun } from './driver.ts';
import { BROWSER_POOL, SIM_BROWSER_TOOL } from './fake-tools.ts';
import { SIM_MODEL } from './sim-agents.ts';

/** Step reads in flight at once: enough to be quick, few enough not to crowd the Keel measured. */
const READS_IN_FLIGHT = 8;

export type Stage = 'model' | 'tool' | 'browser' | 'input';
export const STAGES: readonly Stage[] = ['model', 'tool', 'browser', 'input'];

export interface StepTiming {
  stage: Stage;
  pool: string;
  /** Seconds after the scenario's start the step was queued / started / ended. */
  queuedAt: number;
  startedAt: number;
  endedAt: number;
  waitSeconds: number;
  execSeconds: number;
  attempts: number;
  /** Position among the run's steps of its stage (0: the run's first model call). */
  ordinal: number;
}

export interface RunTiming {
  id: string;
  tenant: string;
  agent: string;
  status: Run['status'];
  errorCode: string | null;
  submittedAt: number;
  endedAt: number | null;
  costUsd: number;
  steps: StepTiming[];
}

export async function collect(
  runs: readonly SubmittedRun[],
  clients: Map<string, KeelClient>,
  startAtMs: number,
): Promise<RunTiming[]> {
  const at = (iso: string | null): number | null =>
    iso === null ? null : (Date.parse(iso) - startAtMs) / 1_000;
  const out: RunTiming[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runs.length) {
      const submitted = runs[next++]!;
      const client = clients.get(submitted.tenant)!;
      const [run, steps] = await Promise.all([
        client.runs.get(submitted.id),
        client.runs.steps(submitted.id),
      ]);
      out.push({
        id: run.id,
        tenant: submitted.tenant,
        agent: submitted.agent,
        status: run.status,
        errorCode: (run.error as { code?: string } | null)?.code ?? null,
        submittedAt: (submitted.submittedAtMs - startAtMs) / 1_000,
        endedAt: at(run.endedAt),
        costUsd: run.counters.costUsd,
        steps: stepTimings(steps, at),
      });
    }
  };
  await Promise.all(Array.from({ length: READS_IN_FLIGHT }, worker));
  return out;
}

function stepTimings(steps: Step[], at: (iso: string | null) => number | null): StepTiming[] {
  const seen = new Map<Stage, number>();
  const out: StepTiming[] = [];
  for (const step of steps) {
    const stage = stageOf(step);
    if (stage === undefined) continue;
    const queuedAt = at(step.queuedAt) ?? at(step.startedAt);
    // A wait for input never starts: it is parked from queued to ended.
    const startedAt = at(step.startedAt) ?? queuedAt;
    const endedAt = at(step.endedAt);
    if (queuedAt === null || startedAt === null || endedAt === null) continue;
    const ordinal = seen.get(stage) ?? 0;
    seen.set(stage, ordinal + 1);
    out.push({
      stage,
      pool:
        stage === 'model'
          ? `model:${SIM_MODEL}`
          : stage === 'browser'
            ? BROWSER_POOL
            : stage === 'tool'
              ? 'inline'
              : 'none (a wait)',
      queuedAt,
      startedAt,
      endedAt,
      waitSeconds: Math.max(0, startedAt - queuedAt),
      execSeconds: Math.max(0, endedAt - startedAt),
      attempts: Math.max(1, step.attempts),
      ordinal,
    });
  }
  return out;
}

function stageOf(step: Step): Stage | undefined {
  if (step.kind === 'model') return 'model';
  if (step.kind === 'input') return 'input';
  if (step.kind === 'tool') return step.name === SIM_BROWSER_TOOL ? 'browser' : 'tool';
  return undefined;
}
