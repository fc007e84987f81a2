// Hears other processes' changes through LISTEN on one dedicated connection, and reconnects with
// jittered backoff when the database goes away. A lost notification costs latency only: workers
// also poll.
import pg from 'pg';
import type { RunChange } from '../store.ts';

export const LISTEN_RECONNECT_MIN_MS = 200;
export const LISTEN_RECONNECT_MAX_MS = 5_000;

export class ChangeListener {
  readonly #connectionString: string;
  readonly #origin: string;
  readonly #channel: string;
  readonly #emit: (changes: readonly RunChange[]) => void;
  #client: pg.Client | undefined;
  #closed = false;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    connectionString: string,
    origin: string,
    channel: string,
    emit: (changes: readonly RunChange[]) => void,
  ) {
    this.#connectionString = connectionString;
    this.#origin = origin;
    this.#channel = channel;
    this.#emit = emit;
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
      if (message.channel !== this.#channel || message.payload === undefined) return;
      try {
        const { origin, changes } = JSON.parse(message.payload) as {
          origin: string;
          changes: RunChange[];
        };
        if (origin !== this.#origin) this.#emit(changes);
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
      await client.query(`LISTEN ${this.#channel}`);
      this.#client = client;
      this.#attempt = 0;
      // Whatever happened while disconnected was not heard: tell listeners to look (a claim round,
      // SSE re-reads).
      this.#emit([{ runId: '*', signal: 'runnable' }]);
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
