// Drives one scenario against a target: waits for the scenario's start instant, submits each
// arrival on time (in batches per tenant), follows every tenant's run-ended events, and returns
// when every submitted run has ended or the drain allowance has passed. Reports progress through a
// callback; it measures nothing itself beyond submission times (collect.ts reads Keel's records).
import { setTimeout as sleep } from 'node:timers/promises';
import type { KeelClient } from '../client/keel-client.ts';
import type { CreateRunRequest } from '../client/types.ts';
import type { Arrival } from './arrivals.ts';
import type { SimScenario } from './scenario.ts';

/** Runs per POST /v1/runs:batch (the server's default KEEL_BATCH_RUNS_MAX is 1,000). */
const SUBMIT_BATCH_MAX = 500;
const PROGRESS_INTERVAL_MS = 500;
const ENDED_TYPES = ['run.succeeded', 'run.failed', 'run.cancelled'];

export interface SubmittedRun {
  id: string;
  tenant: string;
  agent: string;
  submittedAtMs: number;
}

export interface Progress {
  elapsedMs: number;
  planned: number;
  submitted: number;
  ended: number;
  succeeded: number;
  failed: number;
  submitErrors: number;
}

export interface DriveResult {
  runs: SubmittedRun[];
  submitErrors: string[];
  /** False when the drain allowance ran out with runs still going. */
  drained: boolean;
  endedAtMs: number;
}

export async function drive(
  scenario: SimScenario,
  clients: Map<string, KeelClient>,
  plan: Arrival[],
  startAtMs: number,
  onProgress: (p: Progress) => void,
): Promise<DriveResult> {
  const stop = new AbortController();
  const ended = new Map<string, string>();
  const watchers = [...new Set(clients.values())].map((client) =>
    watchEnds(client, ended, stop.signal),
  );
  const runs: SubmittedRun[] = [];
  const submitErrors: string[] = [];
  const progress = (): Progress => {
    let succeeded = 0;
    let failed = 0;
    for (const id of runs.map((r) => r.id)) {
      const type = ended.get(id);
      if (type === 'run.succeeded') succeeded += 1;
      else if (type !== undefined) failed += 1;
    }
    return {
      elapsedMs: Date.now() - startAtMs,
      planned: plan.length,
      submitted: runs.length,
      ended: succeeded + failed,
      succeeded,
      failed,
      submitErrors: submitErrors.length,
    };
  };
  const ticker = setInterval(() => onProgress(progress()), PROGRESS_INTERVAL_MS);
  try {
    await sleep(Math.max(0, startAtMs - Date.now()));
    let next = 0;
    while (next < plan.length) {
      const due = plan[next]!.atMs;
      await sleep(Math.max(0, startAtMs + due - Date.now()));
      const batch: Arrival[] = [];
      while (next < plan.length && plan[next]!.atMs <= Date.now() - startAtMs)
        batch.push(plan[next++]!);
      if (batch.length === 0) batch.push(plan[next++]!);
      await submit(batch, clients, runs, submitErrors);
    }
    const deadline = Date.now() + scenario.drainSeconds * 1_000;
    while (Date.now() < deadline && runs.some((r) => !ended.has(r.id))) await sleep(100);
    const drained = runs.every((r) => ended.has(r.id));
    onProgress(progress());
    return { runs, submitErrors, drained, endedAtMs: Date.now() };
  } finally {
    clearInterval(ticker);
    stop.abort();
    await Promise.allSettled(watchers);
  }
}

async function submit(
  batch: Arrival[],
  clients: Map<string, KeelClient>,
  runs: SubmittedRun[],
  errors: string[],
): Promise<void> {
  const byTenant = Map.groupBy(batch, (a) => a.tenant);
  await Promise.all(
    [...byTenant].map(async ([tenant, list]) => {
      const client = clients.get(tenant)!;
      for (let i = 0; i < list.length; i += SUBMIT_BATCH_MAX) {
        const chunk = list.slice(i, i + SUBMIT_BATCH_MAX);
        const requests: CreateRunRequest[] = chunk.map((a) => ({
          agent: a.agent,
          input: { seq: a.seq },
          idempotencyKey: `sim-${a.seq}`,
        }));
        const submittedAtMs = Date.now();
        try {
          const results = await client.runs.createMany(requests);
          results.forEach((result, n) => {
            const arrival = chunk[n]!;
            if ('run' in result && result.run !== undefined)
              runs.push({ id: result.run.id, tenant, agent: arrival.agent, submittedAtMs });
            else errors.push(`run ${arrival.seq}: ${JSON.stringify(result)}`);
          });
        } catch (error) {
          errors.push(`${chunk.length} runs of ${tenant}: ${(error as Error).message}`);
        }
      }
    }),
  );
}

/** Records each run's ending event type; returns when `signal` aborts. */
async function watchEnds(
  client: KeelClient,
  ended: Map<string, string>,
  signal: AbortSignal,
): Promise<void> {
  try {
    for await (const event of client.events.stream(
      { types: ENDED_TYPES },
      { from: 'start', signal },
    ))
      ended.set(event.runId, event.type);
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}
