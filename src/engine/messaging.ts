// ctx.send and ctx.receive, the parts the main thread's ctx and an isolate's share: the checks made
// before a position is taken, and the receive loop. A receive is a durable input wait on the
// channel's next message key (domain/messages.ts), so it parks and wakes the run exactly as
// ctx.waitForInput does; an expired message is taken and skipped. It never touches the store (the
// send effect, message-send.ts, does).
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import {
  isChannelName,
  MESSAGE_CHANNEL_FORBIDDEN,
  MESSAGE_CHANNEL_MAX_CHARS,
  MESSAGE_ID_MAX_CHARS,
  MESSAGE_TTL_MAX_MS,
  messageKey,
} from '../domain/messages.ts';
import type { Json, ReceivedMessage, SendOptions } from '../sdk/types.ts';

export function checkChannel(method: string, channel: unknown): void {
  if (!isChannelName(channel))
    throw new TypeError(
      `ctx.${method}() channel must be a string of 1 to ${MESSAGE_CHANNEL_MAX_CHARS} characters without ${JSON.stringify(MESSAGE_CHANNEL_FORBIDDEN)}`,
    );
}

export function checkSend(
  runId: unknown,
  channel: unknown,
  options: SendOptions | undefined,
): void {
  if (typeof runId !== 'string' || runId.length === 0)
    throw new TypeError('ctx.send() expects the receiving run id');
  checkChannel('send', channel);
  for (const field of ['id', 'correlationId'] as const) {
    const v = options?.[field];
    if (
      v !== undefined &&
      (typeof v !== 'string' || v.length === 0 || v.length > MESSAGE_ID_MAX_CHARS)
    )
      throw new TypeError(
        `ctx.send() ${field} must be a string of 1 to ${MESSAGE_ID_MAX_CHARS} characters`,
      );
  }
  const ttl = options?.ttlMs;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1 || ttl > MESSAGE_TTL_MAX_MS))
    throw new TypeError(`ctx.send() ttlMs must be an integer from 1 to ${MESSAGE_TTL_MAX_MS}`);
}

export function checkReceiveTimeout(timeoutMs: unknown): void {
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0)
  )
    throw new TypeError('ctx.receive() timeoutMs must be a non-negative number');
}

/**
 * Counts the receives a run has made on each channel: the n-th takes the channel's n-th message.
 * Counted in code order, so a replay takes the same messages.
 */
export class ChannelCursors {
  readonly #taken = new Map<string, number>();

  next(channel: string): string {
    const n = (this.#taken.get(channel) ?? 0) + 1;
    this.#taken.set(channel, n);
    return messageKey(channel, n);
  }

  /** The receives taken per channel (a checkpoint keeps them). */
  counts(): Record<string, number> {
    return Object.fromEntries(this.#taken);
  }

  /** Continues from `counts()` (a resume from a checkpoint). */
  restore(counts: Readonly<Record<string, number>>): void {
    for (const [channel, n] of Object.entries(counts)) this.#taken.set(channel, n);
  }
}

/**
 * The next unexpired message on `channel`. `wait` is the durable input wait for a key (it takes
 * its own journal position); `now` is ctx.now() (journaled, so an expiry is judged the same way on
 * replay).
 */
export async function receiveNext(
  channel: string,
  timeoutMs: number | undefined,
  cursors: ChannelCursors,
  wait: (key: string, timeoutMs: number | undefined) => Promise<Json>,
  now: () => number,
): Promise<ReceivedMessage> {
  for (;;) {
    const key = cursors.next(channel);
    let envelope: ReceivedMessage;
    try {
      envelope = (await wait(key, timeoutMs)) as unknown as ReceivedMessage;
    } catch (error) {
      if (isKeelError(error) && error.code === 'input_timeout')
        throw new KeelError(
          'message_timeout',
          `no message arrived on channel ${JSON.stringify(channel)} within its timeout`,
          { details: { channel } },
        );
      throw error;
    }
    if (envelope.expiresAt === null || envelope.expiresAt > now()) return envelope;
  }
}
