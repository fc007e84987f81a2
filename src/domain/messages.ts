// Messages between runs (issue 21): the envelope a message travels in, and where a run's messages
// are kept. A message is delivered into the run's inputs under a reserved key — the n-th message on
// a channel is `keel.message:<channel>:<n>` — so a receive is a durable input wait (it parks and
// wakes the run exactly as ctx.waitForInput does); its id is kept under `keel.message-id:<id>`, so
// a second delivery of the same id (a retried POST, a replayed ctx.send) delivers nothing.
import type { Json } from './json.ts';

export const MESSAGE_CHANNEL_MAX_CHARS = 100;
/** A channel name may not hold `:` (it separates a message key's channel from its index). */
export const MESSAGE_CHANNEL_FORBIDDEN = ':';

export function isChannelName(channel: unknown): channel is string {
  return (
    typeof channel === 'string' &&
    channel.length > 0 &&
    channel.length <= MESSAGE_CHANNEL_MAX_CHARS &&
    !channel.includes(MESSAGE_CHANNEL_FORBIDDEN)
  );
}
export const MESSAGE_ID_MAX_CHARS = 200;
/** The longest time-to-live a message may have: 30 days. */
export const MESSAGE_TTL_MAX_MS = 30 * 24 * 3_600_000;
/** Input keys with this prefix belong to messages: an input post or wait may not name them. */
export const MESSAGE_KEY_PREFIX = 'keel.message';

/** A delivered message: its envelope and payload (what ctx.receive returns). */
export interface MessageEnvelope<T extends Json = Json> {
  id: string;
  channel: string;
  /** The sending run's id, or null for a message posted through the API. */
  from: string | null;
  correlationId: string | null;
  /** When it was delivered (epoch ms). */
  sentAt: number;
  /** When it expires unreceived (epoch ms), or null. A receive skips an expired message. */
  expiresAt: number | null;
  /** Its place on its channel (1, 2, …): the order receives take messages in. */
  index: number;
  payload: T;
}

export interface MessagePost {
  channel: string;
  id: string;
  payload: Json;
  from: string | null;
  correlationId?: string | null | undefined;
  ttlMs?: number | null | undefined;
}

export interface MessageDelivery {
  id: string;
  channel: string;
  index: number;
  /** The id had been delivered before: nothing was delivered this time. */
  duplicate: boolean;
}

/** The input key of the `index`-th message on `channel`. */
export function messageKey(channel: string, index: number): string {
  return `${channelKeyPrefix(channel)}${index}`;
}

/** What the input keys of a channel's messages start with. */
export function channelKeyPrefix(channel: string): string {
  return `${MESSAGE_KEY_PREFIX}:${channel}:`;
}

/** The input key that records a delivered message id. */
export function messageIdKey(id: string): string {
  return `${MESSAGE_KEY_PREFIX}-id:${id}`;
}

export function isMessageKey(key: string): boolean {
  return key.startsWith(MESSAGE_KEY_PREFIX);
}
