// The shared space of a run tree in both stores (domain/shared-space.ts): a write stores its content
// as a content-addressed artifact and inserts the file's next version only if the latest is the one
// the writer expected; a write id seen before returns the version it made (a write applied again
// after a crash is no conflict). It never decides who may reach a tree (the engine and the API do).
import { createHash } from 'node:crypto';
import type {
  SharedFile,
  SharedFileInfo,
  SharedFileWrite,
  SharedWriteOutcome,
} from '../../domain/shared-space.ts';
import { all, one, run, type Procedure, type Row, type Tx } from './transaction.ts';

export function* writeSharedFile(tx: Tx, w: SharedFileWrite): Procedure<SharedWriteOutcome> {
  const seen = yield* one('find-shared-write', { root_run_id: w.rootRunId, write_id: w.writeId });
  if (seen !== undefined) return { ok: true, version: Number(seen.version), duplicate: true };
  const bytes = Buffer.from(w.content, 'utf8');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  yield run('put-shared-blob', {
    sha256,
    size: bytes.length,
    content_hex: bytes.toString('hex'),
    now: tx.now,
  });
  const inserted = (yield run('insert-shared-file', {
    root_run_id: w.rootRunId,
    path: w.path,
    expected: w.expectedVersion,
    tenant_id: w.tenantId,
    sha256,
    size: bytes.length,
    written_by_run: w.writtenByRun,
    write_id: w.writeId,
    now: tx.now,
  })) as number;
  if (inserted === 1) return { ok: true, version: w.expectedVersion + 1, duplicate: false };
  const current = yield* one('get-shared-file', {
    root_run_id: w.rootRunId,
    path: w.path,
    with_content: 0,
  });
  return { ok: false, currentVersion: current === undefined ? 0 : Number(current.version) };
}

export function* readSharedFile(rootRunId: string, path: string): Procedure<SharedFile | null> {
  const row = yield* one('get-shared-file', { root_run_id: rootRunId, path, with_content: 1 });
  if (row === undefined) return null;
  const content = Buffer.from(row.content as Uint8Array).toString('utf8');
  return { ...fileInfo(row), content };
}

export function* listSharedFiles(
  rootRunId: string,
  prefix: string,
  limit: number,
): Procedure<SharedFileInfo[]> {
  const rows = yield* all('list-shared-files', { root_run_id: rootRunId, prefix, limit });
  return rows.map(fileInfo);
}

function fileInfo(row: Row): SharedFileInfo {
  return {
    path: row.path as string,
    version: Number(row.version),
    size: Number(row.size),
    sha256: row.sha256 as string,
    writtenByRun: row.written_by_run as string,
    writtenAt: Number(row.written_at),
  };
}
