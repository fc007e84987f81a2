// LISTEN on a dedicated connection for one or more channels, reconnecting with jittered backoff
// when the database goes away. What a payload means is the caller's: the change feed
// (change-listener.ts) and the live-event relay (live-relay.ts) both listen through it. A
// notification sent while disconnected is lost; `onConnected` tells the caller to catch up.
import pg from 'pg';

export const LISTEN_RECONNECT_MIN_MS = 200;
export const LISTEN_RECONNECT_MAX_MS = 5_000;

export interface NotificationHandlers {
  onNotification(channel: string, payload: string): void;
  /** Connected (again): whatever was sent meanwhile was not heard. */
  onConnected?(): void;
}

export class NotificationListener {
  readonly #connectionString: string;
  readonly #channels: readonly string[];
  readonly #handlers: NotificationHandlers;
  #client: pg.Client | undefined;
  #closed = false;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    connectionString: string,
    channels: readonly string[],
    handlers: NotificationHandlers,
  ) {
    this.#connectionString = connectionString;
    this.#channels = channels;
    this.#handlers = handlers;
  }

  get connected(): boolean {
    return this.#client !== undefined;
  }

  async start(): Promise<void> {
    await this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#connectionString });
    client.on('notification', (message) => {
      if (!this.#channels.includes(message.channel) || message.payload === undefined) return;
      try {
        this.#handlers.onNotification(message.channel, message.payload);
      } catch {
        // A payload we did not write: ignore it rather than crash the listener.
      }
    });
    const lost = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      for (const channel of this.#channels) await client.query(`LISTEN ${channel}`);
      if (this.#closed) {
        await client.end().catch(() => {});
        return;
      }
      this.#client = client;
      this.#attempt = 0;
      this.#handlers.onConnected?.();
    } catch {
      await client.end().catch(() => {});
      this.#scheduleReconnect();
    }
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    const cap = Math.min(LISTEN_RECONNECT_MAX_MS, LISTEN_RECONNECT_MIN_MS * 2 ** this.#attempt++);
    this.#timer = setTimeout(() => void this.#connect(), Math.random() * cap);
    this.#timer.unref();
  }
}
