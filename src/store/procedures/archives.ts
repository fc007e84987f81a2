// The archive area's multi-statement writes, shared by both backends: claiming a run's archival,
// recording a chunk with the watermarks recomputed from every recorded chunk, and removing live rows
// up to the watermarks. Every write after the claim is fenced by the claim's token: an archiver that
// lost its claim (expired while it was stalled) writes nothing.
import assert from 'node:assert/strict';
import { KeelError } from '../../domain/keel-error.ts';
import {
  contiguousWatermark,
  type ArchiveChunkRecord,
  type PruneOutcome,
  type RetentionPolicy,
  type RunArchiveRecord,
} from '../archive-store.ts';
import { toArchive, toChunk, toPolicy } from '../archive-rows.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

function fencedOff(runId: string): KeelError {
  return new KeelError('stale_write', `archival of run ${runId} was claimed by another archiver`, {
    details: { runId },
  });
}

export function* claimArchival(
  tx: Tx,
  runId: string,
  tenantId: string,
  owner: string,
  leaseMs: number,
): Procedure<RunArchiveRecord | null> {
  yield run('archive-insert', { run_id: runId, tenant_id: tenantId, now: tx.now });
  const row = yield* one('archive-claim', {
    run_id: runId,
    owner,
    now: tx.now,
    expires_at: tx.now + leaseMs,
  });
  return row === undefined ? null : toArchive(row);
}

export function* recordChunk(
  tx: Tx,
  token: number,
  chunk: ArchiveChunkRecord,
): Procedure<RunArchiveRecord> {
  assert(chunk.firstSeq >= 0 && chunk.lastSeq >= chunk.firstSeq, 'a chunk covers a position range');
  const current = yield* one('archive-get', { run_id: chunk.runId });
  if (current === undefined || Number(current.claim_token) !== token) throw fencedOff(chunk.runId);
  yield run('archive-insert-chunk', {
    run_id: chunk.runId,
    stream: chunk.stream,
    first_seq: chunk.firstSeq,
    last_seq: chunk.lastSeq,
    sha256: chunk.sha256,
    bytes: chunk.bytes,
    records: chunk.records,
    now: tx.now,
  });
  const chunks = (yield* all('archive-chunks', { run_id: chunk.runId })).map(toChunk);
  const of = (stream: string) => chunks.filter((c) => c.stream === stream);
  yield run('archive-set-watermarks', {
    run_id: chunk.runId,
    token,
    journal_watermark: contiguousWatermark(of('journal')),
    events_watermark: contiguousWatermark(of('events')),
  });
  return toArchive((yield* one('archive-get', { run_id: chunk.runId }))!);
}

export function* pruneArchived(tx: Tx, runId: string, token: number): Procedure<PruneOutcome> {
  const row = yield* one('archive-get', { run_id: runId });
  if (row === undefined || Number(row.claim_token) !== token) throw fencedOff(runId);
  const archive = toArchive(row);
  const ended = yield* one('archive-run-ended', { run_id: runId });
  // Removal is covered only by a snapshot written first, and only of a run that is still ended.
  if (archive.snapshotSha256 === null || ended === undefined || ended.ended_at === null) {
    yield run('archive-finish', finish(runId, token, 0, 0, false, tx.now));
    return { journalPruned: 0, eventsPruned: 0, complete: false };
  }
  const journalPruned = (yield run('archive-delete-journal', {
    run_id: runId,
    through: archive.journalWatermark,
  })) as number;
  const eventsPruned = (yield run('archive-delete-events', {
    run_id: runId,
    through: archive.eventsWatermark,
  })) as number;
  const complete =
    archive.journalWatermark >= archive.journalLast &&
    archive.eventsWatermark >= archive.eventsLast;
  yield run('archive-finish', finish(runId, token, journalPruned, eventsPruned, complete, tx.now));
  return { journalPruned, eventsPruned, complete };
}

function finish(
  runId: string,
  token: number,
  journalPruned: number,
  eventsPruned: number,
  complete: boolean,
  now: number,
) {
  return {
    run_id: runId,
    token,
    journal_pruned: journalPruned,
    events_pruned: eventsPruned,
    complete: complete ? 1 : 0,
    now,
  };
}

export function* setExtent(
  _tx: Tx,
  runId: string,
  token: number,
  extent: { journalLast: number; eventsLast: number; snapshotSha256: string },
): Procedure<void> {
  const changed = (yield run('archive-set-extent', {
    run_id: runId,
    token,
    journal_last: extent.journalLast,
    events_last: extent.eventsLast,
    snapshot_sha256: extent.snapshotSha256,
  })) as number;
  if (changed === 0) throw fencedOff(runId);
}

export function* putRetention(
  tx: Tx,
  tenantId: string,
  policy: RetentionPolicy,
): Procedure<RetentionPolicy> {
  const row = yield* one('retention-put', {
    tenant_id: tenantId,
    keep_days: policy.keepDays,
    keep_runs: policy.keepRuns,
    now: tx.now,
  });
  return toPolicy(row!);
}

export function* deleteRetention(tenantId: string): Procedure<boolean> {
  return ((yield run('retention-delete', { tenant_id: tenantId })) as number) > 0;
}
