// The ctx.shared effects on the main thread (for the in-thread ctx and isolates alike): each call
// reads or writes the shared space of the run's tree (keyed by its root run) and journals its
// answer, so a replay answers from the journal. A write's id is `<runId>.<seq>`, the same on every
// replay: a write the store applied before a crash cut its journal commit answers its first
// version when it runs again, never a false conflict.
import { crashPoint } from '../domain/crash-points.ts';
import { KeelError, deserializeError, type SerializedError } from '../domain/keel-error.ts';
import { SHARED_LIST_MAX_FILES } from '../domain/shared-space.ts';
import { rootRunOf } from '../store/run-tree-root.ts';
import type { Json } from '../sdk/types.ts';
import type { Position, RunPort } from './run-port.ts';
import { sharedCallName, type SharedCall } from './shared-space-ctx.ts';

export async function sharedEffect(
  x: RunPort,
  { seq, entry }: Position,
  call: SharedCall,
): Promise<Json> {
  if (entry !== undefined && entry.status === 'succeeded') return entry.result;
  if (entry !== undefined && entry.status === 'failed')
    throw deserializeError(
      entry.error ?? { code: 'internal', message: 'failed call without error' },
    );
  const name = sharedCallName(call);
  return x.track('shared', async () => {
    const startedAt = x.clock.now();
    const root = await rootRunOf(x.store, x.run);
    const outcome = await apply(x, root, seq, call);
    crashPoint('execute.before-commit');
    const ok = outcome.ok;
    await x.commit({
      journal: [
        {
          seq,
          kind: 'shared',
          name,
          status: ok ? 'succeeded' : 'failed',
          args: journalArgs(root, call),
          ...(ok ? { result: outcome.value } : { error: outcome.error }),
          queuedAt: startedAt,
          startedAt,
          endedAt: x.clock.now(),
        },
      ],
      events: [
        {
          type: 'effect.completed',
          data: {
            seq,
            kind: 'shared',
            name,
            status: ok ? 'succeeded' : 'failed',
            durationMs: x.clock.now() - startedAt,
            ...(call.op === 'write' && ok
              ? { version: (outcome.value as { version: number }).version }
              : {}),
            ...(ok ? {} : { code: outcome.error.code }),
          },
        },
      ],
    });
    if (!ok) throw deserializeError(outcome.error);
    return outcome.value;
  });
}

type Outcome = { ok: true; value: Json } | { ok: false; error: SerializedError };

async function apply(x: RunPort, root: string, seq: number, call: SharedCall): Promise<Outcome> {
  switch (call.op) {
    case 'read': {
      const file = await x.store.readSharedFile(root, call.path);
      const value =
        file === null
          ? null
          : {
              content: file.content,
              version: file.version,
              writtenByRun: file.writtenByRun,
              writtenAt: file.writtenAt,
            };
      return { ok: true, value };
    }
    case 'list': {
      const files = await x.store.listSharedFiles(root, call.prefix, SHARED_LIST_MAX_FILES);
      const value = files.map((f) => ({
        path: f.path,
        version: f.version,
        size: f.size,
        writtenByRun: f.writtenByRun,
        writtenAt: f.writtenAt,
      }));
      return { ok: true, value };
    }
    case 'write': {
      const written = await x.store.writeSharedFile({
        rootRunId: root,
        tenantId: x.run.tenantId,
        path: call.path,
        content: call.content,
        expectedVersion: call.expectedVersion,
        writtenByRun: x.runId,
        writeId: `${x.runId}.${seq}`,
      });
      if (written.ok) return { ok: true, value: { version: written.version } };
      const error = new KeelError(
        'conflict',
        `shared file ${JSON.stringify(call.path)} is at version ${written.currentVersion}, not ${call.expectedVersion}`,
        {
          details: {
            path: call.path,
            expectedVersion: call.expectedVersion,
            currentVersion: written.currentVersion,
          },
        },
      );
      return { ok: false, error: error.toJSON() };
    }
  }
}

/** What a journal entry records of a call (never a write's content: the artifact holds it). */
function journalArgs(root: string, call: SharedCall): Json {
  switch (call.op) {
    case 'read':
      return { rootRunId: root, path: call.path };
    case 'list':
      return { rootRunId: root, prefix: call.prefix };
    case 'write':
      return {
        rootRunId: root,
        path: call.path,
        expectedVersion: call.expectedVersion,
        size: new TextEncoder().encode(call.content).length,
      };
  }
}
