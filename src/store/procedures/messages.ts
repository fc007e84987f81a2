// Delivers a message into a run (both stores): under the run's row lock, a duplicate id delivers
// nothing; otherwise the envelope becomes the channel's next message input, a `message.delivered`
// event is appended, and the run is queued if it waits for exactly that message. It never decides
// who may message whom (the API and the engine check the tenant first).
import { KeelError } from '../../domain/keel-error.ts';
import {
  channelKeyPrefix,
  messageIdKey,
  messageKey,
  type MessageDelivery,
  type MessageEnvelope,
  type MessagePost,
} from '../../domain/messages.ts';
import { isTerminal } from '../../domain/run-status.ts';
import type { EventWrite } from '../store.ts';
import { appendEvents, lockRun } from './runs.ts';
import { one, type Procedure, type Tx } from './transaction.ts';

export function* postMessage(tx: Tx, runId: string, post: MessagePost): Procedure<MessageDelivery> {
  const current = yield* lockRun(runId);
  const seen = yield* one('get-input', { run_id: runId, key: messageIdKey(post.id) });
  if (seen !== undefined) {
    const first = JSON.parse(seen.value as string) as { channel: string; index: number };
    return { id: post.id, channel: first.channel, index: first.index, duplicate: true };
  }
  if (isTerminal(current.status))
    throw new KeelError('run_terminal', `run ${runId} has already ${current.status}`);
  const count = yield* one('count-inputs-with-prefix', {
    run_id: runId,
    prefix: channelKeyPrefix(post.channel),
  });
  const index = Number(count?.n ?? 0) + 1;
  const envelope: MessageEnvelope = {
    id: post.id,
    channel: post.channel,
    from: post.from,
    correlationId: post.correlationId ?? null,
    sentAt: tx.now,
    expiresAt: post.ttlMs === undefined || post.ttlMs === null ? null : tx.now + post.ttlMs,
    index,
    payload: post.payload,
  };
  const key = messageKey(post.channel, index);
  const values = [
    { key, value: envelope },
    { key: messageIdKey(post.id), value: { channel: post.channel, index } },
  ];
  for (const v of values)
    yield* one('insert-input', {
      run_id: runId,
      key: v.key,
      value: JSON.stringify(v.value),
      now: tx.now,
    });
  const events: EventWrite[] = [
    {
      type: 'message.delivered',
      data: {
        id: post.id,
        channel: post.channel,
        index,
        from: post.from,
        correlationId: envelope.correlationId,
      },
    },
  ];
  if ((yield* one('wake-on-input', { id: runId, key, now: tx.now })) !== undefined) {
    events.push({ type: 'run.queued', data: { reason: 'message', channel: post.channel } });
    tx.touch(runId, 'runnable');
  }
  yield* appendEvents(tx, runId, events);
  return { id: post.id, channel: post.channel, index, duplicate: false };
}
