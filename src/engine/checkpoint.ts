// ctx.checkpoint's effect (both the in-thread ctx and calls from an isolate): journals a snapshot of
// the agent's state and of the replay state kept outside the journal, in one commit of its own. A
// resume then re-enters the agent from the latest snapshot and never replays what lies before it.
// It must never take a snapshot while an earlier effect is unsettled: a resume would lose it.
import { KeelError } from '../domain/keel-error.ts';
import type { Json } from '../domain/json.ts';
import {
  CHECKPOINT_NAME,
  CHECKPOINT_STATE_MAX_BYTES,
  snapshotResult,
  type ReplayState,
} from '../domain/run-snapshot.ts';
import { toJson } from './journal-cursor.ts';
import type { Position, RunPort } from './run-port.ts';

/** The replay state the caller's ctx holds (its generator, its channel cursors). */
export type CtxReplayState = Omit<ReplayState, 'retriesSpent'>;

/** Validates a checkpoint's state before a position is taken (the same way on every replay). */
export function checkCheckpointState(state: unknown): { json: Json; bytes: number } {
  const text = JSON.stringify(state ?? null);
  if (text === undefined) throw new TypeError('ctx.checkpoint() state must be JSON');
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > CHECKPOINT_STATE_MAX_BYTES)
    throw new TypeError(
      `ctx.checkpoint() state is ${bytes} bytes; at most ${CHECKPOINT_STATE_MAX_BYTES} are allowed (it is loaded on every resume)`,
    );
  return { json: toJson(state), bytes };
}

export async function checkpoint(
  x: RunPort,
  { seq, entry }: Position,
  state: { json: Json; bytes: number },
  replay: CtxReplayState,
): Promise<void> {
  if (entry !== undefined) return; // journaled already: replay past it (same kind, checked by positionAt)
  const open = x.unsettledBefore(seq);
  if (open.length > 0) {
    const error = new KeelError(
      'checkpoint_unsettled',
      `ctx.checkpoint() at position ${seq} while positions ${open.slice(0, 10).join(', ')} are still pending: await every earlier ctx call before a checkpoint (a resume from it would lose them)`,
      { details: { position: seq, pending: open.slice(0, 100) } },
    );
    x.stop({ kind: 'fail', error });
    throw error;
  }
  await x.track('checkpoint', async () => {
    const at = x.clock.now();
    await x.commit({
      journal: [
        {
          seq,
          kind: 'checkpoint',
          name: CHECKPOINT_NAME,
          status: 'succeeded',
          result: snapshotResult(state.json, { ...replay, retriesSpent: x.retriesSpent }),
          queuedAt: at,
          startedAt: at,
          endedAt: at,
        },
      ],
      events: [{ type: 'run.checkpointed', data: { seq, bytes: state.bytes } }],
    });
  });
}
