// The large-payload procedures both stores share (issue 22): chunks written one transaction each (so
// a 50 MB payload never sits in one statement), a seal that records the run's reference under the
// run's byte limit and only once every chunk is there, chunked reads, and the collection of payloads
// no run references. They never see a value, only bytes and hashes (src/store/payload-offload.ts).
import { KeelError } from '../../domain/keel-error.ts';
import type { PayloadInfo } from '../../domain/payload-ref.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

export function* putPayloadChunk(
  tx: Tx,
  sha256: string,
  seq: number,
  bytes: Uint8Array,
): Procedure<void> {
  yield run('put-payload-chunk', { sha256, seq, bytes, now: tx.now });
}

/**
 * Seals a payload whose chunks are stored and records that `runId` references it: refused with
 * `run_payloads_too_large` when the run's other payloads and this one exceed `runMaxBytes`, and
 * with `payload_incomplete` when a chunk is missing (collected meanwhile: the writer stores it
 * again).
 */
export function* sealPayload(
  tx: Tx,
  runId: string,
  payload: PayloadInfo,
  runMaxBytes: number,
): Procedure<void> {
  const other = Number(
    (yield* one('run-payload-bytes', { run_id: runId, sha256: payload.sha256 }))?.bytes ?? 0,
  );
  if (other + payload.size > runMaxBytes)
    throw new KeelError(
      'run_payloads_too_large',
      `run ${runId} would hold ${other + payload.size} bytes of payloads, above its limit of ${runMaxBytes}`,
      { details: { runId, limitBytes: runMaxBytes, bytes: other + payload.size } },
    );
  const stored = Number((yield* one('count-payload-chunks', { sha256: payload.sha256 }))?.n ?? 0);
  if (stored !== payload.chunks)
    throw new KeelError(
      'payload_incomplete',
      `payload ${payload.sha256} has ${stored} of its ${payload.chunks} chunks stored`,
    );
  yield run('upsert-payload', {
    sha256: payload.sha256,
    size: payload.size,
    media_type: payload.mediaType,
    chunks: payload.chunks,
    now: tx.now,
  });
  yield run('insert-payload-ref', {
    run_id: runId,
    sha256: payload.sha256,
    size: payload.size,
    now: tx.now,
  });
}

export function* getPayload(sha256: string): Procedure<PayloadInfo | null> {
  const row = yield* one('get-payload', { sha256 });
  if (row === undefined) return null;
  return {
    sha256: row.sha256 as string,
    size: Number(row.size),
    mediaType: row.media_type as string,
    chunks: Number(row.chunks),
  };
}

export function* readPayloadChunk(sha256: string, seq: number): Procedure<Uint8Array | null> {
  const row = yield* one('get-payload-chunk', { sha256, seq });
  return row === undefined ? null : (row.bytes as Uint8Array);
}

export function* runReferencesPayload(runId: string, sha256: string): Procedure<boolean> {
  return (yield* one('has-run-payload', { run_id: runId, sha256 })) !== undefined;
}

export function* releaseRunPayloads(runId: string): Procedure<number> {
  return (yield run('release-run-payloads', { run_id: runId })) as number;
}

/**
 * Deletes what no run references any more, last touched before `before`: references of runs that
 * no longer exist, then payloads no reference names, then chunks of no payload (also those of an
 * upload that never sealed). Returns the collected payloads' hashes.
 */
export function* collectUnreferencedPayloads(before: number): Procedure<string[]> {
  yield run('delete-gone-run-payload-refs', { before });
  const deleted = yield* all('delete-unreferenced-payloads', { before });
  yield run('delete-orphan-payload-chunks', { before });
  return deleted.map((row) => row.sha256 as string);
}
