// The live-event relay on Postgres (LiveRelay, src/domain/live-events.ts): processes sharing a
// database pass `model.delta` and `tool.output` events of the runs someone follows through
// NOTIFY, so a follower connected to one process sees the live output of a run another process
// executes. Only runs followed elsewhere cost anything: a follower announces each run it follows on
// `keel_live_follow` (again every FOLLOW_RENEW_MS while it does; an announcement lapses after three
// renewals missed), and a process sends a run's events on `keel_live` only while an announcement
// of it stands. Events of one run are gathered for FLUSH_MS and sent in as few notifications as
// the 8000-byte payload limit allows; a tool output piece too large for one is cut in pieces.
// Nothing is retried: a lost notification costs a follower a piece of live output, never a
// committed event.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { LiveEvent, LiveRelay } from '../../domain/live-events.ts';
import { NotificationListener } from './notification-listener.ts';

const EVENTS_CHANNEL = 'keel_live';
const FOLLOW_CHANNEL = 'keel_live_follow';
/** How often a follower renews its announcements. */
export const FOLLOW_RENEW_MS = 5_000;
/** An announcement stands this long after it was last renewed. */
const FOLLOW_LAPSE_MS = 3 * FOLLOW_RENEW_MS;
/** How long a run's events are gathered before they are sent. */
const FLUSH_MS = 20;
/** The longest `settled` waits for the notifications before it to go out. */
const SETTLE_MAX_MS = 1_000;
/** Payload bytes per notification, under Postgres's 8000-byte limit with room for the envelope. */
const PAYLOAD_MAX_BYTES = 7_000;

interface EventsMessage {
  o: string;
  r: string;
  e: LiveEvent[];
}

interface FollowMessage {
  o: string;
  runs: string[];
}

export class PostgresLiveRelay implements LiveRelay {
  readonly #origin = randomUUID();
  readonly #pool: pg.Pool;
  readonly #listener: NotificationListener;
  readonly #handlers: Array<(runId: string, event: LiveEvent) => void> = [];
  /** Runs this process follows, with how many followers. */
  readonly #following = new Map<string, number>();
  /** Runs other processes follow, with when their announcement lapses. */
  readonly #followedElsewhere = new Map<string, number>();
  /** Events waiting for the next flush, per run. */
  readonly #pending = new Map<string, LiveEvent[]>();
  #flushTimer: NodeJS.Timeout | undefined;
  #sending: Promise<void> = Promise.resolve();
  readonly #renewTimer: NodeJS.Timeout;

  constructor(connectionString: string) {
    this.#pool = new pg.Pool({ connectionString, max: 1 });
    this.#pool.on('error', () => {});
    this.#listener = new NotificationListener(connectionString, [EVENTS_CHANNEL, FOLLOW_CHANNEL], {
      onNotification: (channel, payload) => this.#heard(channel, payload),
      // Announcements sent while disconnected were not heard: announce ours again.
      onConnected: () => this.#announce([...this.#following.keys()]),
    });
    this.#renewTimer = setInterval(
      () => this.#announce([...this.#following.keys()]),
      FOLLOW_RENEW_MS,
    );
    this.#renewTimer.unref();
  }

  start(): Promise<void> {
    return this.#listener.start();
  }

  follow(runId: string): () => void {
    const count = this.#following.get(runId) ?? 0;
    this.#following.set(runId, count + 1);
    if (count === 0) this.#announce([runId]);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.#following.get(runId) ?? 1) - 1;
      if (left > 0) this.#following.set(runId, left);
      else this.#following.delete(runId);
    };
  }

  followedElsewhere(runId: string): boolean {
    const lapses = this.#followedElsewhere.get(runId);
    if (lapses === undefined) return false;
    if (lapses > Date.now()) return true;
    this.#followedElsewhere.delete(runId);
    return false;
  }

  send(runId: string, event: LiveEvent): void {
    const pending = this.#pending.get(runId);
    if (pending === undefined) this.#pending.set(runId, [event]);
    else pending.push(event);
    this.#flushTimer ??= setTimeout(() => this.#flush(), FLUSH_MS);
  }

  async settled(runId: string): Promise<void> {
    const pending = this.#pending.get(runId);
    if (pending !== undefined) {
      this.#pending.delete(runId);
      this.#sendEvents(runId, pending);
    }
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#sending,
      new Promise<void>((resolve) => {
        bound = setTimeout(resolve, SETTLE_MAX_MS);
      }),
    ]);
    clearTimeout(bound);
  }

  onEvent(handler: (runId: string, event: LiveEvent) => void): void {
    this.#handlers.push(handler);
  }

  async close(): Promise<void> {
    clearInterval(this.#renewTimer);
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    await this.#sending;
    await this.#listener.close();
    await this.#pool.end().catch(() => {});
  }

  #heard(channel: string, payload: string): void {
    if (channel === FOLLOW_CHANNEL) {
      const message = JSON.parse(payload) as FollowMessage;
      if (message.o === this.#origin) return;
      const lapses = Date.now() + FOLLOW_LAPSE_MS;
      for (const runId of message.runs) this.#followedElsewhere.set(runId, lapses);
      return;
    }
    const message = JSON.parse(payload) as EventsMessage;
    if (message.o === this.#origin) return;
    for (const event of message.e) for (const handler of this.#handlers) handler(message.r, event);
  }

  #announce(runs: string[]): void {
    for (const chunk of packed(runs, (batch) => JSON.stringify({ o: this.#origin, runs: batch })))
      this.#notify(FOLLOW_CHANNEL, chunk);
  }

  #flush(): void {
    this.#flushTimer = undefined;
    for (const [runId, events] of this.#pending) this.#sendEvents(runId, events);
    this.#pending.clear();
  }

  #sendEvents(runId: string, events: LiveEvent[]): void {
    const pieces = events.flatMap((event) => fitting(event));
    for (const chunk of packed(pieces, (batch) =>
      JSON.stringify({ o: this.#origin, r: runId, e: batch }),
    ))
      this.#notify(EVENTS_CHANNEL, chunk);
  }

  /** One notification at a time, so they arrive in the order sent (a run's pieces in sequence). */
  #notify(channel: string, payload: string): void {
    this.#sending = this.#sending
      .then(() => this.#pool.query('SELECT pg_notify($1, $2)', [channel, payload]))
      .then(
        () => undefined,
        () => undefined,
      );
  }
}

/**
 * The payloads `encode` makes of `items`, as few as fit PAYLOAD_MAX_BYTES each (an item alone over
 * it is dropped: `fitting` cuts events beforehand).
 */
function packed<T>(items: T[], encode: (batch: T[]) => string): string[] {
  const payloads: string[] = [];
  let batch: T[] = [];
  for (const item of items) {
    const attempt = encode([...batch, item]);
    if (Buffer.byteLength(attempt) <= PAYLOAD_MAX_BYTES) {
      batch.push(item);
      continue;
    }
    if (batch.length > 0) payloads.push(encode(batch));
    batch = Buffer.byteLength(encode([item])) <= PAYLOAD_MAX_BYTES ? [item] : [];
  }
  if (batch.length > 0) payloads.push(encode(batch));
  return payloads;
}

/** An event cut so that each piece fits a notification: a long `text` in consecutive pieces. */
function fitting(event: LiveEvent): LiveEvent[] {
  const text = event.data.text;
  if (
    Buffer.byteLength(JSON.stringify(event)) <= PAYLOAD_MAX_BYTES - 200 ||
    typeof text !== 'string'
  )
    return [event];
  if (event.type !== 'tool.output') return []; // a model delta is a token or a few: never this large
  const half = Math.ceil(text.length / 2);
  return [text.slice(0, half), text.slice(half)].flatMap((part) =>
    fitting({ type: event.type, data: { ...event.data, text: part } }),
  );
}
