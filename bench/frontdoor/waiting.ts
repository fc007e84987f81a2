// Runs parked on input, submitted over HTTP to `keel dev` (SQLite, isolates): `count` runs of an
// agent that calls ctx.waitForInput at once, then the Keel process's RSS (/proc/<pid>/status) once
// every one of them is waiting. Submission is selectable: `batch` (POST /v1/runs:batch, up to
// BATCH_SIZE runs a request, assumed body `{ runs: [<POST /v1/runs body>...] }`), `single` (parallel
// POST /v1/runs), or `auto` (batch if the server answers it, else single). Progress is read with
// COUNT(*) on a read-only connection to the data dir's SQLite file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Pool } from 'undici';
import { DB_FILE_NAME, delay, progress } from '../support.ts';
import { BENCH_API_KEY, startKeelDev } from './systems.ts';
import { WAITS_AGENT } from './workload.ts';

export type Submission = 'batch' | 'single' | 'auto';
const BATCH_SIZE = 1_000;
const BATCHES_IN_FLIGHT = 2;
const SINGLES_IN_FLIGHT = 64;
const POLL_MS = 500;
/** Parked runs must keep coming: no progress for this long is a stuck bench. */
const STALL_TIMEOUT_MS = 60_000;

export interface WaitingResult {
  runs: number;
  submission: 'batch' | 'single';
  /** Why `auto` chose single submission, when it did. */
  submissionNote: string | undefined;
  submitSeconds: number;
  parkSeconds: number;
  rssBytes: number;
  peakRssBytes: number;
}

const headers = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };
const runBody = { agent: WAITS_AGENT, input: null };

async function postBatch(pool: Pool, size: number): Promise<{ status: number; text: string }> {
  const res = await pool.request({
    method: 'POST',
    path: '/v1/runs:batch',
    headers,
    body: JSON.stringify({ runs: Array.from({ length: size }, () => runBody) }),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

async function submitSingles(pool: Pool, count: number): Promise<void> {
  let next = 0;
  const body = JSON.stringify(runBody);
  const lane = async (): Promise<void> => {
    while (next < count) {
      next++;
      const res = await pool.request({ method: 'POST', path: '/v1/runs', headers, body });
      const text = await res.body.text();
      if (res.statusCode !== 201)
        throw new Error(`POST /v1/runs answered ${res.statusCode}: ${text}`);
    }
  };
  await Promise.all(Array.from({ length: SINGLES_IN_FLIGHT }, lane));
}

async function submitBatches(pool: Pool, count: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const size = Math.min(BATCH_SIZE, count - next);
      next += size;
      const { status, text } = await postBatch(pool, size);
      if (status < 200 || status > 299)
        throw new Error(`POST /v1/runs:batch answered ${status}: ${text.slice(0, 500)}`);
      // A 200 answers per item: every one must have made a run.
      const refused = (JSON.parse(text) as { results: Array<{ status: string }> }).results.find(
        (r) => r.status !== 'created',
      );
      if (refused !== undefined)
        throw new Error(`POST /v1/runs:batch refused an item: ${JSON.stringify(refused)}`);
    }
  };
  await Promise.all(Array.from({ length: BATCHES_IN_FLIGHT }, lane));
}

/** Which path `auto` takes: one run through the batch endpoint tells whether it is there. */
async function chooseSubmission(
  pool: Pool,
  wanted: Submission,
): Promise<{ submission: 'batch' | 'single'; note: string | undefined; probed: number }> {
  if (wanted !== 'auto') return { submission: wanted, note: undefined, probed: 0 };
  const { status, text } = await postBatch(pool, 1);
  if (status >= 200 && status <= 299) return { submission: 'batch', note: undefined, probed: 1 };
  return {
    submission: 'single',
    note: `POST /v1/runs:batch answered ${status} (${text.slice(0, 120)}): single POSTs used`,
    probed: 0,
  };
}

function rssOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS') * 1024, peak: kib('VmHWM') * 1024 };
}

export async function runWaiting(count: number, wanted: Submission): Promise<WaitingResult> {
  const keel = await startKeelDev({ isolation: 'isolate' });
  const pool = new Pool(keel.url, { connections: SINGLES_IN_FLIGHT });
  const reader = new DatabaseSync(join(keel.dataDir, DB_FILE_NAME), { readOnly: true });
  try {
    const countWaiting = reader.prepare("SELECT COUNT(*) AS n FROM runs WHERE status = 'waiting'");
    const waiting = () => Number((countWaiting.get() as { n: number }).n);
    const chosen = await chooseSubmission(pool, wanted);
    progress(`waiting runs: submitting ${count} by ${chosen.submission} POSTs`);
    const started = performance.now();
    const remaining = count - chosen.probed;
    await (chosen.submission === 'batch'
      ? submitBatches(pool, remaining)
      : submitSingles(pool, remaining));
    const submitSeconds = (performance.now() - started) / 1000;
    let last = -1;
    let lastProgressAt = Date.now();
    for (;;) {
      const n = waiting();
      if (n >= count) break;
      if (n !== last) [last, lastProgressAt] = [n, Date.now()];
      else if (Date.now() - lastProgressAt > STALL_TIMEOUT_MS)
        throw new Error(`waiting runs: stuck at ${n} of ${count} parked`);
      await delay(POLL_MS);
    }
    const parkSeconds = (performance.now() - started) / 1000;
    const { rss, peak } = rssOf(keel.pid);
    progress(
      `waiting runs: ${count} parked in ${parkSeconds.toFixed(1)} s; keel dev RSS ${(rss / 2 ** 20).toFixed(0)} MiB (peak ${(peak / 2 ** 20).toFixed(0)} MiB)`,
    );
    return {
      runs: count,
      submission: chosen.submission,
      submissionNote: chosen.note,
      submitSeconds,
      parkSeconds,
      rssBytes: rss,
      peakRssBytes: peak,
    };
  } finally {
    reader.close();
    await pool.close();
    await keel.stop();
  }
}
