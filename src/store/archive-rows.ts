// Rows of the archive area's tables as records (both backends: Postgres BIGINT columns arrive as
// strings, so every number goes through Number()).
import type {
  ArchiveChunkRecord,
  ArchiveStream,
  RetentionPolicy,
  RunArchiveRecord,
} from './archive-store.ts';
import type { Row } from './procedures/transaction.ts';

const numberOrNull = (value: unknown): number | null => (value === null ? null : Number(value));

export function toArchive(row: Row): RunArchiveRecord {
  return {
    runId: row.run_id as string,
    tenantId: row.tenant_id as string,
    journalLast: Number(row.journal_last),
    eventsLast: Number(row.events_last),
    journalWatermark: Number(row.journal_watermark),
    eventsWatermark: Number(row.events_watermark),
    snapshotSha256: (row.snapshot_sha256 as string | null) ?? null,
    claimOwner: (row.claim_owner as string | null) ?? null,
    claimToken: Number(row.claim_token),
    claimExpiresAt: numberOrNull(row.claim_expires_at ?? null),
    journalPruned: Number(row.journal_pruned),
    eventsPruned: Number(row.events_pruned),
    createdAt: Number(row.created_at),
    prunedAt: numberOrNull(row.pruned_at ?? null),
  };
}

export function toChunk(row: Row): ArchiveChunkRecord {
  return {
    runId: row.run_id as string,
    stream: row.stream as ArchiveStream,
    firstSeq: Number(row.first_seq),
    lastSeq: Number(row.last_seq),
    sha256: row.sha256 as string,
    bytes: Number(row.bytes),
    records: Number(row.records),
  };
}

export function toPolicy(row: Row): RetentionPolicy {
  return {
    keepDays: numberOrNull(row.keep_days ?? null),
    keepRuns: numberOrNull(row.keep_runs ?? null),
  };
}
