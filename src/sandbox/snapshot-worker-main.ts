// The entry of the snapshot worker thread: walks workspaces for the main thread (one request at a
// time, in order) and keeps each workspace's walk cache between requests, so a snapshot reads only
// the files that changed. It never touches the artifact store: the main thread stores what the
// walk returns.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { KeelError } from '../domain/keel-error.ts';
import type { FromSnapshotWorker, ToSnapshotWorker } from './snapshot-worker.ts';
import { walkWorkspace, type WalkCache } from './snapshot-walk.ts';

/**
 * Nice value of the walking thread. 0: the sandbox is frozen while it is walked, so a slower walk
 * only makes the call (and the memory it holds) last longer; the main thread stays free either way,
 * being another thread. Raise it to favour the API over snapshots on a saturated host.
 */
const SNAPSHOT_THREAD_NICE = 0;

const port = parentPort!;
const caches = new Map<string, WalkCache>();

try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, SNAPSHOT_THREAD_NICE);
} catch {
  // not Linux, or not permitted: the walk runs at the process's priority
}

port.on('message', (message: ToSnapshotWorker) => {
  if (message.type === 'forget') {
    caches.delete(message.dir);
    return;
  }
  const next: WalkCache = new Map();
  let reply: FromSnapshotWorker;
  let transfer: ArrayBuffer[] = [];
  try {
    const result = walkWorkspace(message.dir, message.limits, caches.get(message.dir), next);
    // Kept only after a successful walk; a failed one leaves no cache to trust.
    caches.set(message.dir, next);
    reply = { id: message.id, ok: true, result };
    transfer = [result.manifestBytes, ...result.blobs.values()].map(
      (bytes) => bytes.buffer as ArrayBuffer,
    );
  } catch (error) {
    caches.delete(message.dir);
    reply = {
      id: message.id,
      ok: false,
      error:
        error instanceof KeelError
          ? { code: error.code, message: error.message, details: error.details }
          : { message: (error as Error).message ?? String(error) },
    };
  }
  port.postMessage(reply, transfer);
});
