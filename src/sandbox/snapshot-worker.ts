// The main thread's side of the snapshot worker: one worker thread per sandbox manager, started on
// the first snapshot, that walks workspaces off the thread serving HTTP, heartbeating leases and
// committing. Requests are answered in order; the thread is unref'd while nothing is pending, and a
// crashed worker fails its pending walks and is started again by the next one (its caches are lost,
// which only costs re-hashing).
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ErrorCode } from '../domain/error-codes.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { WalkLimits, WalkResult } from './snapshot-walk.ts';

const ENTRY = fileURLToPath(
  new URL(`./snapshot-worker-main${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

export type ToSnapshotWorker =
  | { type: 'walk'; id: number; dir: string; limits: WalkLimits }
  | { type: 'forget'; dir: string };

export type FromSnapshotWorker =
  | { id: number; ok: true; result: WalkResult }
  | {
      id: number;
      ok: false;
      error: { code?: ErrorCode; message: string; details?: Record<string, unknown> };
    };

/** A walk's result on the main thread: its bytes as Buffers, ready for the artifact store. */
export type Revived = Omit<WalkResult, 'manifestBytes' | 'blobs'> & {
  manifestBytes: Buffer;
  blobs: Map<string, Buffer>;
};

interface Pending {
  resolve(result: Revived): void;
  reject(error: Error): void;
}

export class SnapshotWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;

  /** Walks `dir` in the worker thread; the main thread only waits. */
  walk(dir: string, limits: WalkLimits): Promise<Revived> {
    const worker = this.started();
    const id = ++this.seq;
    return new Promise<Revived>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ type: 'walk', id, dir, limits } satisfies ToSnapshotWorker);
    });
  }

  /**
   * Starts the thread now (it loads its modules while the sandbox runs its command), so the first
   * snapshot does not wait for it.
   */
  prepare(): void {
    this.started();
  }

  /** Walks requested and not answered yet. */
  walking(): number {
    return this.pending.size;
  }

  /** Drops the walk cache of a workspace that was destroyed or handed to another run. */
  forget(dir: string): void {
    this.worker?.postMessage({ type: 'forget', dir } satisfies ToSnapshotWorker);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(ENTRY);
    worker.unref();
    worker.on('message', (message: FromSnapshotWorker) => {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (this.pending.size === 0) worker.unref();
      if (waiting === undefined) return;
      if (message.ok) waiting.resolve(revive(message.result));
      else
        waiting.reject(
          message.error.code === undefined
            ? new Error(`workspace snapshot failed: ${message.error.message}`)
            : new KeelError(message.error.code, message.error.message, {
                details: message.error.details,
              }),
        );
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.pending.values())
        waiting.reject(new Error(`the snapshot worker stopped: ${error.message}`));
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

/** The manifest and blob bytes as Buffers (views of the transferred memory, no copy). */
function revive(result: WalkResult): Revived {
  const asBuffer = (bytes: Uint8Array) =>
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    ...result,
    manifestBytes: asBuffer(result.manifestBytes),
    blobs: new Map([...result.blobs].map(([sha, bytes]) => [sha, asBuffer(bytes)])),
  };
}
