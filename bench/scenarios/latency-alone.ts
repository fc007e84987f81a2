// Scenario 4, end-to-end latency of one five-step run on an otherwise idle Keel: submit →
// succeeded, one run at a time. In-process: from before store.createRun until the store's 'ended'
// signal. Through HTTP: from before POST /v1/runs until the SSE stream of GET /v1/runs/:id/events
// delivers run.succeeded (client in this process). A few unrecorded runs warm the code paths first;
// an fsync probe sampled between runs shows what the disk did meanwhile.
import { createHistogram } from 'node:perf_hooks';
import {
  FsyncProbe,
  fiveSteps,
  progress,
  recordMs,
  startKeel,
  summarize,
  type BenchKeel,
  type LatencySummary,
} from '../support.ts';

export interface LatencyAloneResult {
  runs: number;
  warmupRuns: number;
  inProcess: LatencySummary;
  http: LatencySummary;
  /** Write transactions per run in-process, one after another on the run's critical path. */
  transactionsPerRun: number;
  /** Of those, the fsync'd ones (the claim is written without an fsync of its own). */
  fsyncedTransactionsPerRun: number;
  /**
   * Single-row fsync'd commits on a probe file, one between consecutive runs: the disk during this
   * scenario.
   */
  fsyncProbe: LatencySummary;
}

export async function runLatencyAlone(options: { quick: boolean }): Promise<LatencyAloneResult> {
  const runs = options.quick ? 50 : 200;
  const warmupRuns = options.quick ? 10 : 30;
  const keel = await startKeel({ agents: [fiveSteps], http: true });
  const probe = new FsyncProbe(keel.dir);
  try {
    const inProcess = createHistogram();
    for (let i = 0; i < warmupRuns; i++) await oneInProcess(keel);
    const before = keel.store.writeStats.transactions;
    const fsyncedBefore = keel.store.writeStats.fsyncedTransactions;
    for (let i = 0; i < runs; i++) {
      probe.sample();
      const measured = await oneInProcess(keel);
      recordMs(inProcess, measured);
    }
    const transactionsPerRun =
      Math.round(((keel.store.writeStats.transactions - before) / runs) * 100) / 100;
    const fsyncedTransactionsPerRun =
      Math.round(((keel.store.writeStats.fsyncedTransactions - fsyncedBefore) / runs) * 100) / 100;
    const inProcessSummary = summarize(inProcess);
    progress(
      `latency alone, in-process: p50 ${inProcessSummary.p50Ms} ms, p99 ${inProcessSummary.p99Ms} ms (${transactionsPerRun} transactions per run, ${fsyncedTransactionsPerRun} fsync'd)`,
    );

    const http = createHistogram();
    for (let i = 0; i < warmupRuns; i++) await oneOverHttp(keel);
    for (let i = 0; i < runs; i++) {
      probe.sample();
      const measured = await oneOverHttp(keel);
      recordMs(http, measured);
    }
    const httpSummary = summarize(http);
    const fsyncProbe = summarize(probe.histogram);
    progress(
      `latency alone, HTTP POST + SSE: p50 ${httpSummary.p50Ms} ms, p99 ${httpSummary.p99Ms} ms; fsync probe p50 ${fsyncProbe.p50Ms} ms`,
    );
    return {
      runs,
      warmupRuns,
      inProcess: inProcessSummary,
      http: httpSummary,
      transactionsPerRun,
      fsyncedTransactionsPerRun,
      fsyncProbe,
    };
  } finally {
    probe.close();
    await keel.close();
  }
}

async function oneInProcess(keel: BenchKeel): Promise<number> {
  const started = performance.now();
  const run = keel.newRun(fiveSteps);
  const ended = keel.ended(run.id);
  await keel.store.createRun(run);
  await ended;
  return performance.now() - started;
}

/**
 * POST, then follow the run's SSE stream until run.succeeded; any other terminal event is an error.
 */
async function oneOverHttp(keel: BenchKeel): Promise<number> {
  const api = keel.api!;
  const headers = { authorization: `Bearer ${api.apiKey}` };
  const started = performance.now();
  const res = await fetch(`${api.url}/v1/runs`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: fiveSteps.name }),
  });
  const run = (await res.json()) as { id?: string };
  if (res.status !== 201 || run.id === undefined)
    throw new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(run)}`);
  const stream = await fetch(`${api.url}/v1/runs/${run.id}/events`, { headers });
  if (stream.body === null) throw new Error('the event stream has no body');
  const decoder = new TextDecoder();
  let buffered = '';
  let terminal: string | undefined;
  let elapsed = 0;
  // Leaving the loop cancels the stream (the iterator's return()), so the server sees the client
  // go.
  for await (const chunk of stream.body) {
    buffered += decoder.decode(chunk, { stream: true });
    terminal = /^event: (run\.succeeded|run\.failed|run\.cancelled)$/m.exec(buffered)?.[1];
    if (terminal === undefined) continue;
    elapsed = performance.now() - started;
    break;
  }
  if (terminal !== 'run.succeeded')
    throw new Error(`run ${run.id} ended with ${terminal ?? 'its event stream closed'}`);
  return elapsed;
}
