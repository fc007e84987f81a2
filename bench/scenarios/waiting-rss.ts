// Scenario 5, memory of runs parked on input: 10,000 runs that call ctx.waitForInput('go') at once.
// A parked run should cost rows in SQLite, not memory in the orchestrator. RSS is read after forced
// GCs (the child process runs with --expose-gc) before and after; progress is read with COUNT(*) on
// a second, read-only SQLite connection opened before the first measurement, so its own memory is
// in both figures. Further batches show the marginal cost.
import { DatabaseSync } from 'node:sqlite';
import {
  fileBytes,
  delay,
  progress,
  settledRss,
  startKeel,
  waitsForInput,
  type BenchKeel,
} from '../support.ts';

export const WAITING_RUNS = 10_000;
/**
 * Runs parked before the first measurement, so one-time costs (JIT, prepared statements, first
 * pages) are not counted per run.
 */
const WARMUP_RUNS = 200;
/**
 * Runs submitted per createRun wave: a client submitting steadily, not one 10,000-promise burst.
 */
const SUBMIT_WAVE_RUNS = 500;
/**
 * Batches parked after the measured one, to show whether RSS keeps growing per run or has levelled
 * off.
 */
const EXTRA_BATCHES = 2;
const PARK_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 100;
const READER_CACHE_PAGES = 64;

export interface WaitingRssResult {
  runs: number;
  warmupRuns: number;
  gcForced: boolean;
  rssBeforeBytes: number;
  rssAfterBytes: number;
  heapUsedBeforeBytes: number;
  heapUsedAfterBytes: number;
  rssBytesPerWaitingRun: number;
  heapBytesPerWaitingRun: number;
  activeRunsWhenParked: number;
  parkSeconds: number;
  dbFileBytes: number;
  walFileBytes: number;
  /**
   * Further batches of the same size on top: what more waiting runs cost once V8's heap has grown
   * to its working size.
   */
  more: Array<{
    waitingRuns: number;
    rssAfterBytes: number;
    rssBytesPerWaitingRun: number;
    heapBytesPerWaitingRun: number;
    activeRunsWhenParked: number;
  }>;
}

export async function runWaitingRss(options: { quick: boolean }): Promise<WaitingRssResult> {
  const runs = options.quick ? 2_000 : WAITING_RUNS;
  const keel = await startKeel({ agents: [waitsForInput], http: true });
  const reader = new DatabaseSync(keel.dbPath, { readOnly: true });
  reader.exec(`PRAGMA cache_size = ${READER_CACHE_PAGES}`);
  const countWaiting = reader.prepare("SELECT COUNT(*) AS n FROM runs WHERE status = 'waiting'");
  const waiting = () => Number((countWaiting.get() as { n: number }).n);
  try {
    await submitWaves(keel, WARMUP_RUNS);
    await until(() => waiting() >= WARMUP_RUNS, 'warm-up runs parked');
    const before = await settledRss();
    progress(
      `waiting RSS: baseline ${mib(before.rssBytes)} MiB RSS after GC; submitting ${runs} runs that wait for input`,
    );

    const started = performance.now();
    await submitWaves(keel, runs);
    await until(() => waiting() >= WARMUP_RUNS + runs, `${runs} runs parked`);
    const parkSeconds = Math.round((performance.now() - started) / 100) / 10;
    const activeRunsWhenParked = keel.orchestrator.activeRuns;
    const after = await settledRss();
    const dbFileBytes = fileBytes(keel.dbPath);
    const walFileBytes = fileBytes(`${keel.dbPath}-wal`);
    progress(
      `waiting RSS: ${mib(after.rssBytes)} MiB after ${runs} parked in ${parkSeconds} s; parking ${EXTRA_BATCHES} × ${runs} more`,
    );

    const more: WaitingRssResult['more'] = [];
    let previous = after;
    for (let batch = 2; batch <= 1 + EXTRA_BATCHES; batch++) {
      await submitWaves(keel, runs);
      await until(() => waiting() >= WARMUP_RUNS + batch * runs, `${batch * runs} runs parked`);
      const activeRuns = keel.orchestrator.activeRuns;
      const now = await settledRss();
      more.push({
        waitingRuns: batch * runs,
        rssAfterBytes: now.rssBytes,
        activeRunsWhenParked: activeRuns,
        rssBytesPerWaitingRun: Math.round((now.rssBytes - previous.rssBytes) / runs),
        heapBytesPerWaitingRun: Math.round((now.heapUsedBytes - previous.heapUsedBytes) / runs),
      });
      previous = now;
    }
    const result: WaitingRssResult = {
      runs,
      warmupRuns: WARMUP_RUNS,
      gcForced: after.gcForced,
      rssBeforeBytes: before.rssBytes,
      rssAfterBytes: after.rssBytes,
      heapUsedBeforeBytes: before.heapUsedBytes,
      heapUsedAfterBytes: after.heapUsedBytes,
      rssBytesPerWaitingRun: Math.round((after.rssBytes - before.rssBytes) / runs),
      heapBytesPerWaitingRun: Math.round((after.heapUsedBytes - before.heapUsedBytes) / runs),
      activeRunsWhenParked,
      parkSeconds,
      dbFileBytes,
      walFileBytes,
      more,
    };
    progress(
      `waiting RSS: ${result.rssBytesPerWaitingRun} B RSS per waiting run (first ${runs}), then ` +
        `${more.map((m) => `${m.rssBytesPerWaitingRun} B`).join(', ')} for each next ${runs}; ${activeRunsWhenParked} active in the orchestrator`,
    );
    return result;
  } finally {
    reader.close();
    await keel.close();
  }
}

async function submitWaves(keel: BenchKeel, runs: number): Promise<void> {
  for (let sent = 0; sent < runs; sent += SUBMIT_WAVE_RUNS) {
    const wave = Math.min(SUBMIT_WAVE_RUNS, runs - sent);
    await Promise.all(
      Array.from({ length: wave }, () => keel.store.createRun(keel.newRun(waitsForInput))),
    );
  }
}

/**
 * Polls a cheap condition until it holds; a deadline turns a stuck scenario into an error instead
 * of a hang.
 */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + PARK_TIMEOUT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(POLL_INTERVAL_MS);
  }
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}
