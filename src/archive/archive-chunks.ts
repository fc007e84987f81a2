// How a run's archive is laid out in the artifact store: its snapshot (the run's final state and
// the ranges its chunks cover) and its chunks (gzip JSON of the records at positions
// [first, last]), each held by a named reference under archive/<runId>/ so nothing that collects
// unreferenced artifacts removes it. Pure encoding: no store, no clock.
import { gunzipSync, gzipSync } from 'node:zlib';
export { ARCHIVE_CHUNK_POSITIONS_DEFAULT } from '../config/defaults.ts';
import type { JournalEntry, RunEventRecord, RunRecord } from '../domain/records.ts';
import type { ArchiveStream } from '../store/archive-store.ts';

const FORMAT_VERSION = 1;

export interface ArchiveSnapshot {
  version: typeof FORMAT_VERSION;
  run: RunRecord;
  journalLast: number;
  eventsLast: number;
  chunkPositions: number;
  writtenAt: number;
}

export interface ArchiveChunk {
  version: typeof FORMAT_VERSION;
  runId: string;
  stream: ArchiveStream;
  firstSeq: number;
  lastSeq: number;
  records: Array<JournalEntry | RunEventRecord>;
}

export const snapshotRef = (runId: string): string => `archive/${runId}/snapshot`;
export const chunkRef = (runId: string, stream: ArchiveStream, firstSeq: number): string =>
  `archive/${runId}/${stream}/${firstSeq}`;

/** The position ranges covering 0..last in chunks of `size` positions (none when last is -1). */
export function chunkRanges(
  last: number,
  size: number,
): Array<{ firstSeq: number; lastSeq: number }> {
  const ranges = [];
  for (let first = 0; first <= last; first += size) {
    ranges.push({ firstSeq: first, lastSeq: Math.min(first + size - 1, last) });
  }
  return ranges;
}

export function encode(value: ArchiveSnapshot | ArchiveChunk): Buffer {
  return gzipSync(JSON.stringify(value));
}

export function decodeSnapshot(bytes: Buffer): ArchiveSnapshot {
  const value = JSON.parse(gunzipSync(bytes).toString('utf8')) as ArchiveSnapshot;
  if (value.version !== FORMAT_VERSION)
    throw new Error(`archive snapshot version ${value.version}`);
  return value;
}

export function decodeChunk(bytes: Buffer): ArchiveChunk {
  const value = JSON.parse(gunzipSync(bytes).toString('utf8')) as ArchiveChunk;
  if (value.version !== FORMAT_VERSION) throw new Error(`archive chunk version ${value.version}`);
  return value;
}
