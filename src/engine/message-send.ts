// The ctx.send effect on the main thread (for the in-thread ctx and isolates alike): delivers the
// message into the receiving run with an id that is the same on every replay (the receiver's store
// drops a second delivery), then journals the send. A crash between the delivery and the commit
// replays the send, and the receiver gets it once. Only runs of the sender's tenant can be reached.
import { crashPoint } from '../domain/crash-points.ts';
import {
  KeelError,
  deserializeError,
  isKeelError,
  type SerializedError,
} from '../domain/keel-error.ts';
import type { MessageDelivery } from '../domain/messages.ts';
import type { Json, SendOptions } from '../sdk/types.ts';
import type { Position, RunPort } from './run-port.ts';

/** Receiver errors a send journals as its failure (anything else is the store failing: retried). */
const SEND_FAILURES = new Set(['run_not_found', 'run_terminal']);

export async function sendMessage(
  x: RunPort,
  { seq, entry }: Position,
  to: string,
  channel: string,
  payload: Json,
  options: SendOptions | undefined,
): Promise<Json> {
  if (entry !== undefined && entry.status === 'succeeded') return entry.result;
  if (entry !== undefined && entry.status === 'failed')
    throw deserializeError(
      entry.error ?? { code: 'internal', message: 'failed send without error' },
    );
  const id = options?.id ?? `${x.runId}.${seq}`;
  return x.track('message', async () => {
    const startedAt = x.clock.now();
    let outcome: { ok: true; delivery: MessageDelivery } | { ok: false; error: SerializedError };
    try {
      const target = await x.store.getRun(to);
      if (target === null || target.tenantId !== x.run.tenantId)
        throw new KeelError('run_not_found', `run ${to} not found`);
      const delivery = await x.store.postMessage(to, {
        channel,
        id,
        payload,
        from: x.runId,
        correlationId: options?.correlationId ?? null,
        ttlMs: options?.ttlMs ?? null,
      });
      outcome = { ok: true, delivery };
    } catch (error) {
      if (!isKeelError(error) || !SEND_FAILURES.has(error.code)) throw error;
      outcome = { ok: false, error: error.toJSON() };
    }
    crashPoint('execute.before-commit');
    const result: Json = outcome.ok
      ? { id, index: outcome.delivery.index, duplicate: outcome.delivery.duplicate }
      : null;
    await x.commit({
      journal: [
        {
          seq,
          kind: 'message',
          name: channel,
          status: outcome.ok ? 'succeeded' : 'failed',
          args: { to, id },
          ...(outcome.ok ? { result } : { error: outcome.error }),
          queuedAt: startedAt,
          startedAt,
          endedAt: x.clock.now(),
        },
      ],
      events: [
        {
          type: 'message.sent',
          data: {
            seq,
            to,
            id,
            channel,
            status: outcome.ok ? 'succeeded' : 'failed',
            ...(outcome.ok
              ? { index: outcome.delivery.index, duplicate: outcome.delivery.duplicate }
              : { code: outcome.error.code }),
          },
        },
      ],
    });
    if (!outcome.ok) throw deserializeError(outcome.error);
    return result;
  });
}
