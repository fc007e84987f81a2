// Scenario 1, the fsync ceiling: single-row INSERT transactions through node:sqlite in WAL mode,
// one after another, in a fresh temp dir under os.tmpdir() like every scenario. With
// synchronous=FULL each COMMIT waits for an fsync, so this is what one writer without group commit
// can durably do; synchronous=NORMAL is shown for contrast only (a commit there is not durable on
// its own: WAL is fsync'd at checkpoints). Keel code is not involved.
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import {
  makeTempDir,
  progress,
  recordMs,
  removeDir,
  summarize,
  type LatencySummary,
} from '../support.ts';

export interface FsyncCeilingResult {
  durationMs: number;
  full: { txPerSec: number; transactions: number; commitLatency: LatencySummary };
  normal: { txPerSec: number; transactions: number; commitLatency: LatencySummary };
}

export async function runFsyncCeiling(options: { quick: boolean }): Promise<FsyncCeilingResult> {
  const durationMs = options.quick ? 1_000 : 3_000;
  const dir = makeTempDir();
  try {
    const full = measure(join(dir, 'fsync-full.db'), 'FULL', durationMs);
    progress(
      `fsync ceiling, synchronous=FULL: ${full.txPerSec} tx/s (p50 commit ${full.commitLatency.p50Ms} ms)`,
    );
    const normal = measure(join(dir, 'fsync-normal.db'), 'NORMAL', durationMs);
    progress(`fsync ceiling, synchronous=NORMAL (not durable per commit): ${normal.txPerSec} tx/s`);
    return { durationMs, full, normal };
  } finally {
    removeDir(dir);
  }
}

function measure(path: string, synchronous: 'FULL' | 'NORMAL', durationMs: number) {
  const db = new DatabaseSync(path);
  try {
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous};
      CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT NOT NULL) STRICT;`);
    const insert = db.prepare('INSERT INTO t (payload) VALUES (?)');
    const latency = createHistogram();
    const started = performance.now();
    const end = started + durationMs;
    let transactions = 0;
    let now = started;
    while (now < end) {
      db.exec('BEGIN IMMEDIATE');
      insert.run('{"step":1,"result":"ok"}');
      db.exec('COMMIT');
      const after = performance.now();
      recordMs(latency, after - now);
      now = after;
      transactions++;
    }
    const elapsedMs = now - started;
    return {
      txPerSec: Math.round((transactions / elapsedMs) * 1000),
      transactions,
      commitLatency: summarize(latency),
    };
  } finally {
    db.close();
  }
}
